// RoiAlign (opset 10/16): for each region of interest and channel, each of the
// output_height x output_width bins averages (or takes the max of) a grid of bilinear samples,
// exactly as ONNX Runtime computes it:
//   - roi corners scale by spatial_scale, minus 0.5 with half_pixel (opset 16's default);
//     output_half_pixel (the opset-10 behaviour) instead widens a roi to at least 1 x 1;
//   - the grid is sampling_ratio^2 samples per bin, or ceil(roi size / bins) per axis when 0;
//   - a sample beyond one pixel outside the image contributes 0; others clamp to the edge;
//   - max mode takes, per sample, the largest of the four weighted taps (ONNX Runtime's rule).
// A batch index outside [0, N) or a non-finite roi is kInvalidArgument naming the roi; a roi so
// large that its sampling grid exceeds 2^24 samples per bin is refused rather than looped over.
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"

namespace onepool::cpu {
namespace {

struct RoiAlignParameters {
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t rois = 0, out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;
  double spatial_scale = 1.0;
  bool half_pixel = true;
  bool max_mode = false;
};

template <class T>
class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(std::string node, RoiAlignParameters p) : node_(std::move(node)), p_(p) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    const T* rois = context.inputs[1].as<const T>();
    const TensorView& batch_indices = context.inputs[2];
    T* y = context.outputs[0].as<T>();
    // Step 1. Validate every roi before writing.
    for (int64_t r = 0; r < p_.rois; ++r) {
      const int64_t b = batch_index(batch_indices, r);
      if (b < 0 || b >= p_.batch) {
        return make_status(StatusCode::kInvalidArgument, node_, ": batch_indices[", r, "] = ", b,
                           " is out of range (expected [0, ", p_.batch - 1, "])");
      }
      const T* roi = rois + 4 * r;
      for (int k = 0; k < 4; ++k) {
        if (!std::isfinite(static_cast<double>(roi[k]))) {
          return make_status(StatusCode::kInvalidArgument, node_, ": roi ", r,
                             " has a non-finite coordinate");
        }
      }
      const Geometry g = geometry(roi);
      if (g.grid_h * g.grid_w > (int64_t{1} << 24)) {
        return make_status(StatusCode::kInvalidArgument, node_, ": roi ", r, " needs a ", g.grid_h,
                           " x ", g.grid_w, " sampling grid per bin (limit 2^24)");
      }
    }
    // Step 2. Bins, parallel over (roi, channel).
    context.threads->parallel_for(p_.rois * p_.channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t r = task / p_.channels, c = task % p_.channels;
        const Geometry g = geometry(rois + 4 * r);
        const T* image =
            x + (batch_index(batch_indices, r) * p_.channels + c) * p_.height * p_.width;
        T* out = y + task * p_.out_h * p_.out_w;
        for (int64_t ph = 0; ph < p_.out_h; ++ph) {
          for (int64_t pw = 0; pw < p_.out_w; ++pw) {
            out[ph * p_.out_w + pw] = static_cast<T>(bin(image, g, ph, pw));
          }
        }
      }
    });
    return Status::ok();
  }

 private:
  struct Geometry {
    double start_h, start_w, bin_h, bin_w;
    int64_t grid_h, grid_w;
  };

  static int64_t batch_index(const TensorView& view, int64_t r) {
    if (view.dtype == DType::kInt32) return view.as<const int32_t>()[r];
    return view.as<const int64_t>()[r];
  }

  Geometry geometry(const T* roi) const {
    const double offset = p_.half_pixel ? 0.5 : 0.0;
    const double start_w = static_cast<double>(roi[0]) * p_.spatial_scale - offset;
    const double start_h = static_cast<double>(roi[1]) * p_.spatial_scale - offset;
    double width = static_cast<double>(roi[2]) * p_.spatial_scale - offset - start_w;
    double height = static_cast<double>(roi[3]) * p_.spatial_scale - offset - start_h;
    if (!p_.half_pixel) {
      width = std::max(width, 1.0);
      height = std::max(height, 1.0);
    }
    const double bin_h = height / static_cast<double>(p_.out_h);
    const double bin_w = width / static_cast<double>(p_.out_w);
    // Clamped before the cast: a huge roi is refused by the caller, never cast out of range.
    auto grid = [&](double bin) {
      return p_.sampling_ratio > 0 ? p_.sampling_ratio
                                   : static_cast<int64_t>(std::min(std::ceil(bin), 1e9));
    };
    return {start_h, start_w, bin_h, bin_w, grid(bin_h), grid(bin_w)};
  }

  // One bilinear sample at (yy, xx) as the four weighted taps (ONNX Runtime's pre-calc rule).
  void taps(const T* image, double yy, double xx, double out[4]) const {
    out[0] = out[1] = out[2] = out[3] = 0.0;
    const auto H = static_cast<double>(p_.height), W = static_cast<double>(p_.width);
    if (yy < -1.0 || yy > H || xx < -1.0 || xx > W) return;
    double y = std::max(yy, 0.0), x = std::max(xx, 0.0);
    auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
    int64_t y_high = y_low + 1, x_high = x_low + 1;
    if (y_low >= p_.height - 1) {
      y_high = y_low = p_.height - 1;
      y = static_cast<double>(y_low);
    }
    if (x_low >= p_.width - 1) {
      x_high = x_low = p_.width - 1;
      x = static_cast<double>(x_low);
    }
    const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
    const double hy = 1.0 - ly, hx = 1.0 - lx;
    auto at = [&](int64_t r, int64_t c) { return static_cast<double>(image[r * p_.width + c]); };
    out[0] = hy * hx * at(y_low, x_low);
    out[1] = hy * lx * at(y_low, x_high);
    out[2] = ly * hx * at(y_high, x_low);
    out[3] = ly * lx * at(y_high, x_high);
  }

  double bin(const T* image, const Geometry& g, int64_t ph, int64_t pw) const {
    double sum = 0.0, max = 0.0;
    bool first = true;
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      const double yy = g.start_h + static_cast<double>(ph) * g.bin_h +
                        (static_cast<double>(iy) + 0.5) * g.bin_h / static_cast<double>(g.grid_h);
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        const double xx = g.start_w + static_cast<double>(pw) * g.bin_w +
                          (static_cast<double>(ix) + 0.5) * g.bin_w / static_cast<double>(g.grid_w);
        double t[4];
        taps(image, yy, xx, t);
        if (!p_.max_mode) {
          sum += t[0] + t[1] + t[2] + t[3];
          continue;
        }
        const double value = std::max(std::max(t[0], t[1]), std::max(t[2], t[3]));
        max = first ? value : std::max(max, value);
        first = false;
      }
    }
    if (p_.max_mode) return max;
    return sum / static_cast<double>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
  }

  std::string node_;
  RoiAlignParameters p_;
};

Expected<PreparedKernel> make_roi_align_kernel(const NodeContext& node) {
  for (size_t i = 0; i < 3; ++i) {
    if (!node.has_input(i)) {
      return node.error(StatusCode::kInvalidModel, "input ", i,
                        " is required (X, rois, batch_indices)");
    }
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is required");
  const Value& x = node.input(0);
  const Value& rois = node.input(1);
  const Value& batch = node.input(2);
  if (x.shape.rank() != 4) {
    return node.error(StatusCode::kInvalidModel, "X '", x.name, "': expected [N, C, H, W], got ",
                      x.shape.to_string());
  }
  if (rois.shape.rank() != 2 || rois.shape[1] != 4) {
    return node.error(StatusCode::kInvalidModel, "rois '", rois.name,
                      "': expected [num_rois, 4], got ", rois.shape.to_string());
  }
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 1, x.dtype));
  if ((batch.dtype != DType::kInt64 && batch.dtype != DType::kInt32) ||
      batch.shape != Shape{rois.shape[0]}) {
    return node.error(StatusCode::kInvalidModel, "batch_indices '", batch.name,
                      "': expected int64 [", rois.shape[0], "], got ", dtype_name(batch.dtype),
                      batch.shape.to_string());
  }
  const auto& attributes = node.node().attributes;
  RoiAlignParameters p;
  p.batch = x.shape[0];
  p.channels = x.shape[1];
  p.height = x.shape[2];
  p.width = x.shape[3];
  p.rois = rois.shape[0];
  p.out_h = attributes.get_int("output_height", 1);
  p.out_w = attributes.get_int("output_width", 1);
  p.sampling_ratio = attributes.get_int("sampling_ratio", 0);
  p.spatial_scale = attributes.get_float("spatial_scale", 1.0f);
  const std::string transform =
      attributes.get_string("coordinate_transformation_mode",
                            node.graph().opset >= 16 ? "half_pixel" : "output_half_pixel");
  const std::string mode = attributes.get_string("mode", "avg");
  if ((transform != "half_pixel" && transform != "output_half_pixel") ||
      (mode != "avg" && mode != "max")) {
    return node.error(StatusCode::kInvalidModel, "coordinate_transformation_mode '", transform,
                      "' or mode '", mode, "' is not one the spec defines");
  }
  p.half_pixel = transform == "half_pixel";
  p.max_mode = mode == "max";
  if (p.out_h < 1 || p.out_w < 1 || p.sampling_ratio < 0) {
    return node.error(StatusCode::kInvalidModel, "output_height ", p.out_h, ", output_width ",
                      p.out_w, " must be >= 1 and sampling_ratio ", p.sampling_ratio, " >= 0");
  }
  const Shape expected{p.rois, p.channels, p.out_h, p.out_w};
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, x.dtype));
  if (node.output(0).shape != expected) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", expected.to_string(), ", got ",
                      node.output(0).shape.to_string());
  }
  return visit_dtype<kFloatTypes>(
      node, describe_input(node, 0), x.dtype, [&](auto tag) -> Expected<PreparedKernel> {
        using T = typename decltype(tag)::type;
        PreparedKernel prepared;
        prepared.kernel = std::make_unique<RoiAlignKernel<T>>(describe_node(node.node()), p);
        return prepared;
      });
}

}  // namespace

void register_roi_align_kernel(KernelRegistry& registry) {
  registry.add("RoiAlign", &make_roi_align_kernel);
}

}  // namespace onepool::cpu
