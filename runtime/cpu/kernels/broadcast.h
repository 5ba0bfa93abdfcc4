// Multidirectional (numpy) broadcasting for elementwise kernels, planned once at prepare time.
//
// A BroadcastPlan maps every output element to one element of each input (at most 3: Where).
// Planning:
//   - each input's shape is right-aligned against the output shape; a dim equals the output's
//     or is 1 (stride 0);
//   - output dims of size 1 are dropped, then adjacent dims are merged while every input stays
//     contiguous across them, so same-shape inputs become one row, a scalar operand becomes a
//     stride-0 row and [N,C,H,W] + [1,C,1,1] becomes [N*C rows] x [H*W] with a per-row scalar.
// After merging, each input's stride on the innermost axis is 0 or 1, so the run loops over
// rows and calls a contiguous (vectorizable) inner loop; index arithmetic happens once per row.
//
// Plain data, copyable; for_each_row never allocates.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {

struct BroadcastPlan {
  static constexpr int kMaxInputs = 3;
  using Offsets = std::array<int64_t, kMaxInputs>;

  int rank = 1;         // merged rank, >= 1
  int input_count = 0;  // 1..kMaxInputs
  int64_t element_count = 0;
  std::array<int64_t, Shape::kMaxRank> dims{};  // merged output dims (dims[rank-1] = row length)
  std::array<std::array<int64_t, Shape::kMaxRank>, kMaxInputs> strides{};  // element strides

  int64_t row_length() const { return dims[static_cast<size_t>(rank - 1)]; }
  /// 1 when input i is contiguous along a row, 0 when it repeats one element per row.
  int64_t inner_stride(int input) const {
    return strides[static_cast<size_t>(input)][static_cast<size_t>(rank - 1)];
  }
  /// True when every input is contiguous along rows of the full tensor (one row, no broadcast).
  bool same_shape() const;
};

/// Plans broadcasting of inputs `input_indices` of the node (shapes from the graph) to output 0.
/// Fails with kInvalidModel naming the node, input, axis and dims when an input does not
/// broadcast to the output's shape.
Expected<BroadcastPlan> make_broadcast_plan(const NodeContext& node,
                                            std::span<const size_t> input_indices);

/// Same as make_broadcast_plan but from explicit shapes (variadic passes read the output back as
/// an input); messages call them "operand i".
Expected<BroadcastPlan> make_broadcast_plan_for_shapes(const NodeContext& node,
                                                       std::span<const Shape> shapes,
                                                       const Shape& output);

/// Checks that output 0's shape is exactly the broadcast of the given inputs' shapes (no axis
/// larger than every input's). kInvalidModel naming the axis otherwise.
Status check_output_is_broadcast(const NodeContext& node, std::span<const size_t> input_indices);

/// Calls row(output_offset, input_offsets, length) for every row piece of the output elements
/// [begin, end), in order. Offsets are in elements.
template <class RowFn>
void for_each_row(const BroadcastPlan& plan, int64_t begin, int64_t end, const RowFn& row) {
  const int rank = plan.rank;
  std::array<int64_t, Shape::kMaxRank> index{};
  int64_t rest = begin;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t dim = plan.dims[static_cast<size_t>(d)];
    index[static_cast<size_t>(d)] = rest % dim;
    rest /= dim;
  }
  const int64_t row_length = plan.row_length();
  int64_t position = begin;
  while (position < end) {
    BroadcastPlan::Offsets offsets{};
    for (int i = 0; i < plan.input_count; ++i) {
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) {
        offset += index[static_cast<size_t>(d)] *
                  plan.strides[static_cast<size_t>(i)][static_cast<size_t>(d)];
      }
      offsets[static_cast<size_t>(i)] = offset;
    }
    const int64_t inner = index[static_cast<size_t>(rank - 1)];
    const int64_t length = std::min(row_length - inner, end - position);
    row(position, offsets, length);
    position += length;
    // Step to the next row: carry into outer axes.
    index[static_cast<size_t>(rank - 1)] = inner + length;
    for (int d = rank - 1;
         d > 0 && index[static_cast<size_t>(d)] == plan.dims[static_cast<size_t>(d)]; --d) {
      index[static_cast<size_t>(d)] = 0;
      ++index[static_cast<size_t>(d - 1)];
    }
  }
}

/// Elements per thread below which a kernel stays on the calling thread.
constexpr int64_t kElementwiseMinChunk = 16384;

/// Splits [0, count) over the pool (chunks of at least kElementwiseMinChunk) and calls
/// fn(begin, end) for each chunk.
template <class Fn>
void parallel_elements(ThreadPool* threads, int64_t count, const Fn& fn) {
  if (threads == nullptr || count <= kElementwiseMinChunk) {
    if (count > 0) fn(int64_t{0}, count);
    return;
  }
  threads->parallel_for(count, kElementwiseMinChunk, fn);
}

}  // namespace onepool::cpu
