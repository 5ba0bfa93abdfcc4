// AxisMapCopy: the gather engine behind Slice, Expand, Tile, Pad, general Transpose and nearest
// Resize. Each output axis k has a table of input element offsets, one per output index:
//
//   out[i_0, ..., i_{r-1}] = in[table_0[i_0] + ... + table_{r-1}[i_{r-1}]]
//
// and an entry kFill in any table makes that output element the fill value (Pad's constant).
// The output is contiguous; the input may be read in any pattern (negative steps, broadcast
// strides of 0, wrap-around for Tile, reflection for Pad).
//
// Prepared once (tables built, small trailing axes merged so rows are long, contiguous rows
// detected for memcpy); run() never allocates. Cost: one table lookup per output element, or one
// memcpy per row when the innermost table is contiguous. Immutable after create: run() may be
// called from one thread at a time per pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::data {

class AxisMapCopy {
 public:
  static constexpr int64_t kFill = -1;

  AxisMapCopy() = default;
  /// tables[k] holds one input element offset (or kFill) per index of output axis k. An empty
  /// list of tables is a scalar copy. `fill_bits` holds the fill element's bytes.
  AxisMapCopy(std::vector<std::vector<int64_t>> tables, size_t element_size, uint64_t fill_bits);

  /// Number of output elements.
  int64_t output_count() const { return output_count_; }
  /// Writes every output element. `fill` overrides the fill bytes when not null (Pad's
  /// constant_value input read at run time).
  void run(const std::byte* in, std::byte* out, ThreadPool& threads,
           const void* fill = nullptr) const;

 private:
  void merge_small_trailing_axes();
  void run_rows(const std::byte* in, std::byte* out, uint64_t fill, int64_t first_row,
                int64_t end_row) const;

  std::vector<std::vector<int64_t>> tables_;
  size_t element_size_ = 1;
  uint64_t fill_bits_ = 0;
  int64_t output_count_ = 1;
  int64_t row_length_ = 1;
  int64_t row_count_ = 1;
  bool row_contiguous_ = false;  // innermost table is t0, t0+1, ...: rows copy with memcpy
  bool row_has_fill_ = false;
};

/// A kernel that runs an AxisMapCopy from input 0 to output 0. When `fill_input` >= 0 and that
/// input is present at run time, its first element is the fill value (Pad's constant_value).
class AxisMapKernel final : public Kernel {
 public:
  explicit AxisMapKernel(AxisMapCopy copy, int fill_input = -1)
      : copy_(std::move(copy)), fill_input_(fill_input) {}
  Status run(const RunContext& context) override;

 private:
  AxisMapCopy copy_;
  int fill_input_;
};

}  // namespace onepool::cpu::data
