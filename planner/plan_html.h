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

namespace onepool {

struct PlanHtmlOptions {
  std::string title = "memory plan";  ///< page title and heading: usually the model's name
  std::string source;                 ///< where the plan came from (a path), shown under the title
};

/// The step with the most bytes live (owning tensors only: an alias adds no storage) and the
/// indices into `plan.tensors` of every tensor live at it, aliases included, ordered by address.
struct PlanPeak {
  int64_t step = 0;
  size_t live_bytes = 0;
  std::vector<size_t> live_tensors;
};

/// The number of steps the chart spans: the plan's steps, or the largest last step + 1 for plans
/// built from bare records.
int64_t plan_step_count(const Plan& plan);
/// Where each tensor lives, indexed like `plan.tensors`: its own offset, or for an alias the
/// owner's address (following the chain) plus `alias_offset`. A broken or cyclic chain falls
/// back to the tensor's own offset.
std::vector<size_t> plan_tensor_addresses(const Plan& plan);
/// The peak step; step 0 with nothing live for an empty plan.
PlanPeak find_plan_peak(const Plan& plan);
/// The whole page.
std::string render_plan_html(const Plan& plan, const PlanHtmlOptions& options);

}  // namespace onepool
