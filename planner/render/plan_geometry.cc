// Where a plan's tensors sit in time and address.
#include "planner/render/plan_geometry.h"

#include <algorithm>
#include <unordered_map>

namespace onepool {

namespace {

bool owns_storage(const PlannedTensor& tensor) { return tensor.alias_of < 0 && tensor.bytes > 0; }

std::unordered_map<int32_t, size_t> index_by_id(const Plan& plan) {
  std::unordered_map<int32_t, size_t> by_id;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    if (plan.tensors[i].id >= 0) by_id.emplace(plan.tensors[i].id, i);
  }
  return by_id;
}

}  // namespace

int64_t plan_step_count(const Plan& plan) {
  int64_t count = static_cast<int64_t>(plan.steps.size());
  for (const PlannedTensor& tensor : plan.tensors) count = std::max(count, tensor.last + 1);
  return count;
}

std::vector<size_t> plan_tensor_addresses(const Plan& plan) {
  const std::unordered_map<int32_t, size_t> by_id = index_by_id(plan);
  std::vector<size_t> addresses(plan.tensors.size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    size_t address = 0;
    size_t current = i;
    // At most one hop per tensor: a longer chain has a cycle.
    for (size_t hops = 0; hops <= plan.tensors.size(); ++hops) {
      const PlannedTensor& tensor = plan.tensors[current];
      if (tensor.alias_of < 0) {
        addresses[i] = address + tensor.offset;
        break;
      }
      const auto owner = by_id.find(tensor.alias_of);
      if (owner == by_id.end() || hops == plan.tensors.size()) {
        addresses[i] = plan.tensors[i].offset;
        break;
      }
      address += tensor.alias_offset;
      current = owner->second;
    }
  }
  return addresses;
}

PlanPeak find_plan_peak(const Plan& plan) {
  PlanPeak peak;
  const int64_t steps = plan_step_count(plan);
  if (steps <= 0) return peak;
  // Step 1. Bytes live per step, by a difference array over the owning tensors.
  std::vector<int64_t> delta(static_cast<size_t>(steps) + 1, 0);
  for (const PlannedTensor& tensor : plan.tensors) {
    if (!owns_storage(tensor) || tensor.last < tensor.first) continue;
    delta[static_cast<size_t>(std::clamp<int64_t>(tensor.first, 0, steps))] +=
        static_cast<int64_t>(tensor.bytes);
    delta[static_cast<size_t>(std::clamp<int64_t>(tensor.last + 1, 0, steps))] -=
        static_cast<int64_t>(tensor.bytes);
  }
  // Step 2. The first step with the most bytes live.
  int64_t live = 0;
  for (int64_t step = 0; step < steps; ++step) {
    live += delta[static_cast<size_t>(step)];
    if (live > static_cast<int64_t>(peak.live_bytes)) {
      peak.live_bytes = static_cast<size_t>(live);
      peak.step = step;
    }
  }
  // Step 3. Everything live there, by address.
  const std::vector<size_t> addresses = plan_tensor_addresses(plan);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& tensor = plan.tensors[i];
    if (tensor.first <= peak.step && peak.step <= tensor.last) peak.live_tensors.push_back(i);
  }
  std::stable_sort(peak.live_tensors.begin(), peak.live_tensors.end(),
                   [&](size_t a, size_t b) { return addresses[a] < addresses[b]; });
  return peak;
}

}  // namespace onepool
