#include "runtime/dashboard/dashboard_page.hpp"

extern "C" const char kv_live_script[];    // assets/live.js (dashboard_assets.S)
extern "C" const char kv_report_script[];  // assets/report.js (dashboard_assets.S)

namespace kevolve::dashboard {
namespace {

// The live page's own part: views (searches, one search, devices) by the address's #fragment, controls,
// and the event stream (short polling when it fails).
const char* live_script() { return kv_live_script; }  // assets/live.js

// '<' inside JSON only occurs in strings: written as \u003c, no "</script>" can end the block early.
std::string script_safe(const std::string& json) {
  std::string o;
  o.reserve(json.size());
  for (char c : json)
    if (c == '<')
      o += "\\u003c";
    else
      o += c;
  return o;
}

std::string escape_html(const std::string& s) {
  std::string o;
  for (char c : s) switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  return o;
}

// The report's own part: the top table and the view over the embedded data.
const char* report_script() { return kv_report_script; }  // assets/report.js

}  // namespace

const std::string& dashboard_page() {
  static const std::string page = std::string(
                                      "<!doctype html><html><head><meta charset='utf-8'><title>kevolve</title>"
                                      "<meta name='viewport' content='width=device-width'><style>") +
                                  view_style() +
                                  "</style></head><body><header><a href='#/'>kevolve</a><a href='#/'>searches</a>"
                                  "<a href='#/devices'>devices</a><span id='live' class='kv-muted'></span></header>"
                                  "<main id='main'>loading...</main><script>" +
                                  chart_library() + "</script><script>" + tree_library() + "</script><script>" +
                                  view_script() + "</script><script>" + live_script() + "</script></body></html>\n";
  return page;
}

std::string report_page(const std::string& title, const std::string& summary, const std::string& data) {
  return "<!doctype html><html><head><meta charset='utf-8'><title>" + escape_html(title) +
         "</title><meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src "
         "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\"><style>" +
         view_style() + "</style></head><body><header><b>" + escape_html(title) +
         "</b></header><main><pre id='summary'>" + escape_html(summary) +
         "</pre><h2>Top kernels (search-time figures)</h2><div id='top'></div><div id='view'>" +
         "</div></main><script type='application/json' id='kv-data'>" + script_safe(data) + "</script><script>" +
         chart_library() + "</script><script>" + tree_library() + "</script><script>" + view_script() +
         "</script><script>" + report_script() + "</script></body></html>\n";
}

}  // namespace kevolve::dashboard
