// The table of placement algorithms, selectable by name. The default comes first.
#include <string>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

constexpr AlgorithmInfo kAlgorithms[] = {
    {"auto",
     "the default: greedy by size, plus the other greedy orders, a node-limited exact search and "
     "a short hill climb on small instances; keeps the smallest pool, stops at the lower bound",
     &place_auto},
    {"portfolio",
     "every greedy order, a local search on the placement order and the exact search (small "
     "instances) under --plan-budget; keeps the smallest pool",
     &place_portfolio},
    {"exact",
     "branch and bound over canonical placements from the best greedy pool, under "
     "--plan-budget; says whether it proved optimality",
     &place_exact},
    {"greedy-by-size",
     "largest record first, each at the smallest gap among records live at the same time",
     &place_greedy_by_size},
    {"greedy-by-size-first-fit",
     "largest record first, each at the lowest gap that fits (TFLite Micro's choice of gap)",
     &place_greedy_by_size_first_fit},
    {"greedy-by-lifetime", "longest-lived record first, best fit", &place_greedy_by_lifetime},
    {"greedy-by-area", "largest bytes x lifetime first, best fit", &place_greedy_by_area},
    {"greedy-by-conflicts", "most time-overlapping record first, best fit (TVM USMP's order)",
     &place_greedy_by_conflicts},
    {"greedy-by-breadth",
     "widest step first (most bytes live), its records largest first, best fit (Pisarchyk & Lee)",
     &place_greedy_by_breadth},
    {"linear", "no reuse: records back to back (pool == naive); a debug baseline", &place_linear},
};

}  // namespace

std::span<const AlgorithmInfo> all_algorithms() { return kAlgorithms; }

Expected<const AlgorithmInfo*> find_algorithm(const std::string& name) {
  std::string names;
  for (const AlgorithmInfo& info : kAlgorithms) {
    if (name == info.name) return &info;
    names += names.empty() ? "" : ", ";
    names += info.name;
  }
  return make_status(StatusCode::kInvalidArgument, "unknown placement algorithm '", name,
                     "': expected one of ", names);
}

}  // namespace onepool
