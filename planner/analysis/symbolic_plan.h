// SymbolicPlan: a placement's structure, re-evaluated for new sizes without placing again.
//
// A placement fixes, for every two records live at a common step, which one lies below the
// other. Keeping only that order, a record's offset becomes an expression in the sizes:
//
//   offset(t) = max over t' in below(t) of (offset(t') + bytes(t')),  0 when below(t) is empty
//
// where below(t) holds the records that share a step with t and come before it in the source
// placement's address order (lower offset; ties: empty records first, then lower index). The
// expressions are max/+ trees evaluated in that order:
//  - valid for ANY sizes: every pair live at a common step keeps its order and the upper one
//    starts at or above the lower one's end, so no two live records overlap;
//  - equal to the source offsets at the source sizes when every record of the source sits at 0
//    or on top of a record below it (what best-fit and the exact search produce);
//    exact_at_source() says whether that holds;
//  - cheap: O(records + pairs live at a common step), microseconds for a model's plan, where
//    placing again costs milliseconds.
// The sizes themselves come from elsewhere (for a model, shape inference of the concrete
// shape): the expressions only say where each size goes.
//
// Immutable after build; thread-safe to share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "onepool/plan.h"
#include "onepool/status.h"
#include "planner/algo/algorithms.h"

namespace onepool {

class SymbolicPlan {
 public:
  /// Pairs live at a common step that build() accepts; above it build() fails (the caller
  /// places each new size set instead). 4M pairs: 32 MB of int32 pairs at build time.
  static constexpr size_t kMaxPairs = size_t{1} << 22;

  /// The structure of `records` placed at `offsets` (one per record; a valid placement is not
  /// required for validity of the result, only for exact_at_source()). Errors: lengths differ,
  /// first > last, alignment not a power of two, more than kMaxPairs pairs.
  static Expected<SymbolicPlan> build(std::span<const UsageRecord> records,
                                      std::span<const size_t> offsets, size_t alignment);
  /// The structure of a plan's owning tensors (aliases excluded: they follow their owner).
  /// Record k is plan.tensors[plan_tensor(k)].
  static Expected<SymbolicPlan> from_plan(const Plan& plan);

  /// Offsets for new sizes, one per record in build order (rounded up to the alignment).
  /// Errors: wrong count, a size or the pool that overflows.
  Expected<Placement> evaluate(std::span<const size_t> bytes) const;

  size_t record_count() const { return order_.size(); }
  /// Pairs of records live at a common step: the terms of all expressions together.
  size_t pair_count() const { return below_.size(); }
  /// Whether evaluating at the source sizes gives back the source offsets.
  bool exact_at_source() const { return exact_at_source_; }
  /// The index in the source plan's tensors of record `k` (from_plan() only; else k).
  int32_t plan_tensor(size_t k) const {
    return k < plan_tensor_.size() ? plan_tensor_[k] : static_cast<int32_t>(k);
  }

 private:
  size_t alignment_ = 1;
  std::vector<int32_t> order_;        // records in evaluation (address) order
  std::vector<size_t> below_begin_;   // per position in order_, into below_; size n + 1
  std::vector<int32_t> below_;        // record indices below order_[p], for every p
  std::vector<int32_t> plan_tensor_;  // record → plan tensor index (from_plan)
  bool exact_at_source_ = false;
};

}  // namespace onepool
