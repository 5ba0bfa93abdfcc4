// ONNX Runtime's memory pattern (MemPatternPlanner, used when enable_mem_pattern is on): after
// the allocation planner's exact-size reuse (ort_reuse.h), the buffers are traced in execution
// order; each allocation takes the best-fitting gap (least waste, lowest offset on ties) between
// the buffers live at that moment, kept sorted by offset, or else goes right after the highest
// of them; a free removes the buffer from that list. The pattern's peak is the pool. Online:
// it never looks ahead. Cost O(n · live).
#pragma once

#include <span>

#include "planner/algo/algorithms.h"

namespace onepool::bench {

Expected<Placement> place_ort_mem_pattern(std::span<const UsageRecord> records,
                                          const AlgorithmOptions& options);

}  // namespace onepool::bench
