// The inline CSS and script of the HTML plan view (plan_html.h). Internal to the planner.
//
// The script is one function scope assembled from three parts, each in its own file:
//   chart (plan_html_chart_js.cc)      data, colours, layout, labels, tensors, live-bytes curve
//   interaction (plan_html_view_js.cc) zoom, pan, reset, search, hover tooltip, pinned details
//   self-test (plan_html_selftest_js.cc) `page.html#selftest`: drives the page, reports JSON
// They share the scope's variables and functions, so each part may call the others.
#pragma once

#include <string>
#include <string_view>

namespace onepool::plan_html {

/// The page's stylesheet, without the <style> tags.
std::string_view page_style();
/// The page's script, without the <script> tags. It reads the plan from the JSON element
/// `#plan-data` and draws the chart and the live-bytes curve into `#chart` on load; `#overlay`,
/// a canvas over the chart, shows the hovered and pinned tensors; `#tip` is the hover tooltip,
/// `#pin` the pinned details, `#legend` the op colour key; `#search`, `#search-count` and
/// `#reset` are the toolbar. Opened as `page.html#selftest?q=QUERY&q=...` it runs the self-test
/// after drawing and writes its results as JSON into a new `<pre id="selftest">`.
std::string page_script();

/// The parts page_script() joins (each a list of declarations inside the shared scope).
std::string_view chart_script();
std::string_view view_script();
std::string_view selftest_script();

}  // namespace onepool::plan_html
