// Exact search of one segment: dynamic programming over the set of scheduled nodes.
//
// The bytes live after a set S of nodes ran depend on S only, not on the order inside it, so the
// lowest peak of an order of S is best(S) = min over the last node n of max(best(S - n), step(n)).
// The search goes one level (|S|) at a time, keeps one entry per set (the lowest peak), and drops
// entries whose peak already reaches the incumbent (the best order known from the greedy passes).
#include <algorithm>
#include <array>
#include <unordered_map>

#include "planner/analysis/schedule.h"
#include "planner/analysis/schedule_problem.h"

namespace onepool::schedule_detail {
namespace {

constexpr size_t kSetWords = kMaxExactSegmentNodes / 64;

struct NodeSet {
  std::array<uint64_t, kSetWords> words{};

  bool has(int32_t i) const { return (words[static_cast<size_t>(i) / 64] >> (i % 64)) & 1U; }
  void add(int32_t i) { words[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64); }
  bool contains_all(const NodeSet& other) const {
    for (size_t w = 0; w < kSetWords; ++w) {
      if ((other.words[w] & ~words[w]) != 0) return false;
    }
    return true;
  }
  bool operator==(const NodeSet& other) const = default;
};

struct NodeSetHash {
  size_t operator()(const NodeSet& set) const {
    uint64_t hash = 0x9E3779B97F4A7C15ULL;
    for (uint64_t word : set.words) hash = (hash ^ word) * 0x100000001B3ULL + (hash >> 29);
    return static_cast<size_t>(hash);
  }
};

struct Entry {
  NodeSet scheduled;
  size_t peak = 0;
  size_t resident = 0;
  int32_t parent = -1;  // index in the previous level
  int32_t node = -1;    // local index of the node run last
};

// A value read in the segment: its consumers in the segment, and whether it outlives it.
struct ReadValue {
  NodeSet consumers;
  bool outlives = false;  // a graph output, or read after the segment
};

class SegmentSearch {
 public:
  SegmentSearch(const ScheduleProblem& problem, const ScheduleState& state, Segment segment)
      : problem_(problem), state_(state), segment_(segment) {
    const auto size = static_cast<size_t>(segment.size());
    preds_.resize(size);
    for (int32_t n = segment.begin; n < segment.end; ++n) {
      for (int32_t pred : problem.node_preds[static_cast<size_t>(n)]) {
        if (pred >= segment.begin) preds_[local(n)].add(static_cast<int32_t>(local(pred)));
      }
      for (int32_t v : problem.node_inputs[static_cast<size_t>(n)]) {
        read_[v].consumers.add(static_cast<int32_t>(local(n)));
      }
    }
    for (auto& [v, read] : read_) {
      int32_t inside = 0;
      for (uint64_t word : read.consumers.words) inside += __builtin_popcountll(word);
      read.outlives = problem.value_pinned[static_cast<size_t>(v)] != 0 ||
                      state.remaining[static_cast<size_t>(v)] > inside;
    }
  }

  ExactSearch run(size_t incumbent_peak, int64_t max_states) {
    ExactSearch result;
    std::vector<std::vector<Entry>> levels(1);
    levels[0].push_back(Entry{NodeSet{}, 0, state_.resident, -1, -1});
    for (int32_t level = 0; level < segment_.size(); ++level) {
      std::vector<Entry> next;
      std::unordered_map<NodeSet, int32_t, NodeSetHash> index_of;
      const auto& current = levels.back();
      for (size_t e = 0; e < current.size(); ++e) {
        for (int32_t n = 0; n < segment_.size(); ++n) {
          if (current[e].scheduled.has(n) ||
              !current[e].scheduled.contains_all(preds_[static_cast<size_t>(n)])) {
            continue;
          }
          Entry child = expand(current[e], static_cast<int32_t>(e), n, level == 0);
          if (child.peak >= incumbent_peak) continue;
          auto [it, inserted] =
              index_of.try_emplace(child.scheduled, static_cast<int32_t>(next.size()));
          if (inserted) {
            next.push_back(child);
            if (++result.states > max_states) return result;  // over budget: not complete
          } else if (child.peak < next[static_cast<size_t>(it->second)].peak) {
            next[static_cast<size_t>(it->second)] = child;
          }
        }
      }
      if (next.empty()) {  // every order reaches the incumbent: it is optimal
        result.complete = true;
        return result;
      }
      levels.push_back(std::move(next));
    }
    result.complete = true;
    result.peak = levels.back()[0].peak;
    result.order = trace_back(levels);
    return result;
  }

 private:
  size_t local(int32_t node) const { return static_cast<size_t>(node - segment_.begin); }

  Entry expand(const Entry& from, int32_t from_index, int32_t n, bool first_in_segment) const {
    const auto node = static_cast<size_t>(segment_.begin + n);
    Entry child = from;
    child.scheduled.add(n);
    child.parent = from_index;
    child.node = n;
    const size_t extra = first_in_segment && !state_.started ? problem_.first_step_extra : 0;
    child.peak = std::max(from.peak, from.resident + problem_.node_output_bytes[node] + extra);
    child.resident += problem_.node_kept_bytes[node];
    for (int32_t v : problem_.node_inputs[node]) {
      const ReadValue& read = read_.find(v)->second;
      if (!read.outlives && child.scheduled.contains_all(read.consumers)) {
        child.resident -= problem_.value_bytes[static_cast<size_t>(v)];
      }
    }
    return child;
  }

  std::vector<int32_t> trace_back(const std::vector<std::vector<Entry>>& levels) const {
    std::vector<int32_t> order(static_cast<size_t>(segment_.size()));
    int32_t index = 0;
    for (size_t level = levels.size() - 1; level > 0; --level) {
      const Entry& entry = levels[level][static_cast<size_t>(index)];
      order[level - 1] = segment_.begin + entry.node;
      index = entry.parent;
    }
    return order;
  }

  const ScheduleProblem& problem_;
  const ScheduleState& state_;
  Segment segment_;
  std::vector<NodeSet> preds_;  // per local node: its predecessors inside the segment
  std::unordered_map<int32_t, ReadValue> read_;
};

}  // namespace

ExactSearch search_segment(const ScheduleProblem& problem, const ScheduleState& state,
                           Segment segment, size_t incumbent_peak, int64_t max_states) {
  if (segment.size() <= 0 || segment.size() > kMaxExactSegmentNodes) return ExactSearch{};
  return SegmentSearch(problem, state, segment).run(incumbent_peak, max_states);
}

}  // namespace onepool::schedule_detail
