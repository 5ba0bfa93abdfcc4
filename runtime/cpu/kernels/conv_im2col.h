// im2col and its adjoint col2im over a normalized 3-D window (see conv_geometry.h).
//
// The column matrix of `channels` image planes has channels * kernel_size rows and output_size
// columns: row ((c * kD + kd) * kH + kh) * kW + kw, column (od * OH + oh) * OW + ow holds the
// image value the window at output (od, oh, ow) reads through kernel tap (kd, kh, kw), or 0 in
// the padding. Its size is channels * kernel_size * output_size floats.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

/// Whole rows of `row_bytes` each that fit `bytes`: at least one (a kernel's plan grants at least
/// the one-row minimum it declared), at most `rows`. Sizes the tiles of im2col and col2im.
inline int64_t whole_rows_within(int64_t bytes, int64_t row_bytes, int64_t rows) {
  return std::clamp<int64_t>(bytes / std::max<int64_t>(row_bytes, 1), 1,
                             std::max<int64_t>(rows, 1));
}

/// Fills `col` from `image` ([channels, D, H, W] as in g.input). Parallel over rows.
void im2col(const WindowGeometry& g, const float* image, int64_t channels, float* col,
            ThreadPool& threads);

/// The columns of output rows [first_row, first_row + row_count) only, where an output row is
/// one (od, oh) pair in od * OH + oh order: a [channels * kernel_size, row_count * OW] matrix.
/// Lets a convolution bound its workspace by tiling the output.
void im2col_rows(const WindowGeometry& g, const float* image, int64_t channels, int64_t first_row,
                 int64_t row_count, float* col, ThreadPool& threads);

/// Rows [begin, end) of im2col_rows's matrix, on the calling thread.
void im2col_matrix_rows(const WindowGeometry& g, const float* image, int64_t first_row,
                        int64_t row_count, int64_t begin, int64_t end, float* col);

/// Adds every column entry back into the image position it came from (the adjoint of im2col;
/// padding entries are dropped). Parallel over channels, which write disjoint planes.
void col2im_add(const WindowGeometry& g, const float* col, int64_t channels, float* image,
                ThreadPool& threads);

/// col2im_add for the columns of output rows [first_row, first_row + row_count) only: `col` is
/// the [channels * kernel_size, row_count * OW] matrix im2col_rows would give. Lets a transposed
/// convolution bound its workspace by tiling its input.
void col2im_add_rows(const WindowGeometry& g, const float* col, int64_t channels, int64_t first_row,
                     int64_t row_count, float* image, ThreadPool& threads);

}  // namespace onepool::cpu::nn
