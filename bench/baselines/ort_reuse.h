// What ONNX Runtime does before any address is chosen, shared by both ORT baselines:
//  - Its allocation planner walks the nodes in execution order; an output may take over the
//    buffer of a tensor that is already dead (freed at an earlier step) only when the sizes are
//    exactly equal; the most recently freed such buffer is taken first. Other outputs get a
//    fresh buffer. (ORT compares shapes and element types; equal bytes is the generous reading.)
//  - The buffers are then allocated and freed in execution order: at each step the buffers that
//    start there, then the frees of those whose last user ran there.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool::bench {

struct SharedBuffers {
  std::vector<UsageRecord> buffers;  // from its first user's first step to its last user's last
  std::vector<int32_t> buffer_of;    // per record; -1 for records of 0 bytes
};

/// Exact-size reuse of freed buffers, in execution order. O(n log n).
SharedBuffers reuse_freed_exact_size(std::span<const UsageRecord> records);

struct BufferEvent {
  int32_t buffer = -1;
  bool allocate = true;  // false: free
};

/// Allocations and frees of `buffers` in execution order (per step: allocations, then frees).
std::vector<BufferEvent> execution_events(std::span<const UsageRecord> buffers);

/// The records' placement from their buffers' offsets.
Placement records_placement(const SharedBuffers& shared, std::span<const size_t> buffer_offsets,
                            size_t pool_bytes);

}  // namespace onepool::bench
