// The search view shared by the live dashboard and report.html (see dashboard_page.hpp). Data is only
// ever inserted as text (textContent, SVG attributes), never as markup.
#include "runtime/dashboard/dashboard_page.hpp"

extern "C" const char kv_chart_js[];         // vendor_chart_js.S
extern "C" const char kv_d3_hierarchy_js[];  // vendor_d3_hierarchy_js.S
extern "C" const char kv_view_style[];       // assets/view.css (dashboard_assets.S)
extern "C" const char kv_view_script[];      // assets/view.js (dashboard_assets.S)

namespace kevolve::dashboard {

const char* chart_library() { return kv_chart_js; }
const char* tree_library() { return kv_d3_hierarchy_js; }

const char* view_style() { return kv_view_style; }  // assets/view.css

const char* view_script() { return kv_view_script; }  // assets/view.js

}  // namespace kevolve::dashboard
