// Where a plan's tensors sit in time and address, for the renderers: the steps a chart spans,
// each tensor's address (aliases through their owners) and the peak step.
//
// Pure functions of the plan; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "onepool/plan.h"

namespace onepool {

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
}  // namespace onepool
