#include "bench/baselines/baselines.h"

#include <array>
#include <chrono>
#include <utility>

#include "bench/baselines/ort_bfc_arena.h"
#include "bench/baselines/ort_mem_pattern.h"
#include "bench/baselines/tflm_greedy.h"
#include "bench/baselines/tvm_greedy_by_size.h"

namespace onepool::bench {

std::span<const BaselineInfo> all_baselines() {
  static constexpr std::array<BaselineInfo, 4> kBaselines = {{
      {"tflm-greedy", "TFLite Micro GreedyMemoryPlanner: size descending, first fit",
       place_tflm_greedy},
      {"tvm-greedy-size", "TVM USMP greedy_by_size: size descending, above every conflict",
       place_tvm_greedy_by_size},
      {"ort-pattern", "ONNX Runtime: exact-size reuse, then its memory pattern (online best fit)",
       place_ort_mem_pattern},
      {"ort-arena", "ONNX Runtime: exact-size reuse, then its BFC arena at run time",
       place_ort_bfc_arena},
  }};
  return kBaselines;
}

Expected<BaselineRun> run_baseline(const BaselineInfo& baseline,
                                   std::span<const UsageRecord> records,
                                   const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  const auto start = std::chrono::steady_clock::now();
  Expected<Placement> placement = baseline.run(records, options);
  const auto stop = std::chrono::steady_clock::now();
  if (!placement) return placement.status().with_context(str_cat("baseline ", baseline.name));
  const Status valid = verify_placement(records, *placement, options.alignment);
  if (!valid.is_ok()) {
    return valid.with_context(str_cat("baseline ", baseline.name, " gave an invalid placement"));
  }
  return BaselineRun{std::move(placement).value(),
                     std::chrono::duration<double, std::milli>(stop - start).count()};
}

}  // namespace onepool::bench
