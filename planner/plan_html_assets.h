// The inline CSS and script of the HTML plan view (plan_html.h). Internal to the planner.
#pragma once

#include <string_view>

namespace onepool::plan_html {

/// The page's stylesheet, without the <style> tags.
std::string_view page_style();
/// The page's script, without the <script> tags. It reads the plan from the JSON element
/// `#plan-data` and draws the chart into `#chart` on load; `#tip` is the hover tooltip and
/// `#legend` the op colour key; `#overlay`, a canvas over the chart, shows the hovered tensor.
std::string_view page_script();

}  // namespace onepool::plan_html
