// GridSample (2-D): Y[n, c, h, w] samples X[n, c] at grid[n, h, w] = (x, y) in [-1, 1].
//
// For each output pixel, as the ONNX reference and ONNX Runtime do:
//   1. denormalize: align_corners ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2;
//   2. nearest mode rounds half to even;
//   3. a coordinate outside [lo, hi] (the pixel centres [0, size - 1] with align_corners, else
//      the pixel edges [-0.5, size - 0.5]) is clamped to [0, size - 1] (border) or reflected
//      into [lo, hi] (reflection); zeros leaves it;
//   4. sample: nearest reads one pixel, bilinear 2x2, bicubic 4x4 (Keys, A = -0.75); a tap outside
//      the image reads 0 (zeros), the clamped pixel (border) or the reflected one (reflection).
// Parallel over (n, output row); the taps of a pixel are computed once for all channels.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"

namespace onepool::cpu {
namespace {

enum class SampleMode : uint8_t { kNearest, kLinear, kCubic };
enum class PaddingMode : uint8_t { kZeros, kBorder, kReflection };

struct GridSampleGeometry {
  int64_t batch = 0, channels = 0;
  int64_t in_h = 0, in_w = 0;
  int64_t out_h = 0, out_w = 0;
};

// Reflects v into [lo, hi] by folding at the nearer border until it lies inside. The fold count
// stays a double: a far coordinate (1e30) has one no integer type holds.
double reflect(double v, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0.0) return lo;
  if (v < lo) {
    const double d = lo - v;
    const double n = std::floor(d / range);
    const double r = d - n * range;
    return std::fmod(n, 2.0) == 0.0 ? lo + r : hi - r;
  }
  if (v > hi) {
    const double d = v - hi;
    const double n = std::floor(d / range);
    const double r = d - n * range;
    return std::fmod(n, 2.0) == 0.0 ? hi - r : lo + r;
  }
  return v;
}

// Keys cubic convolution weights of the taps at offsets -1, 0, 1, 2 for fraction t in [0, 1).
std::array<double, 4> cubic_weights(double t) {
  constexpr double A = -0.75;
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

template <class T>
class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GridSampleGeometry g, SampleMode mode, PaddingMode padding, bool align_corners)
      : g_(g), mode_(mode), padding_(padding), align_corners_(align_corners) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    const T* grid = context.inputs[1].as<const T>();
    T* y = context.outputs[0].as<T>();
    const int64_t plane = g_.in_h * g_.in_w;
    const int64_t out_plane = g_.out_h * g_.out_w;
    context.threads->parallel_for(g_.batch * g_.out_h, 1, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / g_.out_h;
        const int64_t h = row % g_.out_h;
        for (int64_t w = 0; w < g_.out_w; ++w) {
          const T* point = grid + ((n * g_.out_h + h) * g_.out_w + w) * 2;
          const double sx = source(static_cast<double>(point[0]), g_.in_w);
          const double sy = source(static_cast<double>(point[1]), g_.in_h);
          for (int64_t c = 0; c < g_.channels; ++c) {
            const T* image = x + (n * g_.channels + c) * plane;
            y[(n * g_.channels + c) * out_plane + h * g_.out_w + w] =
                static_cast<T>(sample(image, sx, sy));
          }
        }
      }
    });
    return Status::ok();
  }

 private:
  // The reflection bounds of an axis of `size` pixels: centres or edges.
  double low_bound() const { return align_corners_ ? 0.0 : -0.5; }
  double high_bound(int64_t size) const {
    return static_cast<double>(size) - (align_corners_ ? 1.0 : 0.5);
  }

  // Steps 1-3: the source coordinate along an axis of `size` pixels.
  double source(double v, int64_t size) const {
    const double extent = static_cast<double>(size);
    double s = align_corners_ ? (v + 1) / 2 * (extent - 1) : ((v + 1) * extent - 1) / 2;
    if (mode_ == SampleMode::kNearest) s = std::nearbyint(s);
    const double lo = low_bound();
    const double hi = high_bound(size);
    if ((s >= lo && s <= hi) || !std::isfinite(s)) return s;
    if (padding_ == PaddingMode::kBorder) return std::clamp(s, 0.0, extent - 1);
    if (padding_ == PaddingMode::kReflection) return reflect(s, lo, hi);
    return s;
  }

  // One tap at integer (r, c), with the padding rule for taps outside the image.
  double pixel(const T* image, int64_t r, int64_t c) const {
    if (padding_ == PaddingMode::kBorder) {
      r = std::clamp<int64_t>(r, 0, g_.in_h - 1);
      c = std::clamp<int64_t>(c, 0, g_.in_w - 1);
    } else if (padding_ == PaddingMode::kReflection) {
      r = static_cast<int64_t>(reflect(static_cast<double>(r), low_bound(), high_bound(g_.in_h)));
      c = static_cast<int64_t>(reflect(static_cast<double>(c), low_bound(), high_bound(g_.in_w)));
    }
    // Zeros padding, and a last guard for the others: never read outside the image.
    if (r < 0 || r >= g_.in_h || c < 0 || c >= g_.in_w) return 0.0;
    return static_cast<double>(image[r * g_.in_w + c]);
  }

  // Step 4.
  double sample(const T* image, double sx, double sy) const {
    // A NaN, infinite or huge coordinate (only zeros padding leaves one far outside) samples
    // nothing: 0 with zeros padding, NaN otherwise. This also keeps the integer casts defined.
    constexpr double kFar = 1e15;
    if (!(std::abs(sx) < kFar && std::abs(sy) < kFar)) {
      return padding_ == PaddingMode::kZeros && !std::isnan(sx) && !std::isnan(sy) ? 0.0
                                                                                   : std::nan("");
    }
    if (mode_ == SampleMode::kNearest) {
      return pixel(image, static_cast<int64_t>(sy), static_cast<int64_t>(sx));
    }
    const double fx = std::floor(sx), fy = std::floor(sy);
    const auto x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
    const double tx = sx - fx, ty = sy - fy;
    if (mode_ == SampleMode::kLinear) {
      const double top = (1 - tx) * pixel(image, y0, x0) + tx * pixel(image, y0, x0 + 1);
      const double bottom = (1 - tx) * pixel(image, y0 + 1, x0) + tx * pixel(image, y0 + 1, x0 + 1);
      return (1 - ty) * top + ty * bottom;
    }
    const std::array<double, 4> wx = cubic_weights(tx), wy = cubic_weights(ty);
    double sum = 0.0;
    for (int64_t i = 0; i < 4; ++i) {
      double row = 0.0;
      for (int64_t j = 0; j < 4; ++j) {
        row += wx[static_cast<size_t>(j)] * pixel(image, y0 - 1 + i, x0 - 1 + j);
      }
      sum += wy[static_cast<size_t>(i)] * row;
    }
    return sum;
  }

  GridSampleGeometry g_;
  SampleMode mode_;
  PaddingMode padding_;
  bool align_corners_;
};

Expected<PreparedKernel> make_grid_sample_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected inputs X, grid and output Y");
  }
  const Value& x = node.input(0);
  const Value& grid = node.input(1);
  if (x.shape.rank() != 4) {
    return node.error(StatusCode::kUnsupported, "input '", x.name, "' has shape ",
                      x.shape.to_string(), ": only 2-D sampling ([N, C, H, W]) is supported");
  }
  if (grid.shape.rank() != 4 || grid.shape[0] != x.shape[0] || grid.shape[3] != 2) {
    return node.error(StatusCode::kInvalidModel, "grid '", grid.name, "': expected [", x.shape[0],
                      ", H_out, W_out, 2], got ", grid.shape.to_string());
  }
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 1, x.dtype));
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, x.dtype));
  const Shape expected{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]};
  if (node.output(0).shape != expected) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", expected.to_string(), ", got ",
                      node.output(0).shape.to_string());
  }
  const auto& attributes = node.node().attributes;
  const std::string mode_name = attributes.get_string("mode", "bilinear");
  SampleMode mode = SampleMode::kLinear;
  if (mode_name == "nearest") {
    mode = SampleMode::kNearest;
  } else if (mode_name == "bicubic" || mode_name == "cubic") {
    mode = SampleMode::kCubic;
  } else if (mode_name != "bilinear" && mode_name != "linear") {
    return node.error(StatusCode::kInvalidModel, "attribute 'mode' must be bilinear, nearest ",
                      "or bicubic (linear, cubic), got '", mode_name, "'");
  }
  const std::string padding_name = attributes.get_string("padding_mode", "zeros");
  PaddingMode padding = PaddingMode::kZeros;
  if (padding_name == "border") {
    padding = PaddingMode::kBorder;
  } else if (padding_name == "reflection") {
    padding = PaddingMode::kReflection;
  } else if (padding_name != "zeros") {
    return node.error(StatusCode::kInvalidModel, "attribute 'padding_mode' must be zeros, ",
                      "border or reflection, got '", padding_name, "'");
  }
  const bool align_corners = attributes.get_int("align_corners", 0) != 0;
  const GridSampleGeometry geometry{x.shape[0], x.shape[1],    x.shape[2],
                                    x.shape[3], grid.shape[1], grid.shape[2]};
  return visit_dtype<kFloatTypes>(
      node, describe_input(node, 0), x.dtype, [&](auto tag) -> Expected<PreparedKernel> {
        using T = typename decltype(tag)::type;
        PreparedKernel prepared;
        prepared.kernel =
            std::make_unique<GridSampleKernel<T>>(geometry, mode, padding, align_corners);
        return prepared;
      });
}

}  // namespace

void register_grid_sample_kernel(KernelRegistry& registry) {
  registry.add("GridSample", &make_grid_sample_kernel);
}

}  // namespace onepool::cpu
