// The Resize / Upsample kernels. Nearest works on any dtype as an AxisMapCopy (one input offset
// per output index and axis). Linear and cubic work on float32 and interpolate the last two axes
// (or the last one for rank 1); every other axis must map to itself (scale 1), else the node is
// kUnsupported. Run time: per output element, taps_y * taps_x multiply-adds from prepared tables.
// Linear nodes take the separable fast path of resize_linear_2d.h (the same bits).
#include "runtime/cpu/kernels/resize.h"

#include <algorithm>
#include <cmath>

#include "runtime/cpu/kernels/resize_linear_2d.h"
#include "runtime/cpu/kernels/shape_axis_map.h"
#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

// Interpolates planes of [in_h, in_w] into [out_h, out_w] with prepared taps (x indices are
// element offsets within a row, y indices row numbers).
class InterpolateKernel final : public Kernel {
 public:
  InterpolateKernel(AxisTaps y, AxisTaps x, int64_t planes, int64_t in_h, int64_t in_w,
                    float extrapolation)
      : y_(std::move(y)),
        x_(std::move(x)),
        planes_(planes),
        in_h_(in_h),
        in_w_(in_w),
        extrapolation_(extrapolation) {}

  Status run(const RunContext& context) override {
    const float* in = context.inputs[0].as<const float>();
    float* out = context.outputs[0].as<float>();
    const auto out_h = static_cast<int64_t>(y_.outside.size());
    const auto out_w = static_cast<int64_t>(x_.outside.size());
    const int64_t min_rows = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, out_w));
    context.threads->parallel_for(planes_ * out_h, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t plane = row / out_h;
        interpolate_row(in + plane * in_h_ * in_w_, row % out_h, out + row * out_w);
      }
    });
    return Status::ok();
  }

 private:
  // Output row oy in chunks of kChunk columns: first each y tap's input row interpolated along
  // x into a stack buffer, then the y taps blended, a loop the compiler vectorizes. The sums
  // are the ones a per-element loop does, in the same order (row sums from 0 over the x taps,
  // then from 0 over the y taps), so the bits do not depend on the chunking.
  void interpolate_row(const float* plane, int64_t oy, float* out) const {
    const auto out_w = static_cast<int64_t>(x_.outside.size());
    if (y_.outside[static_cast<size_t>(oy)] != 0) {
      std::fill(out, out + out_w, extrapolation_);
      return;
    }
    for (int64_t first = 0; first < out_w; first += kChunk) {
      const int64_t count = std::min(kChunk, out_w - first);
      switch (x_.taps) {
        case 1:
          interpolate_chunk<1>(plane, oy, first, count, out + first);
          break;
        case 2:
          interpolate_chunk<2>(plane, oy, first, count, out + first);
          break;
        default:
          interpolate_chunk<4>(plane, oy, first, count, out + first);
          break;
      }
    }
  }

  template <int kTapsX>
  void interpolate_chunk(const float* plane, int64_t oy, int64_t first, int64_t count,
                         float* out) const {
    static_assert(kTapsX == 1 || kTapsX == 2 || kTapsX == 4);
    const int ty_count = y_.taps;
    const int tx_count = x_.taps;  // == kTapsX except cubic's 4 covering a smaller count
    float rows[4][kChunk];
    for (int ty = 0; ty < ty_count; ++ty) {
      const float* src = plane + y_.index[static_cast<size_t>(oy * ty_count + ty)] * in_w_;
      const int64_t* x_index = x_.index.data() + first * tx_count;
      const float* x_weight = x_.weight.data() + first * tx_count;
      for (int64_t i = 0; i < count; ++i) {
        float row_sum = 0.0f;
        for (int tx = 0; tx < kTapsX && tx < tx_count; ++tx) {
          row_sum += x_weight[i * tx_count + tx] * src[x_index[i * tx_count + tx]];
        }
        rows[ty][i] = row_sum;
      }
    }
    const float* y_weight = y_.weight.data() + oy * ty_count;
    std::fill(out, out + count, 0.0f);
    for (int ty = 0; ty < ty_count; ++ty) {
      const float weight = y_weight[ty];
      for (int64_t i = 0; i < count; ++i) out[i] += weight * rows[ty][i];
    }
    for (int64_t i = 0; i < count; ++i) {
      if (x_.outside[static_cast<size_t>(first + i)] != 0) out[i] = extrapolation_;
    }
  }

  static constexpr int64_t kChunk = 256;
  AxisTaps y_, x_;
  int64_t planes_, in_h_, in_w_;
  float extrapolation_;
};

// A trivial axis of one element (rank-1 inputs have no y axis).
AxisTaps single_tap() {
  AxisTaps taps;
  taps.index = {0};
  taps.weight = {1.0f};
  taps.outside = {0};
  return taps;
}

Expected<PreparedKernel> prepare_nearest(const NodeContext& node, const ResizeParams& params) {
  const Value& input = node.input(0);
  const Shape& out = node.output(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, input.dtype));
  const std::vector<int64_t> strides = contiguous_strides(input.shape);
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.rank()));
  for (int k = 0; k < out.rank(); ++k) {
    const AxisTaps taps = compute_axis_taps(params, k, input.shape[k], out[k]);
    for (int64_t o = 0; o < out[k]; ++o) {
      const bool outside = taps.outside[static_cast<size_t>(o)] != 0;
      tables[static_cast<size_t>(k)].push_back(outside ? AxisMapCopy::kFill
                                                       : taps.index[static_cast<size_t>(o)] *
                                                             strides[static_cast<size_t>(k)]);
    }
  }
  const uint64_t fill = element_bits(input.dtype, params.extrapolation_value);
  PreparedKernel prepared;
  prepared.kernel =
      std::make_unique<AxisMapKernel>(AxisMapCopy(std::move(tables), element_size, fill));
  return prepared;
}

enum class ResizePaths : uint8_t { kFastest, kGenericOnly };

// Whether any output index of the axis is tf_crop_and_resize's extrapolation value.
bool has_outside(const AxisTaps& taps) {
  return std::any_of(taps.outside.begin(), taps.outside.end(), [](uint8_t o) { return o != 0; });
}

Expected<PreparedKernel> prepare_interpolate(const NodeContext& node, const ResizeParams& params,
                                             ResizePaths paths) {
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  if (node.input(0).dtype != DType::kFloat32) {
    return node.error(StatusCode::kUnsupported, "linear/cubic resize of ",
                      dtype_name(node.input(0).dtype), " (expected float32)");
  }
  const int rank = in.rank();
  int64_t planes = 1;
  for (int k = 0; k + 2 < rank; ++k) {
    if (!compute_axis_taps(params, k, in[k], out[k]).is_identity()) {
      return node.error(StatusCode::kUnsupported, "linear/cubic resize of axis ", k, " (",
                        in.to_string(), " -> ", out.to_string(),
                        "): only the last two axes may be resized");
    }
    planes *= in[k];
  }
  const int y_axis = rank - 2, x_axis = rank - 1;
  AxisTaps y =
      rank >= 2 ? compute_axis_taps(params, y_axis, in[y_axis], out[y_axis]) : single_tap();
  AxisTaps x = compute_axis_taps(params, x_axis, in[x_axis], out[x_axis]);
  const int64_t in_h = rank >= 2 ? in[y_axis] : 1;
  if (paths == ResizePaths::kFastest && params.mode == ResizeMode::kLinear && !has_outside(y) &&
      !has_outside(x)) {
    const LinearAxisTaps y_taps{y.taps, y.index, y.weight}, x_taps{x.taps, x.index, x.weight};
    if (linear_2d_fits(y_taps, x_taps)) {
      return make_linear_2d_kernel(node, y_taps, x_taps, planes, in_h, in[x_axis]);
    }
  }
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<InterpolateKernel>(std::move(y), std::move(x), planes, in_h,
                                                        in[x_axis], params.extrapolation_value);
  return prepared;
}

// The taps were computed from scales implied by the static shapes (output / input). When the
// scales arrive as a runtime tensor, check at run time that they are those scales: floor(in *
// scale) == out holds for many scales, and a different scale moves every sample point.
class RuntimeScalesGuard final : public Kernel {
 public:
  RuntimeScalesGuard(std::unique_ptr<Kernel> inner, size_t scales_input, std::vector<double> scales,
                     std::string node_name)
      : inner_(std::move(inner)),
        scales_input_(scales_input),
        scales_(std::move(scales)),
        node_name_(std::move(node_name)) {}

  Status run(const RunContext& context) override {
    const TensorView& view = context.inputs[scales_input_];
    const auto* values = static_cast<const float*>(view.data);
    const auto count = static_cast<size_t>(view.shape.element_count());
    for (size_t k = 0; k < count && k < scales_.size(); ++k) {
      if (std::fabs(static_cast<double>(values[k]) - scales_[k]) > 1e-6 * std::fabs(scales_[k])) {
        return make_status(StatusCode::kUnsupported, "node '", node_name_, "' (Resize): runtime ",
                           "scale ", values[k], " on axis ", k,
                           " differs from output/input = ", scales_[k],
                           "; the CPU kernel needs constant scales for that");
      }
    }
    return inner_->run(context);
  }

 private:
  std::unique_ptr<Kernel> inner_;
  size_t scales_input_;
  std::vector<double> scales_;
  std::string node_name_;
};

Expected<PreparedKernel> guard_runtime_scales(const NodeContext& node, const ResizeParams& params,
                                              PreparedKernel prepared) {
  const bool legacy = node.node().op_type == "Upsample" || node.graph().opset < 11;
  const size_t index = legacy ? 1 : 2;
  if (node.node().attributes.has("scales") || !node.has_input(index) ||
      node.constant_input(index) != nullptr || node.input(index).shape.element_count() == 0) {
    return prepared;
  }
  if (node.input(index).dtype != DType::kFloat32) {
    return node.error(StatusCode::kUnsupported, "runtime scales of dtype ",
                      dtype_name(node.input(index).dtype));
  }
  prepared.kernel = std::make_unique<RuntimeScalesGuard>(std::move(prepared.kernel), index,
                                                         params.scales, node.node().name);
  return prepared;
}

Expected<PreparedKernel> make_resize(const NodeContext& node, ResizePaths paths) {
  ONEPOOL_ASSIGN_OR_RETURN(ResizeParams params, read_resize_params(node));
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  if (node.input(0).dtype != node.output(0).dtype) {
    return node.error(StatusCode::kInvalidModel, "output dtype ", dtype_name(node.output(0).dtype),
                      " differs from input dtype ", dtype_name(node.input(0).dtype));
  }
  for (int k = 0; k < in.rank(); ++k) {
    if (in[k] == 0 && out[k] != 0) {
      return node.error(StatusCode::kInvalidModel, "cannot resize empty axis ", k, " of ",
                        in.to_string(), " to ", out.to_string());
    }
  }
  if (out.rank() == 0 || out.element_count() == 0) {
    return node.error(StatusCode::kUnsupported, "resize to an empty or scalar output ",
                      out.to_string());
  }
  Expected<PreparedKernel> prepared = params.mode == ResizeMode::kNearest
                                          ? prepare_nearest(node, params)
                                          : prepare_interpolate(node, params, paths);
  if (!prepared) return prepared;
  return guard_runtime_scales(node, params, std::move(prepared).value());
}

}  // namespace

Expected<PreparedKernel> make_resize_kernel(const NodeContext& node) {
  return make_resize(node, ResizePaths::kFastest);
}

Expected<PreparedKernel> make_resize_kernel_generic(const NodeContext& node) {
  return make_resize(node, ResizePaths::kGenericOnly);
}

}  // namespace onepool::cpu::data
