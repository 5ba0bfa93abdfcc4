// Separable MaxPool through a padded plane, see pool_max_padded.h.
#include "runtime/cpu/kernels/pool_max_padded.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/nan_order.h"
#include "runtime/cpu/kernels/pool_window_2d.h"

namespace onepool::cpu::nn {
namespace {

constexpr int kRowAxis = 1;  // normalized axes: 0 depth, 1 rows, 2 columns
constexpr int kColumnAxis = 2;
// One plane's scratch above this many floats (256 MiB) takes the window-by-window path.
constexpr int64_t kMaxScratchFloats = int64_t{1} << 26;

// True when every output position on `axis` has at least one input element in its window.
bool every_window_reaches_input(const WindowGeometry& g, int axis) {
  for (int64_t o = 0; o < g.output[axis]; ++o) {
    const AxisTaps taps = axis_taps(g, axis, o);
    if (taps.first >= taps.last) return false;
  }
  return true;
}

// a * b + c, or nullopt when it leaves [0, kMaxScratchFloats].
std::optional<int64_t> bounded_size(int64_t a, int64_t b, int64_t c) {
  int64_t product = 0;
  int64_t sum = 0;
  if (a < 0 || b < 0 || c < 0 || __builtin_mul_overflow(a, b, &product) ||
      __builtin_add_overflow(product, c, &sum) || sum > kMaxScratchFloats) {
    return std::nullopt;
  }
  return sum;
}

// Rounded up to a whole 64-byte line of floats, so each region (and each thread's scratch)
// starts on its own cache line.
int64_t round_to_line(int64_t floats) { return (floats + 15) / 16 * 16; }

// out[j] = fold over taps k of plane[stride * j + k * dilation], taps in order.
template <int64_t kStride, int64_t kTaps>
void row_maxima(const float* __restrict plane, float* __restrict out, int64_t count, int64_t stride,
                int64_t taps, int64_t dilation) {
  const int64_t s = kStride > 0 ? kStride : stride;
  if constexpr (kTaps > 0) {
    for (int64_t j = 0; j < count; ++j) {
      float best = plane[s * j];
      for (int64_t k = 1; k < kTaps; ++k) best = nan_max(best, plane[s * j + k * dilation]);
      out[j] = best;
    }
  } else {
    for (int64_t j = 0; j < count; ++j) out[j] = plane[s * j];
    for (int64_t k = 1; k < taps; ++k) {
      const float* shifted = plane + k * dilation;
      for (int64_t j = 0; j < count; ++j) out[j] = nan_max(out[j], shifted[s * j]);
    }
  }
}

// out[i] = fold over taps k of rows[i + k * step], taps in order (the vertical pass).
template <int64_t kTaps>
void column_maxima(const float* __restrict rows, float* __restrict out, int64_t count, int64_t taps,
                   int64_t step) {
  if constexpr (kTaps > 0) {
    for (int64_t i = 0; i < count; ++i) {
      float best = rows[i];
      for (int64_t k = 1; k < kTaps; ++k) best = nan_max(best, rows[i + k * step]);
      out[i] = best;
    }
  } else {
    for (int64_t i = 0; i < count; ++i) out[i] = rows[i];
    for (int64_t k = 1; k < taps; ++k) {
      const float* shifted = rows + k * step;
      for (int64_t i = 0; i < count; ++i) out[i] = nan_max(out[i], shifted[i]);
    }
  }
}

void horizontal_pass(const PaddedMaxPlan& p, const float* plane, float* row_max) {
  const int64_t count = p.padded_h * p.reduced_w;
  const bool three = p.kernel_w == 3;
  if (p.stride_w == 1 && three) return row_maxima<1, 3>(plane, row_max, count, 1, 3, p.dilation_w);
  if (p.stride_w == 2 && three) return row_maxima<2, 3>(plane, row_max, count, 2, 3, p.dilation_w);
  if (p.stride_w == 1) return row_maxima<1, 0>(plane, row_max, count, 1, p.kernel_w, p.dilation_w);
  if (p.stride_w == 2) return row_maxima<2, 0>(plane, row_max, count, 2, p.kernel_w, p.dilation_w);
  row_maxima<0, 0>(plane, row_max, count, p.stride_w, p.kernel_w, p.dilation_w);
}

void vertical_pass(const PaddedMaxPlan& p, const float* row_max, float* folded) {
  const int64_t count = p.output_h * p.stride_h * p.reduced_w;
  const int64_t step = p.dilation_h * p.reduced_w;
  if (p.kernel_h == 3) return column_maxima<3>(row_max, folded, count, 3, step);
  column_maxima<0>(row_max, folded, count, p.kernel_h, step);
}

}  // namespace

std::optional<PaddedMaxPlan> make_padded_max_plan(const WindowGeometry& g) {
  if (!is_pool_2d(g) || !every_window_reaches_input(g, kRowAxis) ||
      !every_window_reaches_input(g, kColumnAxis)) {
    return std::nullopt;
  }
  PaddedMaxPlan p;
  p.kernel_h = g.kernel[kRowAxis];
  p.kernel_w = g.kernel[kColumnAxis];
  p.stride_h = g.stride[kRowAxis];
  p.stride_w = g.stride[kColumnAxis];
  p.dilation_h = g.dilation[kRowAxis];
  p.dilation_w = g.dilation[kColumnAxis];
  p.input_h = g.input[kRowAxis];
  p.input_w = g.input[kColumnAxis];
  p.output_h = g.output[kRowAxis];
  p.output_w = g.output[kColumnAxis];
  p.pad_top = g.pad_begin[kRowAxis];
  p.pad_left = g.pad_begin[kColumnAxis];
  // The geometry's output sizes already fit the padded input, so these stay small.
  p.padded_h = (p.output_h - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1;
  const int64_t needed_w = (p.output_w - 1) * p.stride_w + (p.kernel_w - 1) * p.dilation_w + 1;
  p.reduced_w = (needed_w + p.stride_w - 1) / p.stride_w;
  p.padded_w = p.reduced_w * p.stride_w;
  p.copied_h = std::clamp<int64_t>(p.padded_h - p.pad_top, 0, p.input_h);
  p.copied_w = std::clamp<int64_t>(p.padded_w - p.pad_left, 0, p.input_w);
  // The horizontal pass's last taps read past the last padded row by this much; the vertical
  // pass, sweeping whole stride_h-row blocks, reads (stride_h - 1) rows past the row maxima.
  const int64_t plane_slack =
      std::max<int64_t>(0, (p.kernel_w - 1) * p.dilation_w - p.stride_w + 1);
  const std::optional<int64_t> plane = bounded_size(p.padded_h, p.padded_w, plane_slack);
  const std::optional<int64_t> row_max = bounded_size(p.padded_h + p.stride_h - 1, p.reduced_w, 0);
  const std::optional<int64_t> folded = bounded_size(p.output_h * p.stride_h, p.reduced_w, 0);
  if (!plane || !row_max || !folded) return std::nullopt;
  p.plane_floats = round_to_line(*plane);
  p.row_max_floats = round_to_line(*row_max);
  p.folded_floats = round_to_line(*folded);
  if (p.scratch_floats() > kMaxScratchFloats) return std::nullopt;
  return p;
}

void prepare_padded_max_scratch(const PaddedMaxPlan& p, float* scratch) {
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  std::fill(scratch, scratch + p.plane_floats, minus_infinity);
  // Row maxima past the last padded row: only the discarded columns of the vertical pass read
  // them, but they read defined values.
  float* row_max = scratch + p.plane_floats;
  std::fill(row_max + p.padded_h * p.reduced_w, row_max + p.row_max_floats, minus_infinity);
}

ONEPOOL_ISA_CLONES void max_plane_padded(const PaddedMaxPlan& p, const float* x, float* y,
                                         float* scratch) {
  float* plane = scratch;
  float* row_max = plane + p.plane_floats;
  float* folded = row_max + p.row_max_floats;
  for (int64_t r = 0; r < p.copied_h; ++r) {
    std::memcpy(plane + (p.pad_top + r) * p.padded_w + p.pad_left, x + r * p.input_w,
                static_cast<size_t>(p.copied_w) * sizeof(float));
  }
  horizontal_pass(p, plane, row_max);
  vertical_pass(p, row_max, folded);
  const int64_t folded_pitch = p.stride_h * p.reduced_w;
  for (int64_t oh = 0; oh < p.output_h; ++oh) {
    std::memcpy(y + oh * p.output_w, folded + oh * folded_pitch,
                static_cast<size_t>(p.output_w) * sizeof(float));
  }
}

}  // namespace onepool::cpu::nn
