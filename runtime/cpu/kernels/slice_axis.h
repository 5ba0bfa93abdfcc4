// One sliced axis per the ONNX clamping rules, shared by Slice's kernels (constant positions at
// prepare, run-time positions at run).
#pragma once

#include <algorithm>
#include <cstdint>

namespace onepool::cpu::data {

/// The first index and the element count of one sliced axis.
struct AxisRange {
  int64_t start = 0, step = 1, count = 0;
};

/// Negative positions count from the end; then both are clamped to the axis (ONNX Slice-13).
inline AxisRange clamp_axis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  AxisRange range;
  range.step = step;
  if (dim == 0) return range;
  if (step > 0) {
    range.start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    range.count = end > range.start ? (end - range.start + step - 1) / step : 0;
  } else {
    range.start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    range.count = range.start > end ? (range.start - end + (-step) - 1) / (-step) : 0;
  }
  return range;
}

}  // namespace onepool::cpu::data
