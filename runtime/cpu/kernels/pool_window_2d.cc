// MaxPool / AveragePool over 1-D and 2-D windows, see pool_window_2d.h.
#include "runtime/cpu/kernels/pool_window_2d.h"

#include <algorithm>
#include <limits>

#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/nan_order.h"

namespace onepool::cpu::nn {
namespace {

constexpr int kRowAxis = 1;  // normalized axes: 0 depth, 1 rows, 2 columns
constexpr int kColumnAxis = 2;

// Applies `tap(y[o], x[o * kStride + offset])` to the output columns [begin, end); the stride is
// a constant for the common strides so the loop vectorizes.
template <int64_t kStride, class Tap>
void sweep_row(float* __restrict y, const float* __restrict x, int64_t begin, int64_t end,
               int64_t offset, int64_t stride, Tap tap) {
  const int64_t s = kStride > 0 ? kStride : stride;
  for (int64_t o = begin; o < end; ++o) y[o] = tap(y[o], x[o * s + offset]);
}

template <class Tap>
void sweep(float* y, const float* x, int64_t begin, int64_t end, int64_t offset, int64_t stride,
           Tap tap) {
  if (stride == 1) return sweep_row<1>(y, x, begin, end, offset, stride, tap);
  if (stride == 2) return sweep_row<2>(y, x, begin, end, offset, stride, tap);
  sweep_row<0>(y, x, begin, end, offset, stride, tap);
}

// The interior columns of one output row: every valid input row, every column tap, in order.
template <class Tap>
void interior_row(const WindowGeometry& g, const PoolColumns& columns, const AxisTaps& rows,
                  const float* x, float* y_row, Tap tap) {
  const int64_t width = g.input[kColumnAxis];
  for (int64_t kh = rows.first; kh < rows.last; ++kh) {
    const float* row = x + (rows.start + kh * g.dilation[kRowAxis]) * width;
    for (int64_t kw = 0; kw < g.kernel[kColumnAxis]; ++kw) {
      const int64_t offset = kw * g.dilation[kColumnAxis] - g.pad_begin[kColumnAxis];
      sweep(y_row, row, columns.interior_begin, columns.interior_end, offset, g.stride[kColumnAxis],
            tap);
    }
  }
}

// Max of one window, taps in (kh, kw) order; lowest() when the window holds no tap.
float window_max(const WindowGeometry& g, const AxisTaps& rows, const AxisTaps& cols,
                 const float* x) {
  float best = std::numeric_limits<float>::lowest();
  bool first = true;
  for (int64_t kh = rows.first; kh < rows.last; ++kh) {
    const float* row = x + (rows.start + kh * g.dilation[kRowAxis]) * g.input[kColumnAxis];
    for (int64_t kw = cols.first; kw < cols.last; ++kw) {
      const float v = row[cols.start + kw * g.dilation[kColumnAxis]];
      best = first ? v : nan_max(best, v);
      first = false;
    }
  }
  return best;
}

float window_sum(const WindowGeometry& g, const AxisTaps& rows, const AxisTaps& cols,
                 const float* x) {
  float sum = 0.0f;
  for (int64_t kh = rows.first; kh < rows.last; ++kh) {
    const float* row = x + (rows.start + kh * g.dilation[kRowAxis]) * g.input[kColumnAxis];
    for (int64_t kw = cols.first; kw < cols.last; ++kw) {
      sum += row[cols.start + kw * g.dilation[kColumnAxis]];
    }
  }
  return sum;
}

// The divisor of an AveragePool window, as the generic path counts it.
int64_t window_count(const WindowGeometry& g, bool count_include_pad, const AxisTaps& rows,
                     const AxisTaps& cols) {
  if (!count_include_pad) return (rows.last - rows.first) * (cols.last - cols.first);
  const auto padded = [&](int axis, const AxisTaps& taps) {
    return std::min(taps.start + g.kernel[axis], g.input[axis] + g.pad_end[axis]) - taps.start;
  };
  return padded(kRowAxis, rows) * padded(kColumnAxis, cols);
}

// The columns outside [interior_begin, interior_end), one window each.
template <class Window>
void border_columns(const PoolColumns& columns, int64_t width, float* y_row, Window window) {
  for (int64_t o = 0; o < columns.interior_begin; ++o) y_row[o] = window(o);
  for (int64_t o = columns.interior_end; o < width; ++o) y_row[o] = window(o);
}

}  // namespace

AxisTaps axis_taps(const WindowGeometry& g, int axis, int64_t o) {
  AxisTaps taps;
  taps.start = o * g.stride[axis] - g.pad_begin[axis];
  const ValidRange valid =
      valid_output_range(taps.start, g.dilation[axis], g.input[axis], g.kernel[axis]);
  taps.first = valid.first;
  taps.last = valid.last;
  return taps;
}

bool is_pool_2d(const WindowGeometry& g) {
  return g.input[0] == 1 && g.output[0] == 1 && g.kernel[0] == 1 && g.pad_begin[0] == 0;
}

PoolColumns make_pool_columns(const WindowGeometry& g) {
  PoolColumns columns;
  const int64_t width = g.output[kColumnAxis];
  columns.windows.reserve(static_cast<size_t>(width));
  for (int64_t o = 0; o < width; ++o) columns.windows.push_back(axis_taps(g, kColumnAxis, o));
  const auto inside = [&](const AxisTaps& t) {
    return t.first == 0 && t.last == g.kernel[kColumnAxis];
  };
  const auto begin = std::find_if(columns.windows.begin(), columns.windows.end(), inside);
  const auto end = std::find_if_not(begin, columns.windows.end(), inside);
  columns.interior_begin = begin - columns.windows.begin();
  columns.interior_end = end - columns.windows.begin();
  const bool flat = g.stride[kRowAxis] == 1 && g.stride[kColumnAxis] == 1 &&
                    g.output[kColumnAxis] == g.input[kColumnAxis] &&
                    columns.interior_begin < columns.interior_end;
  if (flat) {
    int64_t oh = 0;
    const auto rows_inside = [&](int64_t row) {
      const AxisTaps taps = axis_taps(g, kRowAxis, row);
      return taps.first == 0 && taps.last == g.kernel[kRowAxis];
    };
    while (oh < g.output[kRowAxis] && !rows_inside(oh)) ++oh;
    columns.flat_rows_begin = oh;
    while (oh < g.output[kRowAxis] && rows_inside(oh)) ++oh;
    columns.flat_rows_end = oh;
  }
  return columns;
}

namespace {

// Whether output row oh is one of the flat-swept rows.
bool is_flat_row(const PoolColumns& columns, int64_t oh) {
  return oh >= columns.flat_rows_begin && oh < columns.flat_rows_end;
}

// The flat run of the flat-swept rows: from the first row's first interior column to the last
// row's interior end, every tap at its fixed offset (the border columns in between get values
// that max_row / average_row overwrite). Every read stays inside the plane.
template <class Tap, class Seed>
void flat_sweep(const WindowGeometry& g, const PoolColumns& columns, const float* x, float* y,
                Seed seed, Tap tap) {
  const int64_t width = g.output[kColumnAxis];
  const int64_t begin = columns.flat_rows_begin * width + columns.interior_begin;
  const int64_t end = (columns.flat_rows_end - 1) * width + columns.interior_end;
  bool first = true;
  for (int64_t kh = 0; kh < g.kernel[kRowAxis]; ++kh) {
    for (int64_t kw = 0; kw < g.kernel[kColumnAxis]; ++kw) {
      const int64_t offset = (kh * g.dilation[kRowAxis] - g.pad_begin[kRowAxis]) * width +
                             kw * g.dilation[kColumnAxis] - g.pad_begin[kColumnAxis];
      if (first) {
        sweep(y, x, begin, end, offset, 1, seed);
      } else {
        sweep(y, x, begin, end, offset, 1, tap);
      }
      first = false;
    }
  }
}

// One output row of MaxPool; the interior columns only when `interior` (else the flat sweep
// has done them).
void max_row(const WindowGeometry& g, const PoolColumns& columns, int64_t oh, bool interior,
             const float* x, float* y_row) {
  const AxisTaps rows = axis_taps(g, kRowAxis, oh);
  const auto fold = [](float best, float v) { return nan_max(best, v); };
  if (interior && rows.first < rows.last) {
    // The first tap of the first valid row seeds the maximum; every later tap folds in.
    const int64_t offset = -g.pad_begin[kColumnAxis];
    const float* row = x + (rows.start + rows.first * g.dilation[kRowAxis]) * g.input[kColumnAxis];
    sweep(y_row, row, columns.interior_begin, columns.interior_end, offset, g.stride[kColumnAxis],
          [](float, float v) { return v; });
    for (int64_t kw = 1; kw < g.kernel[kColumnAxis]; ++kw) {
      sweep(y_row, row, columns.interior_begin, columns.interior_end,
            offset + kw * g.dilation[kColumnAxis], g.stride[kColumnAxis], fold);
    }
    const AxisTaps later_rows{rows.start, rows.first + 1, rows.last};
    interior_row(g, columns, later_rows, x, y_row, fold);
  } else if (interior) {
    std::fill(y_row + columns.interior_begin, y_row + columns.interior_end,
              std::numeric_limits<float>::lowest());
  }
  border_columns(columns, g.output[kColumnAxis], y_row, [&](int64_t o) {
    return window_max(g, rows, columns.windows[static_cast<size_t>(o)], x);
  });
}

void average_row(const WindowGeometry& g, const PoolColumns& columns, bool count_include_pad,
                 int64_t oh, bool interior, const float* x, float* y_row) {
  const AxisTaps rows = axis_taps(g, kRowAxis, oh);
  if (interior) {
    std::fill(y_row + columns.interior_begin, y_row + columns.interior_end, 0.0f);
    interior_row(g, columns, rows, x, y_row, [](float sum, float v) { return sum + v; });
  }
  if (columns.interior_begin < columns.interior_end) {
    AxisTaps cols{0, 0, g.kernel[kColumnAxis]};
    cols.start = columns.windows[static_cast<size_t>(columns.interior_begin)].start;
    const int64_t count = window_count(g, count_include_pad, rows, cols);
    for (int64_t o = columns.interior_begin; o < columns.interior_end; ++o) {
      y_row[o] = count > 0 ? y_row[o] / static_cast<float>(count) : 0.0f;
    }
  }
  border_columns(columns, g.output[kColumnAxis], y_row, [&](int64_t o) {
    const AxisTaps& cols = columns.windows[static_cast<size_t>(o)];
    const int64_t count = window_count(g, count_include_pad, rows, cols);
    return count > 0 ? window_sum(g, rows, cols, x) / static_cast<float>(count) : 0.0f;
  });
}

}  // namespace

ONEPOOL_ISA_CLONES void max_plane_2d(const WindowGeometry& g, const PoolColumns& columns,
                                     const float* x, float* y) {
  const int64_t width = g.output[kColumnAxis];
  if (columns.flat_rows_begin < columns.flat_rows_end) {
    flat_sweep(
        g, columns, x, y, [](float, float v) { return v; },
        [](float best, float v) { return nan_max(best, v); });
  }
  for (int64_t oh = 0; oh < g.output[kRowAxis]; ++oh) {
    max_row(g, columns, oh, !is_flat_row(columns, oh), x, y + oh * width);
  }
}

ONEPOOL_ISA_CLONES void average_plane_2d(const WindowGeometry& g, const PoolColumns& columns,
                                         bool count_include_pad, const float* x, float* y) {
  const int64_t width = g.output[kColumnAxis];
  if (columns.flat_rows_begin < columns.flat_rows_end) {
    flat_sweep(
        g, columns, x, y, [](float, float v) { return 0.0f + v; },
        [](float sum, float v) { return sum + v; });
  }
  for (int64_t oh = 0; oh < g.output[kRowAxis]; ++oh) {
    average_row(g, columns, count_include_pad, oh, !is_flat_row(columns, oh), x, y + oh * width);
  }
}

}  // namespace onepool::cpu::nn
