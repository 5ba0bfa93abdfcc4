// The fast path of MaxPool and AveragePool for 1-D and 2-D windows (no Indices output), padded
// or not, any stride and dilation: each output row reads only the input rows its windows cover,
// and the columns whose windows lie inside the input run tap by tap across the whole row, so
// the compiler vectorizes them; only the few border columns go one window at a time.
// Every output still sees its taps in (kh, kw) order, as the generic path does: the max is the
// first of equal maxima (the sign of a zero) with NaN propagated, and the average sums in the
// same order from 0, so both paths give the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/conv_geometry.h"

namespace onepool::cpu::nn {

/// The taps [first, last) of one output position's window on one axis; start is the input
/// index of tap 0 (negative inside the begin padding).
struct AxisTaps {
  int64_t start = 0;
  int64_t first = 0;
  int64_t last = 0;
};

/// AxisTaps of output position `o` on normalized axis `axis` of `g`.
AxisTaps axis_taps(const WindowGeometry& g, int axis, int64_t o);

/// Per-column windows of a 2-D pool, worked out once when the kernel is prepared.
struct PoolColumns {
  std::vector<AxisTaps> windows;  // one per output column
  int64_t interior_begin = 0;     // [interior_begin, interior_end): windows wholly inside
  int64_t interior_end = 0;
  // Stride 1 with the output as wide as the input: an output's taps sit at fixed offsets from
  // its own flat index, so the rows [flat_rows_begin, flat_rows_end), whose windows lie inside
  // the input vertically, sweep as one run (border columns are redone one by one after).
  int64_t flat_rows_begin = 0;
  int64_t flat_rows_end = 0;
};

/// True when `g` pools over at most two axes (depth 1), which the fast path handles.
bool is_pool_2d(const WindowGeometry& g);

PoolColumns make_pool_columns(const WindowGeometry& g);

/// One (image, channel) plane of MaxPool: x holds input[1] x input[2], y output[1] x output[2].
void max_plane_2d(const WindowGeometry& g, const PoolColumns& columns, const float* x, float* y);

/// One plane of AveragePool; count_include_pad as in the ONNX spec (the window clipped to the
/// padded input).
void average_plane_2d(const WindowGeometry& g, const PoolColumns& columns, bool count_include_pad,
                      const float* x, float* y);

}  // namespace onepool::cpu::nn
