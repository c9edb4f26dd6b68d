// The dashboard's page and the report's search view: self-contained HTML (inline script and style, no
// request to any other origin). Both draw a search with one script (dashboard_view_script.cpp): the
// best-so-far curve with axes, ticks and baselines and the failure mix (Chart.js), the search tree (zoom, pan, colour by
// status, ring on the best) and a node's details (verdict, timings, diff against its parent, source,
// diagnosis, profile, prompt and reply). The live page gets its data from the API (dashboard_api.hpp);
// the report embeds it.
#pragma once
#include <string>

namespace kevolve::dashboard {

// The live page served at "/".
const std::string& dashboard_page();

// report.html: `summary` as text above the view; `data` = {"search": <tree JSON>, "nodes": {"ID": <node JSON>},
// "top": [...]} (runtime/views/search_view.hpp).
std::string report_page(const std::string& title, const std::string& summary, const std::string& data);

// The view's script and style (shared by both pages), the charting library the script draws with (Chart.js,
// built into the binary: vendor_chart_js.S) and the library that lays out the search tree (d3-hierarchy:
// vendor_d3_hierarchy_js.S).
const char* view_script();
const char* view_style();
const char* chart_library();
const char* tree_library();

}  // namespace kevolve::dashboard
