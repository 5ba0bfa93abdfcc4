// ConvInteger and QLinearConv: a direct convolution over 8-bit x and w, accumulated in int32 per
// output-channel plane (quant_common.h). Each output channel reads its group's input planes tap
// by tap, so no column matrix is needed; padding taps are skipped, which is the spec's padding
// with the x zero point (contributing (x_zero - x_zero) * w = 0). QLinearConv adds the int32
// bias and requantizes each plane, held in the workspace.
#include <memory>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/quant_common.h"

namespace onepool::cpu::quant {
namespace {

using nn::valid_output_range;
using nn::ValidRange;
using nn::WindowGeometry;

struct ConvShape {
  WindowGeometry geometry;
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t group = 1;
};

// acc[output plane] = sum over the group's channels and kernel taps of
// (w - w_zero) * (x - x_zero), wrapping in int32. `x` holds `channels` input planes, `w` the
// output channel's channels * kernel_size weights.
template <class X, class W>
void conv_plane(const WindowGeometry& g, const X* x, int64_t channels, int32_t x_zero, const W* w,
                int32_t w_zero, int32_t* acc) {
  std::fill(acc, acc + g.output_size(), 0);
  for (int64_t c = 0; c < channels; ++c) {
    const X* plane = x + c * g.input_size();
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t offset_d = kd * g.dilation[0] - g.pad_begin[0];
      const ValidRange rd = valid_output_range(offset_d, g.stride[0], g.input[0], g.output[0]);
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t offset_h = kh * g.dilation[1] - g.pad_begin[1];
        const ValidRange rh = valid_output_range(offset_h, g.stride[1], g.input[1], g.output[1]);
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const int64_t offset_w = kw * g.dilation[2] - g.pad_begin[2];
          const ValidRange rw = valid_output_range(offset_w, g.stride[2], g.input[2], g.output[2]);
          const int64_t tap = ((c * g.kernel[0] + kd) * g.kernel[1] + kh) * g.kernel[2] + kw;
          const int32_t wv = static_cast<int32_t>(w[tap]) - w_zero;
          if (wv == 0) continue;
          for (int64_t od = rd.first; od < rd.last; ++od) {
            const int64_t id = od * g.stride[0] + offset_d;
            for (int64_t oh = rh.first; oh < rh.last; ++oh) {
              const int64_t ih = oh * g.stride[1] + offset_h;
              const X* in_row = plane + (id * g.input[1] + ih) * g.input[2];
              int32_t* out_row = acc + (od * g.output[1] + oh) * g.output[2];
              for (int64_t ow = rw.first; ow < rw.last; ++ow) {
                const int32_t xv =
                    static_cast<int32_t>(in_row[ow * g.stride[2] + offset_w]) - x_zero;
                out_row[ow] = wrapping_add(out_row[ow], wv * xv);
              }
            }
          }
        }
      }
    }
  }
}

// Calls f(n, oc, x planes of oc's group, channels per group) for every output plane.
template <class F>
void for_each_plane(const ConvShape& s, F&& f) {
  const int64_t in_per_group = s.in_channels / s.group;
  const int64_t out_per_group = s.out_channels / s.group;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t oc = 0; oc < s.out_channels; ++oc) {
      const int64_t first_channel = n * s.in_channels + (oc / out_per_group) * in_per_group;
      f(n, oc, first_channel * s.geometry.input_size(), in_per_group);
    }
  }
}

template <class X, class W>
class ConvIntegerKernel final : public Kernel {
 public:
  ConvIntegerKernel(ConvShape shape, QuantParam x_zero, QuantParam w_zero)
      : shape_(shape), x_zero_(x_zero), w_zero_(w_zero) {}

  Status run(const RunContext& context) override {
    const X* x = context.inputs[0].as<const X>();
    const W* w = context.inputs[1].as<const W>();
    int32_t* y = context.outputs[0].as<int32_t>();
    const WindowGeometry& g = shape_.geometry;
    const int32_t x_zero = zero_point_at<X>(x_zero_, context, 0);
    const int64_t weights_per_output = shape_.in_channels / shape_.group * g.kernel_size();
    for_each_plane(shape_, [&](int64_t n, int64_t oc, int64_t x_offset, int64_t channels) {
      conv_plane(g, x + x_offset, channels, x_zero, w + oc * weights_per_output,
                 zero_point_at<W>(w_zero_, context, oc),
                 y + (n * shape_.out_channels + oc) * g.output_size());
    });
    return Status::ok();
  }

 private:
  ConvShape shape_;
  QuantParam x_zero_;
  QuantParam w_zero_;
};

struct QLinearConvParams {
  QuantParam x_scale, x_zero, w_scale, w_zero, y_scale, y_zero;
  bool has_bias = false;
};

template <class X, class W, class Q>
class QLinearConvKernel final : public Kernel {
 public:
  QLinearConvKernel(ConvShape shape, QLinearConvParams params) : shape_(shape), params_(params) {}

  Status run(const RunContext& context) override {
    const X* x = context.inputs[0].as<const X>();
    const W* w = context.inputs[3].as<const W>();
    const int32_t* bias = params_.has_bias ? context.inputs[8].as<const int32_t>() : nullptr;
    Q* y = context.outputs[0].as<Q>();
    auto* acc = reinterpret_cast<int32_t*>(context.workspace);  // one output plane
    const WindowGeometry& g = shape_.geometry;
    const int32_t x_zero = zero_point_at<X>(params_.x_zero, context, 0);
    const float x_scale = scale_at(params_.x_scale, context, 0);
    const float y_scale = scale_at(params_.y_scale, context, 0);
    const int32_t y_zero = zero_point_at<Q>(params_.y_zero, context, 0);
    const int64_t weights_per_output = shape_.in_channels / shape_.group * g.kernel_size();
    for_each_plane(shape_, [&](int64_t n, int64_t oc, int64_t x_offset, int64_t channels) {
      conv_plane(g, x + x_offset, channels, x_zero, w + oc * weights_per_output,
                 zero_point_at<W>(params_.w_zero, context, oc), acc);
      const int32_t b = bias ? bias[oc] : 0;
      const float multiplier = x_scale * scale_at(params_.w_scale, context, oc) / y_scale;
      Q* out = y + (n * shape_.out_channels + oc) * g.output_size();
      for (int64_t i = 0; i < g.output_size(); ++i) {
        out[i] = requantize<Q>(wrapping_add(acc[i], b), multiplier, y_zero);
      }
    });
    return Status::ok();
  }

 private:
  ConvShape shape_;
  QLinearConvParams params_;
};

// Shapes of x (input x_index) and w (w_index): channels, group, geometry, output shape.
Expected<ConvShape> plan_conv(const NodeContext& node, size_t x_index, size_t w_index) {
  // Step 1. Ranks, channels and group.
  const Shape& x = node.input(x_index).shape;
  const Shape& w = node.input(w_index).shape;
  if (x.rank() < 3 || x.rank() > 2 + nn::kMaxSpatialRank || w.rank() != x.rank()) {
    return node.error(StatusCode::kUnsupported, describe_input(node, x_index), " ", x.to_string(),
                      " and ", describe_input(node, w_index), " ", w.to_string(),
                      ": expected [N,C,spatial...] and [M,C/group,kernel...] with 1 to 3 "
                      "spatial axes");
  }
  ConvShape s;
  s.batch = x[0];
  s.in_channels = x[1];
  s.out_channels = w[0];
  s.group = node.node().attributes.get_int("group", 1);
  if (s.group < 1 || s.in_channels % s.group != 0 || s.out_channels % s.group != 0 ||
      w[1] * s.group != s.in_channels) {
    return node.error(StatusCode::kInvalidModel, "group ", s.group, ", ",
                      describe_input(node, x_index), " ", x.to_string(), " and ",
                      describe_input(node, w_index), " ", w.to_string(),
                      ": expected C and M divisible by group and w dim 1 = C / group");
  }
  // Step 2. Geometry (kernel from w, checked against kernel_shape when given).
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const std::vector<int64_t> attribute = node.node().attributes.get_ints("kernel_shape", kernel);
  if (attribute != kernel) {
    return node.error(StatusCode::kInvalidModel, "attribute 'kernel_shape' disagrees with ",
                      describe_input(node, w_index), " ", w.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(s.geometry, nn::make_forward_geometry(node, x, kernel, {}));
  Shape expected{s.batch, s.out_channels};
  for (int i = 0; i < s.geometry.spatial_rank; ++i) {
    expected.push_back(s.geometry.output[nn::normalized_axis(s.geometry.spatial_rank, i)]);
  }
  ONEPOOL_RETURN_IF_ERROR(nn::check_output_shape(node, 0, expected));
  ONEPOOL_RETURN_IF_ERROR(expected.element_count_checked().status());
  ONEPOOL_RETURN_IF_ERROR(w.element_count_checked().status());
  return s;
}

}  // namespace

// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32 y.
Expected<PreparedKernel> make_conv_integer(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 1));
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, DType::kInt32));
  ONEPOOL_ASSIGN_OR_RETURN(const ConvShape shape, plan_conv(node, 0, 1));
  const DType x_type = node.input(0).dtype;
  const DType w_type = node.input(1).dtype;
  ONEPOOL_ASSIGN_OR_RETURN(const QuantParam x_zero,
                           read_quant_param(node, 2, x_type, 1, true, "x_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(
      const QuantParam w_zero,
      read_quant_param(node, 3, w_type, shape.out_channels, true, "w_zero_point"));
  return visit_8bit(node, describe_input(node, 0), x_type, [&](auto x_tag) {
    return visit_8bit(
        node, describe_input(node, 1), w_type, [&](auto w_tag) -> Expected<PreparedKernel> {
          using X = typename decltype(x_tag)::type;
          using W = typename decltype(w_tag)::type;
          PreparedKernel result;
          result.kernel = std::make_unique<ConvIntegerKernel<X, W>>(shape, x_zero, w_zero);
          result.implementation = "direct int32";
          return result;
        });
  });
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?).
Expected<PreparedKernel> make_qlinear_conv(const NodeContext& node) {
  for (size_t i : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{6}}) {
    ONEPOOL_RETURN_IF_ERROR(require_input(node, i));
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_ASSIGN_OR_RETURN(const ConvShape shape, plan_conv(node, 0, 3));
  const DType x_type = node.input(0).dtype;
  const DType w_type = node.input(3).dtype;
  const DType y_type = node.output(0).dtype;
  const int64_t m = shape.out_channels;
  QLinearConvParams params;
  ONEPOOL_ASSIGN_OR_RETURN(params.x_scale,
                           read_quant_param(node, 1, DType::kFloat32, 1, false, "x_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.x_zero,
                           read_quant_param(node, 2, x_type, 1, true, "x_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(params.w_scale,
                           read_quant_param(node, 4, DType::kFloat32, m, false, "w_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.w_zero,
                           read_quant_param(node, 5, w_type, m, true, "w_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(params.y_scale,
                           read_quant_param(node, 6, DType::kFloat32, 1, false, "y_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.y_zero,
                           read_quant_param(node, 7, y_type, 1, true, "y_zero_point"));
  if (node.has_input(8)) {
    ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 8, DType::kInt32));
    if (!(node.input(8).shape == Shape{m})) {
      return node.error(StatusCode::kInvalidModel, describe_input(node, 8), ": expected shape [", m,
                        "], got ", node.input(8).shape.to_string());
    }
    params.has_bias = true;
  }
  ONEPOOL_ASSIGN_OR_RETURN(
      const int64_t plane_bytes,
      checked_mul(shape.geometry.output_size(), int64_t{sizeof(int32_t)}, "accumulator plane"));
  return visit_8bit(node, describe_input(node, 0), x_type, [&](auto x_tag) {
    return visit_8bit(node, describe_input(node, 3), w_type, [&](auto w_tag) {
      return visit_8bit(
          node, describe_output(node, 0), y_type, [&](auto y_tag) -> Expected<PreparedKernel> {
            using X = typename decltype(x_tag)::type;
            using W = typename decltype(w_tag)::type;
            using Q = typename decltype(y_tag)::type;
            PreparedKernel result;
            result.kernel = std::make_unique<QLinearConvKernel<X, W, Q>>(shape, params);
            result.workspace_bytes = static_cast<size_t>(plane_bytes);
            result.implementation = "direct int32 + requantize";
            return result;
          });
    });
  });
}

}  // namespace onepool::cpu::quant
