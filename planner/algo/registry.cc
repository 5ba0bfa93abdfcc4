// The table of placement algorithms, selectable by name. The default comes first.
#include <string>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

constexpr AlgorithmInfo kAlgorithms[] = {
    {"auto", "the default: fast greedy orders, keeps the smallest pool, stops at the lower bound",
     &place_portfolio},
    {"portfolio",
     "every greedy order below (size, lifetime, area, conflicts); keeps the smallest pool and "
     "stops at the lower bound",
     &place_portfolio},
    {"greedy-by-size",
     "largest record first, each at the smallest gap among records live at the same time",
     &place_greedy_by_size},
    {"greedy-by-lifetime", "longest-lived record first, best fit", &place_greedy_by_lifetime},
    {"greedy-by-area", "largest bytes x lifetime first, best fit", &place_greedy_by_area},
    {"greedy-by-conflicts", "most time-overlapping record first, best fit (TVM USMP's order)",
     &place_greedy_by_conflicts},
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
