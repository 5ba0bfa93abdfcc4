// SymbolicPlan: build the below() lists once, evaluate them for each new size set.
#include "planner/analysis/symbolic_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

namespace onepool {

namespace {

bool is_power_of_two(size_t value) { return value != 0 && (value & (value - 1)) == 0; }

Status check_inputs(std::span<const UsageRecord> records, std::span<const size_t> offsets,
                    size_t alignment) {
  if (!is_power_of_two(alignment)) {
    return make_status(StatusCode::kInvalidArgument, "alignment ", alignment,
                       " is not a power of two");
  }
  if (records.size() != offsets.size()) {
    return make_status(StatusCode::kInvalidArgument, records.size(), " records but ",
                       offsets.size(), " offsets");
  }
  if (records.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return make_status(StatusCode::kOutOfRange, "too many records: ", records.size());
  }
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].first > records[i].last) {
      return make_status(StatusCode::kInvalidArgument, "record ", i, ": first step ",
                         records[i].first, " after last step ", records[i].last);
    }
  }
  return Status::ok();
}

// Every pair of records live at a common step, as (upper, lower) in address order: records
// sorted by first step; record i meets exactly the later-starting j with first_j <= last_i.
Expected<std::vector<std::pair<int32_t, int32_t>>> pairs_in_time(
    std::span<const UsageRecord> records, std::span<const int32_t> rank) {
  std::vector<int32_t> by_first(records.size());
  std::iota(by_first.begin(), by_first.end(), 0);
  std::stable_sort(by_first.begin(), by_first.end(),
                   [&](int32_t a, int32_t b) { return records[a].first < records[b].first; });
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (size_t i = 0; i < by_first.size(); ++i) {
    const UsageRecord& lower_start = records[by_first[i]];
    for (size_t j = i + 1; j < by_first.size(); ++j) {
      if (records[by_first[j]].first > lower_start.last) break;
      if (pairs.size() == SymbolicPlan::kMaxPairs) {
        return make_status(StatusCode::kResourceExhausted, "more than ", SymbolicPlan::kMaxPairs,
                           " pairs of records live at a common step: too many for a symbolic "
                           "plan");
      }
      const int32_t a = by_first[i];
      const int32_t b = by_first[j];
      pairs.emplace_back(rank[a] > rank[b] ? a : b, rank[a] > rank[b] ? b : a);
    }
  }
  return pairs;
}

}  // namespace

Expected<SymbolicPlan> SymbolicPlan::build(std::span<const UsageRecord> records,
                                           std::span<const size_t> offsets, size_t alignment) {
  ONEPOOL_RETURN_IF_ERROR(check_inputs(records, offsets, alignment));
  SymbolicPlan plan;
  plan.alignment_ = alignment;
  const size_t n = records.size();
  // Step 1. Address order: offset, then empty records (they end where they start), then index.
  plan.order_.resize(n);
  std::iota(plan.order_.begin(), plan.order_.end(), 0);
  std::sort(plan.order_.begin(), plan.order_.end(), [&](int32_t a, int32_t b) {
    const auto key = [&](int32_t i) {
      return std::make_tuple(offsets[i], records[i].bytes != 0, i);
    };
    return key(a) < key(b);
  });
  std::vector<int32_t> rank(n);
  for (size_t p = 0; p < n; ++p) rank[plan.order_[p]] = static_cast<int32_t>(p);
  // Step 2. below(t) for every t, as one array sliced by position in the order.
  ONEPOOL_ASSIGN_OR_RETURN(auto pairs, pairs_in_time(records, rank));
  plan.below_begin_.assign(n + 1, 0);
  for (const auto& [upper, lower] : pairs) ++plan.below_begin_[rank[upper] + 1];
  std::partial_sum(plan.below_begin_.begin(), plan.below_begin_.end(), plan.below_begin_.begin());
  plan.below_.resize(pairs.size());
  std::vector<size_t> fill(plan.below_begin_.begin(), plan.below_begin_.end() - 1);
  for (const auto& [upper, lower] : pairs) plan.below_[fill[rank[upper]]++] = lower;
  // Step 3. Exact at the source sizes?
  std::vector<size_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = records[i].bytes;
  Expected<Placement> again = plan.evaluate(bytes);
  plan.exact_at_source_ = again.has_value();
  for (size_t i = 0; i < n && plan.exact_at_source_; ++i) {
    plan.exact_at_source_ = records[i].bytes == 0 || again->offsets[i] == offsets[i];
  }
  return plan;
}

Expected<SymbolicPlan> SymbolicPlan::from_plan(const Plan& plan) {
  std::vector<UsageRecord> records;
  std::vector<size_t> offsets;
  std::vector<int32_t> plan_tensor;
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlannedTensor& tensor = plan.tensors[i];
    if (tensor.alias_of >= 0) continue;
    records.push_back(UsageRecord{tensor.first, tensor.last, tensor.bytes});
    offsets.push_back(tensor.offset);
    plan_tensor.push_back(static_cast<int32_t>(i));
  }
  ONEPOOL_ASSIGN_OR_RETURN(SymbolicPlan symbolic, build(records, offsets, plan.alignment));
  symbolic.plan_tensor_ = std::move(plan_tensor);
  return symbolic;
}

Expected<Placement> SymbolicPlan::evaluate(std::span<const size_t> bytes) const {
  const size_t n = order_.size();
  if (bytes.size() != n) {
    return make_status(StatusCode::kInvalidArgument, "symbolic plan of ", n, " records given ",
                       bytes.size(), " sizes");
  }
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  Placement placement;
  placement.offsets.assign(n, 0);
  std::vector<size_t> ends(n, 0);
  for (size_t p = 0; p < n; ++p) {
    const int32_t t = order_[p];
    size_t offset = 0;
    for (size_t e = below_begin_[p]; e < below_begin_[p + 1]; ++e) {
      offset = std::max(offset, ends[below_[e]]);
    }
    const size_t size = bytes[t];
    if (size > kMax - alignment_ ||
        offset > kMax - (size + alignment_ - 1) / alignment_ * alignment_) {
      return make_status(StatusCode::kOutOfRange, "record ", t, ": offset ", offset, " + ", size,
                         " bytes overflows");
    }
    const size_t aligned = (size + alignment_ - 1) / alignment_ * alignment_;
    placement.offsets[t] = offset;
    ends[t] = offset + aligned;
    placement.pool_bytes = std::max(placement.pool_bytes, ends[t]);
  }
  return placement;
}

}  // namespace onepool
