// The table of placement algorithms, selectable by name. The default comes first.
#include <string>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

constexpr AlgorithmInfo kAlgorithms[] = {
    {"greedy-by-size",
     "largest record first, each at the smallest gap among records live at the same time",
     &place_greedy_by_size},
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
