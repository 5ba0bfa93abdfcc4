// Coordinate mapping and interpolation taps for Resize, after the ONNX reference implementation.
#include <algorithm>
#include <cmath>

#include "runtime/cpu/kernels/resize.h"

namespace onepool::cpu::data {

namespace {

struct Coordinate {
  double x = 0.0;
  bool outside = false;  // tf_crop_and_resize: the value is the extrapolation value
};

// The input coordinate of output index x along an axis.
Coordinate original_coordinate(const ResizeParams& params, int axis, double x, int64_t in_dim) {
  const double scale = params.scales[static_cast<size_t>(axis)];
  const double in_width = static_cast<double>(in_dim);
  const double out_width = scale * in_width;
  switch (params.coordinates) {
    case CoordinateMode::kAlignCorners:
      return {out_width == 1.0 ? 0.0 : x * (in_width - 1.0) / (out_width - 1.0)};
    case CoordinateMode::kAsymmetric:
      return {x / scale};
    case CoordinateMode::kPytorchHalfPixel:
      return {out_width == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5};
    case CoordinateMode::kTfHalfPixelForNn:
      return {(x + 0.5) / scale};
    case CoordinateMode::kTfCropAndResize: {
      const size_t rank = params.roi.size() / 2;
      const double start = params.roi[static_cast<size_t>(axis)];
      const double end = params.roi[rank + static_cast<size_t>(axis)];
      double x_ori = out_width == 1.0 ? (end - start) * (in_width - 1.0) / 2.0
                                      : x * (end - start) * (in_width - 1.0) / (out_width - 1.0);
      x_ori += start * (in_width - 1.0);
      return {x_ori, x_ori < 0.0 || x_ori > in_width - 1.0};
    }
    case CoordinateMode::kHalfPixel:
      break;
  }
  return {(x + 0.5) / scale - 0.5};
}

int64_t nearest_index(const ResizeParams& params, int axis, double x) {
  const double lower = std::floor(x);
  if (x == lower) return static_cast<int64_t>(x);
  const double ratio = x - lower;
  switch (params.nearest) {
    case NearestMode::kRoundPreferFloor:
      return static_cast<int64_t>(ratio <= 0.5 ? lower : lower + 1);
    case NearestMode::kRoundPreferCeil:
      return static_cast<int64_t>(ratio < 0.5 ? lower : lower + 1);
    case NearestMode::kFloor:
      return static_cast<int64_t>(lower);
    case NearestMode::kCeil:
      return static_cast<int64_t>(lower + 1);
    case NearestMode::kSimple:
      return static_cast<int64_t>(params.scales[static_cast<size_t>(axis)] < 1.0 ? lower + 1
                                                                                 : lower);
  }
  return static_cast<int64_t>(lower);
}

void cubic_coefficients(double r, double a, double* c) {
  const double s = 1.0 - r;
  c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
  c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
  c[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

// Raw taps (unclamped index, weight) of one output coordinate; returns the tap count.
int raw_taps(const ResizeParams& params, int axis, double x, int64_t* index, double* weight) {
  const double lower = std::floor(x);
  const double ratio = x - lower;
  const auto base = static_cast<int64_t>(lower);
  switch (params.mode) {
    case ResizeMode::kNearest:
      index[0] = nearest_index(params, axis, x);
      weight[0] = 1.0;
      return 1;
    case ResizeMode::kLinear:
      index[0] = base;
      index[1] = base + 1;
      weight[0] = 1.0 - ratio;
      weight[1] = ratio;
      return 2;
    case ResizeMode::kCubic:
      cubic_coefficients(ratio, params.cubic_a, weight);
      for (int t = 0; t < 4; ++t) index[t] = base - 1 + t;
      return 4;
  }
  return 0;
}

// Excludes (exclude_outside) or clamps out-of-range taps, merges equal indices, drops zeros.
int finalize_taps(const ResizeParams& params, int count, int64_t in_dim, int64_t* index,
                  double* weight) {
  if (params.exclude_outside && params.mode != ResizeMode::kNearest) {
    double sum = 0.0;
    for (int t = 0; t < count; ++t) {
      if (index[t] < 0 || index[t] >= in_dim) weight[t] = 0.0;
      sum += weight[t];
    }
    for (int t = 0; t < count && sum != 0.0; ++t) weight[t] /= sum;
  }
  int kept = 0;
  for (int t = 0; t < count; ++t) {
    const int64_t clamped = std::clamp<int64_t>(index[t], 0, in_dim - 1);
    const double tap_weight = weight[t];  // read before slot `kept` (<= t) is overwritten
    if (tap_weight == 0.0) continue;
    int slot = 0;
    while (slot < kept && index[slot] != clamped) ++slot;
    if (slot == kept) {
      index[kept] = clamped;
      weight[kept++] = 0.0;
    }
    weight[slot] += tap_weight;
  }
  return kept;
}

}  // namespace

bool AxisTaps::is_identity() const {
  for (size_t o = 0; o < outside.size(); ++o) {
    const size_t first = o * static_cast<size_t>(taps);
    if (outside[o] != 0 || index[first] != static_cast<int64_t>(o) || weight[first] != 1.0f) {
      return false;
    }
    for (int t = 1; t < taps; ++t) {
      if (weight[first + static_cast<size_t>(t)] != 0.0f) return false;
    }
  }
  return true;
}

AxisTaps compute_axis_taps(const ResizeParams& params, int axis, int64_t in_dim, int64_t out_dim) {
  struct Raw {
    int64_t index[4];
    double weight[4];
    int count;
    bool outside;
  };
  std::vector<Raw> raws(static_cast<size_t>(out_dim));
  AxisTaps taps;
  for (int64_t o = 0; o < out_dim; ++o) {
    Raw& raw = raws[static_cast<size_t>(o)];
    const Coordinate c = original_coordinate(params, axis, static_cast<double>(o), in_dim);
    raw.outside = c.outside;
    raw.count = raw_taps(params, axis, c.x, raw.index, raw.weight);
    raw.count = finalize_taps(params, raw.count, in_dim, raw.index, raw.weight);
    taps.taps = std::max(taps.taps, raw.count);
  }
  const auto width = static_cast<size_t>(taps.taps);
  taps.index.assign(static_cast<size_t>(out_dim) * width, 0);
  taps.weight.assign(static_cast<size_t>(out_dim) * width, 0.0f);
  taps.outside.assign(static_cast<size_t>(out_dim), 0);
  for (size_t o = 0; o < raws.size(); ++o) {
    const Raw& raw = raws[o];
    taps.outside[o] = raw.outside ? 1 : 0;
    for (int t = 0; t < raw.count; ++t) {
      taps.index[o * width + static_cast<size_t>(t)] = raw.index[t];
      taps.weight[o * width + static_cast<size_t>(t)] = static_cast<float>(raw.weight[t]);
    }
    // Unused slots repeat the first index with weight 0 so the kernel never reads out of range.
    for (size_t t = static_cast<size_t>(raw.count); t < width; ++t) {
      taps.index[o * width + t] = raw.count > 0 ? raw.index[0] : 0;
    }
  }
  return taps;
}

}  // namespace onepool::cpu::data
