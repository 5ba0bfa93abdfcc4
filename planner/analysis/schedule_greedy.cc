// Greedy list scheduling of one segment: repeatedly run the best ready node by a fixed rule.
#include <algorithm>
#include <set>
#include <tuple>

#include "planner/analysis/schedule_problem.h"

namespace onepool::schedule_detail {
namespace {

// What a rule compares; smaller is better, ties go to the earlier model position.
struct Candidate {
  int64_t net_bytes = 0;  // kept outputs - freed inputs
  size_t step_bytes = 0;  // outputs allocated at the step
  int32_t recency = 0;    // minus the latest step of a predecessor in this segment
  int32_t node = 0;
};

// Orders candidates by a rule: the best first.
struct CandidateOrder {
  GreedyRule rule;
  bool operator()(const Candidate& a, const Candidate& b) const {
    switch (rule) {
      case GreedyRule::kNetBytes:
        return std::tie(a.net_bytes, a.recency, a.node) < std::tie(b.net_bytes, b.recency, b.node);
      case GreedyRule::kStepBytes:
        return std::tie(a.step_bytes, a.net_bytes, a.node) <
               std::tie(b.step_bytes, b.net_bytes, b.node);
      case GreedyRule::kDepthFirst:
        return std::tie(a.recency, a.net_bytes, a.node) < std::tie(b.recency, b.net_bytes, b.node);
    }
    return false;
  }
};

// The ready nodes live in a set ordered by the rule. A ready node's key changes only when one of
// its inputs drops to a single unscheduled consumer (then running it frees that input), so each
// step updates a few keys instead of rescanning the ready set: O(N log N + E·consumers).
class ReadyScheduler {
 public:
  ReadyScheduler(const ScheduleProblem& problem, ScheduleState& state, Segment segment,
                 GreedyRule rule)
      : problem_(problem), state_(state), segment_(segment), ready_(CandidateOrder{rule}) {
    const auto size = static_cast<size_t>(segment.size());
    pending_.assign(size, 0);
    step_of_.assign(size, -1);
    key_of_.resize(size);
    for (int32_t n = segment.begin; n < segment.end; ++n) {
      for (int32_t pred : problem.node_preds[static_cast<size_t>(n)]) {
        if (pred >= segment.begin) ++pending_[local(n)];
      }
      if (pending_[local(n)] == 0) make_ready(n);
    }
  }

  std::vector<int32_t> run() {
    std::vector<int32_t> order;
    order.reserve(static_cast<size_t>(segment_.size()));
    const ScheduleState saved{state_.resident, {}, state_.started};
    while (!ready_.empty()) {
      const int32_t node = ready_.begin()->node;
      ready_.erase(ready_.begin());
      step_of_[local(node)] = static_cast<int32_t>(order.size());
      apply_step(problem_, state_, node);
      order.push_back(node);
      update_last_readers(node);
      release_successors(node);
    }
    restore(order, saved);
    return order;
  }

 private:
  size_t local(int32_t node) const { return static_cast<size_t>(node - segment_.begin); }
  bool in_segment(int32_t node) const { return node >= segment_.begin && node < segment_.end; }

  Candidate candidate(int32_t node) const {
    const auto index = static_cast<size_t>(node);
    Candidate c;
    c.node = node;
    c.step_bytes = problem_.node_output_bytes[index];
    c.net_bytes = static_cast<int64_t>(problem_.node_kept_bytes[index]) -
                  static_cast<int64_t>(freed_bytes(problem_, state_, node));
    int32_t latest = -1;
    for (int32_t pred : problem_.node_preds[index]) {
      if (pred >= segment_.begin) latest = std::max(latest, step_of_[local(pred)]);
    }
    c.recency = -latest;
    return c;
  }

  void make_ready(int32_t node) {
    key_of_[local(node)] = candidate(node);
    ready_.insert(key_of_[local(node)]);
  }

  // An input of `node` left with one unscheduled consumer: that reader now frees it.
  void update_last_readers(int32_t node) {
    for (int32_t v : problem_.node_inputs[static_cast<size_t>(node)]) {
      if (state_.remaining[static_cast<size_t>(v)] != 1) continue;
      for (int32_t reader : problem_.value_consumers[static_cast<size_t>(v)]) {
        if (!in_segment(reader) || step_of_[local(reader)] >= 0) continue;
        if (ready_.erase(key_of_[local(reader)]) != 0) make_ready(reader);
      }
    }
  }

  void release_successors(int32_t node) {
    for (int32_t succ : problem_.node_succs[static_cast<size_t>(node)]) {
      if (succ >= segment_.end) continue;
      if (--pending_[local(succ)] == 0) make_ready(succ);
    }
  }

  void restore(const std::vector<int32_t>& order, const ScheduleState& saved) {
    for (int32_t node : order) {
      for (int32_t v : problem_.node_inputs[static_cast<size_t>(node)]) {
        ++state_.remaining[static_cast<size_t>(v)];
      }
    }
    state_.resident = saved.resident;
    state_.started = saved.started;
  }

  const ScheduleProblem& problem_;
  ScheduleState& state_;
  Segment segment_;
  std::vector<int32_t> pending_;   // per local node: predecessors in the segment not yet run
  std::vector<int32_t> step_of_;   // per local node: its step in the segment, or -1
  std::vector<Candidate> key_of_;  // per local node: its key while ready
  std::set<Candidate, CandidateOrder> ready_;
};

}  // namespace

std::vector<int32_t> greedy_order(const ScheduleProblem& problem, ScheduleState& state,
                                  Segment segment, GreedyRule rule) {
  return ReadyScheduler(problem, state, segment, rule).run();
}

}  // namespace onepool::schedule_detail
