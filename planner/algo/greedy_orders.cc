// The other greedy orders (see orders.h) and their algorithms. Every order is fed to the same
// best-fit engine (place_greedy_in_order); only the placement order differs.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "planner/algo/algorithms.h"
#include "planner/algo/orders.h"

namespace onepool {
namespace {

// Records with bytes > 0, ordered by `key` descending, ties by size desc, first asc, index.
template <class Key>
std::vector<int32_t> order_by(std::span<const UsageRecord> records, const Key& key) {
  std::vector<int32_t> order;
  std::vector<double> keys(records.size(), 0.0);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    order.push_back(static_cast<int32_t>(i));
    keys[i] = key(i);
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto ia = static_cast<size_t>(a);
    const auto ib = static_cast<size_t>(b);
    if (keys[ia] != keys[ib]) return keys[ia] > keys[ib];
    if (records[ia].bytes != records[ib].bytes) return records[ia].bytes > records[ib].bytes;
    if (records[ia].first != records[ib].first) return records[ia].first < records[ib].first;
    return a < b;
  });
  return order;
}

double lifetime(const UsageRecord& record) {
  return static_cast<double>(record.last - record.first + 1);
}

// Number of other records live at a common step, for every record: O(n log n) by counting
// records that start at or before its last step minus those that end before its first step.
std::vector<double> conflict_counts(std::span<const UsageRecord> records) {
  std::vector<int64_t> firsts;
  std::vector<int64_t> lasts;
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    firsts.push_back(record.first);
    lasts.push_back(record.last);
  }
  std::sort(firsts.begin(), firsts.end());
  std::sort(lasts.begin(), lasts.end());
  std::vector<double> counts(records.size(), 0.0);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    const auto started =
        std::upper_bound(firsts.begin(), firsts.end(), records[i].last) - firsts.begin();
    const auto ended =
        std::lower_bound(lasts.begin(), lasts.end(), records[i].first) - lasts.begin();
    counts[i] = static_cast<double>(started - ended - 1);
  }
  return counts;
}

// Bytes live at each of the distinct first/last steps (the breadth of the step), and the
// index of every record's first and last step among them.
struct Breadths {
  std::vector<size_t> bytes_at;  // per distinct step
  std::vector<size_t> lo;        // per record
  std::vector<size_t> hi;
};

Breadths breadths(std::span<const UsageRecord> records) {
  std::vector<int64_t> steps;
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    steps.push_back(record.first);
    steps.push_back(record.last);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  Breadths result{std::vector<size_t>(steps.size(), 0), std::vector<size_t>(records.size(), 0),
                  std::vector<size_t>(records.size(), 0)};
  std::vector<size_t> starting(steps.size() + 1, 0);
  std::vector<size_t> ending(steps.size() + 1, 0);
  auto index_of = [&](int64_t step) {
    return static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    result.lo[i] = index_of(records[i].first);
    result.hi[i] = index_of(records[i].last);
    starting[result.lo[i]] += records[i].bytes;
    ending[result.hi[i]] += records[i].bytes;
  }
  // check_records proved that the sum of all sizes fits in size_t, so no sum here overflows.
  size_t live = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    live += starting[k];
    result.bytes_at[k] = live;
    live -= ending[k];
  }
  return result;
}

// Range "widest step" queries over the distinct steps: widest = most bytes live, ties the
// earlier step. A bottom-up segment tree of step indices.
class WidestStep {
 public:
  explicit WidestStep(const std::vector<size_t>& bytes_at) : bytes_at_(bytes_at) {
    while (leaves_ < bytes_at.size()) leaves_ *= 2;
    tree_.assign(2 * leaves_, kNone);
    for (size_t k = 0; k < bytes_at.size(); ++k) tree_[leaves_ + k] = k;
    for (size_t node = leaves_ - 1; node >= 1; --node) {
      tree_[node] = wider(tree_[2 * node], tree_[2 * node + 1]);
    }
  }
  // The widest step among [lo, hi].
  size_t query(size_t lo, size_t hi) const {
    size_t best = kNone;
    for (size_t left = lo + leaves_, right = hi + leaves_ + 1; left < right;
         left /= 2, right /= 2) {
      if (left & 1) best = wider(best, tree_[left++]);
      if (right & 1) best = wider(best, tree_[--right]);
    }
    return best;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  size_t wider(size_t a, size_t b) const {
    if (a == kNone) return b;
    if (b == kNone) return a;
    if (bytes_at_[a] != bytes_at_[b]) return bytes_at_[a] > bytes_at_[b] ? a : b;
    return std::min(a, b);
  }
  const std::vector<size_t>& bytes_at_;
  size_t leaves_ = 1;
  std::vector<size_t> tree_;
};

}  // namespace

std::vector<int32_t> lifetime_order(std::span<const UsageRecord> records) {
  return order_by(records, [&](size_t i) { return lifetime(records[i]); });
}

std::vector<int32_t> area_order(std::span<const UsageRecord> records) {
  return order_by(records, [&](size_t i) {
    return static_cast<double>(records[i].bytes) * lifetime(records[i]);
  });
}

std::vector<int32_t> conflicts_order(std::span<const UsageRecord> records) {
  const std::vector<double> counts = conflict_counts(records);
  return order_by(records, [&](size_t i) { return counts[i]; });
}

// Visiting steps widest first and taking the records live there that are not yet ordered is
// the same as ordering every record by the widest step of its own lifetime (widest first, ties
// the earlier step), then by size: a record is first seen at the widest step it is live at.
std::vector<int32_t> breadth_order(std::span<const UsageRecord> records) {
  const Breadths widths = breadths(records);
  const WidestStep widest(widths.bytes_at);
  std::vector<size_t> step_of(records.size(), 0);
  std::vector<int32_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    step_of[i] = widest.query(widths.lo[i], widths.hi[i]);
    order.push_back(static_cast<int32_t>(i));
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto ia = static_cast<size_t>(a);
    const auto ib = static_cast<size_t>(b);
    const size_t width_a = widths.bytes_at[step_of[ia]];
    const size_t width_b = widths.bytes_at[step_of[ib]];
    if (width_a != width_b) return width_a > width_b;
    if (step_of[ia] != step_of[ib]) return step_of[ia] < step_of[ib];
    if (records[ia].bytes != records[ib].bytes) return records[ia].bytes > records[ib].bytes;
    if (records[ia].first != records[ib].first) return records[ia].first < records[ib].first;
    return a < b;
  });
  return order;
}

Expected<Placement> place_greedy_by_lifetime(std::span<const UsageRecord> records,
                                             const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, lifetime_order(records));
}

Expected<Placement> place_greedy_by_area(std::span<const UsageRecord> records,
                                         const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, area_order(records));
}

Expected<Placement> place_greedy_by_conflicts(std::span<const UsageRecord> records,
                                              const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, conflicts_order(records));
}

Expected<Placement> place_greedy_by_breadth(std::span<const UsageRecord> records,
                                            const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, breadth_order(records));
}

}  // namespace onepool
