// TransposePlan: a prepared N-D transpose of a contiguous tensor into a contiguous output, used
// by Transpose, DepthToSpace and SpaceToDepth.
//
// Prepare: axes of size 1 are dropped and input axes that stay adjacent and in order are merged,
// so NCHW->NHWC becomes [N, C, HW] with perm (0,2,1). Then one of three paths:
//   - identity: one memcpy;
//   - batched 2-D swap (perm ends with the last two axes swapped, the rest in order): blocked
//     32x32 tiles so that reads and writes both stay in cache; covers 2-D, NCHW<->NHWC and
//     last-two-axes swaps;
//   - anything else: AxisMapCopy (one table lookup per element; memcpy rows when the innermost
//     input axis stays innermost).
// run() never allocates; immutable after prepare.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/shape_axis_map.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::data {

class TransposePlan {
 public:
  TransposePlan() = default;
  /// `dims`: input dims; `perm`: output axis k reads input axis perm[k] (a valid permutation).
  TransposePlan(const std::vector<int64_t>& dims, const std::vector<int>& perm,
                size_t element_size);

  void run(const std::byte* in, std::byte* out, ThreadPool& threads) const;

 private:
  enum class Path : uint8_t { kCopy, kBatched2d, kGeneral };
  void run_batched_2d(const std::byte* in, std::byte* out, ThreadPool& threads) const;

  Path path_ = Path::kCopy;
  size_t element_size_ = 1;
  int64_t total_ = 0;
  int64_t batch_ = 1, rows_ = 1, cols_ = 1;  // kBatched2d: in [batch, rows, cols]
  AxisMapCopy general_;
};

}  // namespace onepool::cpu::data
