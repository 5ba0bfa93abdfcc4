// Greedy placement cut into parts along time: place_greedy_in_time_parts().
//
// Large instances (100,000 records over 20,000 steps) are cut at a few steps into parts whose
// records share no step with another part's: a record ending at or before a cut never meets one
// starting after it. The records live across some cut ("crossing") are placed first, in the given
// order; each part then places its own records, in the given order, around them. Every part's
// instance starts with the same crossing records in the same order, and a greedy placement of a
// prefix depends on that prefix alone, so every part puts them at the same offsets: the parts
// are independent, and may run on several threads with the same result as on one.
//
// Cuts are taken near the record-count quantiles of the first steps, at the step with the fewest
// records live across it within a window around each quantile: few crossing records, which are
// placed out of order (before larger records of the parts). The parts depend only on the records,
// never on the thread count, so the placement does not either.
//
// Besides the threads, smaller parts are faster on one thread as well: the time index of each
// part is smaller and stays in cache (100,000 scattered records: about a quarter less time in
// four parts on one thread, half on two threads; the same pool).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <numeric>
#include <system_error>
#include <thread>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

// Records per part: instances below twice this are placed whole.
constexpr size_t kRecordsPerPart = 50000;
constexpr size_t kMaxParts = 8;
// Cuts are looked for within a part / kCutWindowFraction records of each quantile.
constexpr size_t kCutWindowFraction = 25;

// A place to cut: just before the first step of some record. `rank` records start before it
// (they are left of the cut or across it); `crossing` records are live across it.
struct CutCandidate {
  int64_t cut;
  size_t rank;
  size_t crossing;
};

// Steps spanning up to this many values per record are counted in tables, not sorted.
constexpr uint64_t kDenseStepsPerRecord = 4;

// One candidate per distinct first step of the records of `order`, in step order. Dense steps
// (the usual case) by counting over the step range, O(n + steps); others by sorting.
std::vector<CutCandidate> cut_candidates(std::span<const UsageRecord> records,
                                         std::span<const int32_t> order) {
  int64_t min_step = std::numeric_limits<int64_t>::max();
  int64_t max_step = std::numeric_limits<int64_t>::min();
  for (const int32_t index : order) {
    min_step = std::min(min_step, records[static_cast<size_t>(index)].first);
    max_step = std::max(max_step, records[static_cast<size_t>(index)].last);
  }
  std::vector<CutCandidate> candidates;
  if (order.empty() || min_step == std::numeric_limits<int64_t>::min()) return candidates;
  const uint64_t span = static_cast<uint64_t>(max_step) - static_cast<uint64_t>(min_step);
  const auto offset_of = [min_step](int64_t step) {
    return static_cast<size_t>(static_cast<uint64_t>(step) - static_cast<uint64_t>(min_step));
  };
  if (span < kDenseStepsPerRecord * order.size()) {
    std::vector<uint32_t> starting(static_cast<size_t>(span) + 1, 0);
    std::vector<uint32_t> ending(static_cast<size_t>(span) + 1, 0);
    for (const int32_t index : order) {
      ++starting[offset_of(records[static_cast<size_t>(index)].first)];
      ++ending[offset_of(records[static_cast<size_t>(index)].last)];
    }
    size_t started = 0;  // first <= step - 1
    size_t ended = 0;    // last <= step - 1
    for (size_t step = 0; step <= span; ++step) {
      if (starting[step] > 0 && step > 0) {
        candidates.push_back({min_step + static_cast<int64_t>(step) - 1, started, started - ended});
      }
      started += starting[step];
      ended += ending[step];
    }
    return candidates;
  }
  std::vector<int64_t> firsts;
  std::vector<int64_t> lasts;
  firsts.reserve(order.size());
  lasts.reserve(order.size());
  for (const int32_t index : order) {
    firsts.push_back(records[static_cast<size_t>(index)].first);
    lasts.push_back(records[static_cast<size_t>(index)].last);
  }
  std::sort(firsts.begin(), firsts.end());
  std::sort(lasts.begin(), lasts.end());
  size_t ended = 0;
  for (size_t i = 1; i < firsts.size(); ++i) {
    if (firsts[i] == firsts[i - 1]) continue;
    const int64_t cut = firsts[i] - 1;  // > the lowest first step, so no overflow
    while (ended < lasts.size() && lasts[ended] <= cut) ++ended;
    candidates.push_back({cut, i, i - ended});
  }
  return candidates;
}

// Part p holds the records with cuts[p - 1] < first and last <= cuts[p]. Each cut is the
// candidate with the fewest records live across it among those whose rank is within a part /
// kCutWindowFraction of the quantile p / parts (ties: the nearest the quantile, then the lower).
// Strictly increasing; fewer cuts when they collide.
std::vector<int64_t> choose_cuts(std::span<const CutCandidate> candidates, size_t count,
                                 size_t parts) {
  std::vector<int64_t> cuts;
  const size_t window = count / parts / kCutWindowFraction;
  for (size_t part = 1; part < parts; ++part) {
    const size_t target = count * part / parts;
    const auto first = std::lower_bound(
        candidates.begin(), candidates.end(), target - std::min(target, window),
        [](const CutCandidate& candidate, size_t rank) { return candidate.rank < rank; });
    const CutCandidate* best = nullptr;
    size_t best_distance = 0;
    for (auto at = first; at != candidates.end() && at->rank <= target + window; ++at) {
      const size_t distance = at->rank > target ? at->rank - target : target - at->rank;
      if (best == nullptr || at->crossing < best->crossing ||
          (at->crossing == best->crossing && distance < best_distance)) {
        best = &*at;
        best_distance = distance;
      }
    }
    if (best != nullptr && (cuts.empty() || best->cut > cuts.back())) cuts.push_back(best->cut);
  }
  return cuts;
}

// The records of `order` split into those crossing a cut and each part's own, each list in
// `order`'s order.
struct TimeParts {
  std::vector<int32_t> crossing;
  std::vector<std::vector<int32_t>> own;
};

TimeParts split_by_cuts(std::span<const UsageRecord> records, std::span<const int32_t> order,
                        std::span<const int64_t> cuts) {
  TimeParts parts;
  parts.own.resize(cuts.size() + 1);
  for (const int32_t index : order) {
    const UsageRecord& record = records[static_cast<size_t>(index)];
    const auto part_of_first = std::lower_bound(cuts.begin(), cuts.end(), record.first);
    const auto part_of_last = std::lower_bound(cuts.begin(), cuts.end(), record.last);
    if (part_of_first != part_of_last) {
      parts.crossing.push_back(index);
    } else {
      parts.own[static_cast<size_t>(part_of_first - cuts.begin())].push_back(index);
    }
  }
  return parts;
}

// Places part `part`: the crossing records, then its own, as one instance in that order.
Placement place_part(std::span<const UsageRecord> records, const TimeParts& parts, size_t part,
                     GapChoice choice) {
  std::vector<UsageRecord> instance;
  instance.reserve(parts.crossing.size() + parts.own[part].size());
  for (const int32_t index : parts.crossing)
    instance.push_back(records[static_cast<size_t>(index)]);
  for (const int32_t index : parts.own[part])
    instance.push_back(records[static_cast<size_t>(index)]);
  std::vector<int32_t> instance_order(instance.size());
  std::iota(instance_order.begin(), instance_order.end(), 0);
  return place_greedy_in_order(instance, instance_order, choice);
}

// Runs place_part for every part on up to `threads` threads (the calling one among them); each
// part's result goes to its own slot. A thread that cannot start leaves its parts to the others;
// an exception in a part is rethrown here, as on one thread.
std::vector<Placement> place_parts(std::span<const UsageRecord> records, const TimeParts& parts,
                                   GapChoice choice, size_t threads) {
  const size_t count = parts.own.size();
  std::vector<Placement> placed(count);
  std::vector<std::exception_ptr> failures(count);
  std::atomic<size_t> next{0};
  const auto work = [&]() {
    for (size_t part = next++; part < count; part = next++) {
      try {
        placed[part] = place_part(records, parts, part, choice);
      } catch (...) {
        failures[part] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(threads, count); ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // the threads already started and this one share the parts
    }
  }
  work();
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
  return placed;
}

}  // namespace

size_t time_part_count(size_t placed_records) {
  return std::clamp<size_t>(placed_records / kRecordsPerPart, 1, kMaxParts);
}

Placement place_greedy_in_time_parts(std::span<const UsageRecord> records,
                                     std::span<const int32_t> order, GapChoice choice,
                                     size_t threads) {
  const size_t wanted = time_part_count(order.size());
  if (wanted <= 1) return place_greedy_in_order(records, order, choice);
  const std::vector<CutCandidate> candidates = cut_candidates(records, order);
  const std::vector<int64_t> cuts = choose_cuts(candidates, order.size(), wanted);
  if (cuts.empty()) return place_greedy_in_order(records, order, choice);
  const TimeParts parts = split_by_cuts(records, order, cuts);
  const std::vector<Placement> placed =
      place_parts(records, parts, choice, std::max<size_t>(threads, 1));
  // Step 3. Every part placed the crossing records alike; each its own records.
  Placement placement;
  placement.offsets.assign(records.size(), 0);
  for (size_t part = 0; part < placed.size(); ++part) {
    const std::vector<size_t>& offsets = placed[part].offsets;
    for (size_t k = 0; k < parts.crossing.size(); ++k) {
      placement.offsets[static_cast<size_t>(parts.crossing[k])] = offsets[k];
    }
    const std::vector<int32_t>& own = parts.own[part];
    for (size_t k = 0; k < own.size(); ++k) {
      placement.offsets[static_cast<size_t>(own[k])] = offsets[parts.crossing.size() + k];
    }
    placement.pool_bytes = std::max(placement.pool_bytes, placed[part].pool_bytes);
  }
  return placement;
}

}  // namespace onepool
