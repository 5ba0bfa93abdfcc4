// Workspace growth (see workspace_growth.h).
#include "planner/analysis/workspace_growth.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace onepool {
namespace {

struct Gap {
  size_t offset = 0;
  size_t bytes = 0;
};

// The largest free gap of `step` in [0, pool) among the owners live then, except `skip`.
Gap largest_free_gap(const Plan& plan, size_t skip, int64_t step) {
  std::vector<std::pair<size_t, size_t>> used;  // [begin, end)
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& tensor = plan.tensors[i];
    if (i == skip || tensor.alias_of >= 0 || tensor.bytes == 0) continue;
    if (tensor.first > step || tensor.last < step) continue;
    used.emplace_back(tensor.offset, tensor.offset + tensor.bytes);
  }
  std::sort(used.begin(), used.end());
  Gap best;
  size_t cursor = 0;
  const auto consider = [&](size_t end) {
    if (end > cursor && end - cursor > best.bytes) best = {cursor, end - cursor};
  };
  for (const auto& [begin, end] : used) {
    consider(begin);
    cursor = std::max(cursor, end);
  }
  consider(plan.pool_bytes);
  return best;
}

}  // namespace

void grow_workspaces(Plan& plan, std::span<const size_t> preferred_bytes) {
  const size_t alignment = std::max<size_t>(plan.alignment, 1);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    PlannedTensor& tensor = plan.tensors[i];
    const auto node = static_cast<size_t>(tensor.workspace_node);
    if (tensor.workspace_node < 0 || node >= preferred_bytes.size()) continue;
    if (preferred_bytes[node] <= tensor.bytes) continue;
    const Gap gap = largest_free_gap(plan, i, tensor.first);
    const size_t grown = std::min(gap.bytes, preferred_bytes[node]) / alignment * alignment;
    if (grown <= tensor.bytes) continue;
    tensor.offset = gap.offset;
    tensor.bytes = grown;
  }
}

}  // namespace onepool
