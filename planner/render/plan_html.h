// The plan as one self-contained, offline HTML page: summary on top, an address × step chart
// with the bytes live at each step plotted under it (canvas, drawn on load; zoom and pan both
// axes, search by tensor or op name, hover for details, click to pin them), the peak step
// marked and its live tensors listed. `page.html#selftest` runs the page's self-test
// (plan_html_assets.h).
//
// Pure function of the plan; thread-safe. The page fetches nothing: CSS, script and the plan data
// (JSON, with every '<' escaped so a tensor name cannot close the script) are all inline.
//
//   PlanHtmlOptions options;
//   options.title = "resnet18";
//   write_file("plan.html", render_plan_html(plan, options));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/plan.h"
#include "planner/render/plan_geometry.h"  // PlanPeak, plan_step_count

namespace onepool {

struct PlanHtmlOptions {
  std::string title = "memory plan";  ///< page title and heading: usually the model's name
  std::string source;                 ///< where the plan came from (a path), shown under the title
};

/// The whole page.
std::string render_plan_html(const Plan& plan, const PlanHtmlOptions& options);

}  // namespace onepool
