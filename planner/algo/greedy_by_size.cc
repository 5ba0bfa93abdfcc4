// `greedy-by-size`: greedy by size with best fit, as in TFLite's ArenaPlanner, XNNPACK and
// Pisarchyk & Lee 2020.
//
// Algorithm:
//  - Sort the records by size, largest first (ties: longer lifetime first, then lower first step,
//    then lower index), so the result is deterministic.
//  - Place each record in the smallest gap (lowest offset on ties) among the already placed
//    records that are live at some common step; when none fits, on top of the highest of them.
//    The engine (best_fit.cc) keeps placed records in address unions indexed by time.
//
// Cost: O(n log n) to sort, then per record about O(L log L) for the L records live at one step
// (see best_fit.cc). Not optimal: DSA is NP-complete. The lower bound (max bytes live at one
// step) is often reached on chains and CNNs, but a few huge tensors with staggered lifetimes can
// leave gaps no later record fits in.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "planner/algo/algorithms.h"
#include "planner/algo/orders.h"

namespace onepool {

namespace {

// Bits needed for values up to `value`.
int bit_width_of(uint64_t value) { return static_cast<int>(std::bit_width(value)); }

// The order's key packed in 64 bits, when it fits: (bytes descending, lifetime length
// descending, first step ascending), with sizes counted in units of their gcd. Sorting the keys
// stably keeps ties in index order, as the comparator of size_order() does.
struct PackedKeys {
  bool fits = false;
  std::vector<uint64_t> keys;  // per record in `order`
};

PackedKeys pack_size_keys(std::span<const UsageRecord> records, std::span<const int32_t> order) {
  PackedKeys packed;
  if (order.empty()) return packed;
  size_t unit = 0;
  size_t max_bytes = 0;
  uint64_t max_length = 0;
  int64_t min_first = std::numeric_limits<int64_t>::max();
  int64_t max_first = std::numeric_limits<int64_t>::min();
  for (int32_t index : order) {
    const UsageRecord& record = records[static_cast<size_t>(index)];
    if (record.last < record.first) return packed;  // invalid lifetimes: leave them to std::sort
    unit = std::gcd(unit, record.bytes);
    max_bytes = std::max(max_bytes, record.bytes);
    max_length = std::max(max_length,
                          static_cast<uint64_t>(record.last) - static_cast<uint64_t>(record.first));
    min_first = std::min(min_first, record.first);
    max_first = std::max(max_first, record.first);
  }
  const uint64_t max_units = max_bytes / unit;
  const uint64_t first_span = static_cast<uint64_t>(max_first) - static_cast<uint64_t>(min_first);
  const int length_bits = bit_width_of(max_length);
  const int first_bits = bit_width_of(first_span);
  if (bit_width_of(max_units) + length_bits + first_bits > 64) return packed;
  packed.fits = true;
  packed.keys.reserve(order.size());
  for (int32_t index : order) {
    const UsageRecord& record = records[static_cast<size_t>(index)];
    const uint64_t bytes_key = max_units - record.bytes / unit;
    const uint64_t length_key =
        max_length - (static_cast<uint64_t>(record.last) - static_cast<uint64_t>(record.first));
    const uint64_t first_key =
        static_cast<uint64_t>(record.first) - static_cast<uint64_t>(min_first);
    // Shifts by 64 are undefined: a zero-width field shifts the rest by less.
    uint64_t key = bytes_key;
    key = length_bits == 0 ? key : (key << length_bits) | length_key;
    key = first_bits == 0 ? key : (key << first_bits) | first_key;
    packed.keys.push_back(key);
  }
  return packed;
}

// Stable LSD radix sort of `order` by `keys` (parallel arrays), 11 bits per pass, skipping the
// passes above the highest key bit.
void radix_sort_by_key(std::vector<uint64_t>& keys, std::vector<int32_t>& order) {
  constexpr int kDigitBits = 11;
  constexpr size_t kBuckets = size_t{1} << kDigitBits;
  uint64_t max_key = 0;
  for (uint64_t key : keys) max_key = std::max(max_key, key);
  std::vector<uint64_t> keys_out(keys.size());
  std::vector<int32_t> order_out(order.size());
  std::vector<size_t> counts(kBuckets);
  for (int shift = 0; shift < bit_width_of(max_key); shift += kDigitBits) {
    std::fill(counts.begin(), counts.end(), 0);
    for (uint64_t key : keys) ++counts[(key >> shift) & (kBuckets - 1)];
    size_t sum = 0;
    for (size_t& count : counts) {
      const size_t bucket_count = count;
      count = sum;
      sum += bucket_count;
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      const size_t slot = counts[(keys[i] >> shift) & (kBuckets - 1)]++;
      keys_out[slot] = keys[i];
      order_out[slot] = order[i];
    }
    keys.swap(keys_out);
    order.swap(order_out);
  }
}

}  // namespace

std::vector<int32_t> size_order(std::span<const UsageRecord> records) {
  std::vector<int32_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes > 0) order.push_back(static_cast<int32_t>(i));
  }
  // Usually the key fits in 64 bits: a radix sort, several times faster than the comparator.
  PackedKeys packed = pack_size_keys(records, order);
  if (packed.fits) {
    radix_sort_by_key(packed.keys, order);
    return order;
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const UsageRecord& ra = records[static_cast<size_t>(a)];
    const UsageRecord& rb = records[static_cast<size_t>(b)];
    if (ra.bytes != rb.bytes) return ra.bytes > rb.bytes;
    const int64_t length_a = ra.last - ra.first;
    const int64_t length_b = rb.last - rb.first;
    if (length_a != length_b) return length_a > length_b;
    if (ra.first != rb.first) return ra.first < rb.first;
    return a < b;
  });
  return order;
}

Expected<Placement> place_greedy_by_size(std::span<const UsageRecord> records,
                                         const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, size_order(records));
}

Expected<Placement> place_greedy_by_size_first_fit(std::span<const UsageRecord> records,
                                                   const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  return place_greedy_in_order(records, size_order(records), GapChoice::kFirstFit);
}

}  // namespace onepool
