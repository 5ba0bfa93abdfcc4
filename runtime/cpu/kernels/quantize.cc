// QuantizeLinear, DequantizeLinear (per tensor and per axis) and DynamicQuantizeLinear, and the
// registration of every quantized kernel. Scales are float32; quantized types are uint8, int8,
// uint16 and int16 (and int32 for DequantizeLinear). Blocked quantization (block_size) and the
// float8 types are not supported.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/quant_common.h"

namespace onepool::cpu {
namespace quant {

Expected<QuantParam> read_quant_param(const NodeContext& node, size_t index, DType dtype,
                                      int64_t channels, bool optional, const char* role) {
  QuantParam param;
  param.input = index;
  if (!node.has_input(index)) {
    if (optional) return param;
    return node.error(StatusCode::kInvalidModel, "input ", index, " (", role, ") is missing");
  }
  param.present = true;
  const Value& value = node.input(index);
  if (value.dtype != dtype) {
    return node.error(StatusCode::kUnsupported, describe_input(node, index), " (", role,
                      "): expected ", dtype_name(dtype), ", got ", dtype_name(value.dtype));
  }
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t count, value.shape.element_count_checked());
  if (count == 1 && value.shape.rank() <= 1) return param;
  if (value.shape.rank() == 1 && count == channels) {
    param.count = channels;
    return param;
  }
  return node.error(StatusCode::kUnsupported, describe_input(node, index), " (", role,
                    "): expected one element or a 1-D tensor of ", channels,
                    " (one per channel), got ", value.shape.to_string());
}

}  // namespace quant

namespace {

using quant::QuantParam;

// x viewed as [outer, channels, inner] around the quantization axis (channels 1: per tensor).
struct AxisLayout {
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
};

// Step 1 of both factories: the layout the scale input (1) implies and its QuantParam.
Status plan_axis(const NodeContext& node, AxisLayout& layout, QuantParam& scale) {
  if (node.node().attributes.get_int("block_size", 0) != 0) {
    return node.error(StatusCode::kUnsupported, "blocked quantization (block_size ",
                      node.node().attributes.get_int("block_size", 0), ") is not supported");
  }
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 1));
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_RETURN_IF_ERROR(require_same_shape(node, 0));
  const Shape& x = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t total, x.element_count_checked());
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t scale_count, node.input(1).shape.element_count_checked());
  layout = AxisLayout{1, 1, total};
  if (scale_count != 1 || node.input(1).shape.rank() == 1) {
    // Per axis (a 1-D scale): axis defaults to 1 and may be negative.
    int64_t axis = node.node().attributes.get_int("axis", 1);
    if (axis < 0) axis += x.rank();
    if (axis < 0 || axis >= x.rank()) {
      if (scale_count != 1) {
        return node.error(StatusCode::kInvalidModel, "attribute 'axis' ",
                          node.node().attributes.get_int("axis", 1), " is out of range for ",
                          describe_input(node, 0), " of rank ", x.rank());
      }
    } else {
      layout.channels = x[static_cast<int>(axis)];
      layout.outer = 1;
      for (int i = 0; i < axis; ++i) layout.outer *= x[i];
      layout.inner = 1;
      for (int i = static_cast<int>(axis) + 1; i < x.rank(); ++i) layout.inner *= x[i];
    }
  }
  ONEPOOL_ASSIGN_OR_RETURN(
      scale, quant::read_quant_param(node, 1, DType::kFloat32, layout.channels, false, "scale"));
  return Status::ok();
}

template <class Q>
class QuantizeKernel final : public Kernel {
 public:
  QuantizeKernel(AxisLayout layout, QuantParam scale, QuantParam zero)
      : layout_(layout), scale_(scale), zero_(zero) {}

  Status run(const RunContext& context) override {
    const float* x = context.inputs[0].as<const float>();
    Q* y = context.outputs[0].as<Q>();
    for (int64_t o = 0; o < layout_.outer; ++o) {
      for (int64_t c = 0; c < layout_.channels; ++c) {
        const float scale = quant::scale_at(scale_, context, c);
        const int32_t zero = quant::zero_point_at<Q>(zero_, context, c);
        const int64_t base = (o * layout_.channels + c) * layout_.inner;
        quant::quantize_row<Q>(x + base, scale, zero, y + base, layout_.inner);
      }
    }
    return Status::ok();
  }

 private:
  AxisLayout layout_;
  QuantParam scale_;
  QuantParam zero_;
};

template <class Q>
class DequantizeKernel final : public Kernel {
 public:
  DequantizeKernel(AxisLayout layout, QuantParam scale, QuantParam zero)
      : layout_(layout), scale_(scale), zero_(zero) {}

  Status run(const RunContext& context) override {
    const Q* x = context.inputs[0].as<const Q>();
    float* y = context.outputs[0].as<float>();
    for (int64_t o = 0; o < layout_.outer; ++o) {
      for (int64_t c = 0; c < layout_.channels; ++c) {
        const float scale = quant::scale_at(scale_, context, c);
        const auto zero = static_cast<float>(quant::zero_point_at<Q>(zero_, context, c));
        const int64_t base = (o * layout_.channels + c) * layout_.inner;
        // (float(x) - float(zero)) * scale, as the spec's reference computes it.
        for (int64_t i = 0; i < layout_.inner; ++i) {
          y[base + i] = (static_cast<float>(x[base + i]) - zero) * scale;
        }
      }
    }
    return Status::ok();
  }

 private:
  AxisLayout layout_;
  QuantParam scale_;
  QuantParam zero_;
};

template <template <class> class KernelT, class Q>
PreparedKernel prepared(AxisLayout layout, QuantParam scale, QuantParam zero) {
  PreparedKernel result;
  result.kernel = std::make_unique<KernelT<Q>>(layout, scale, zero);
  return result;
}

// QuantizeLinear(x float32, y_scale, y_zero_point?) -> y of the output's (= zero point's) dtype.
Expected<PreparedKernel> make_quantize_linear(const NodeContext& node) {
  AxisLayout layout;
  QuantParam scale;
  ONEPOOL_RETURN_IF_ERROR(plan_axis(node, layout, scale));
  if (node.input(0).dtype != DType::kFloat32) {
    return node.error(StatusCode::kUnsupported, describe_input(node, 0), ": expected float32, got ",
                      dtype_name(node.input(0).dtype));
  }
  const DType q = node.output(0).dtype;
  ONEPOOL_ASSIGN_OR_RETURN(
      const QuantParam zero,
      quant::read_quant_param(node, 2, q, layout.channels, true, "y_zero_point"));
  switch (q) {
    case DType::kUInt8:
      return prepared<QuantizeKernel, uint8_t>(layout, scale, zero);
    case DType::kInt8:
      return prepared<QuantizeKernel, int8_t>(layout, scale, zero);
    case DType::kUInt16:
      return prepared<QuantizeKernel, uint16_t>(layout, scale, zero);
    case DType::kInt16:
      return prepared<QuantizeKernel, int16_t>(layout, scale, zero);
    default:
      return node.error(StatusCode::kUnsupported, describe_output(node, 0), ": dtype ",
                        dtype_name(q), " is not supported (uint8, int8, uint16, int16)");
  }
}

// DequantizeLinear(x, x_scale, x_zero_point?) -> float32 y.
Expected<PreparedKernel> make_dequantize_linear(const NodeContext& node) {
  AxisLayout layout;
  QuantParam scale;
  ONEPOOL_RETURN_IF_ERROR(plan_axis(node, layout, scale));
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, DType::kFloat32));
  const DType q = node.input(0).dtype;
  ONEPOOL_ASSIGN_OR_RETURN(
      const QuantParam zero,
      quant::read_quant_param(node, 2, q, layout.channels, true, "x_zero_point"));
  switch (q) {
    case DType::kUInt8:
      return prepared<DequantizeKernel, uint8_t>(layout, scale, zero);
    case DType::kInt8:
      return prepared<DequantizeKernel, int8_t>(layout, scale, zero);
    case DType::kUInt16:
      return prepared<DequantizeKernel, uint16_t>(layout, scale, zero);
    case DType::kInt16:
      return prepared<DequantizeKernel, int16_t>(layout, scale, zero);
    case DType::kInt32:
      return prepared<DequantizeKernel, int32_t>(layout, scale, zero);
    default:
      return node.error(StatusCode::kUnsupported, describe_input(node, 0), ": dtype ",
                        dtype_name(q), " is not supported (uint8, int8, uint16, int16, int32)");
  }
}

// [min(0, min x), max(0, max x)] over x, both NaN when x holds a NaN (what running nan_min /
// nan_max from 0 give). Bounds run in kRangeLanes lanes with a NaN flag each, so the loop
// vectorizes (the one-at-a-time loop took as long as the quantization after it); min and max do
// not depend on the order, so the bounds are the same.
struct ZeroInclusiveRange {
  float low = 0.0f;
  float high = 0.0f;
};
constexpr int kRangeLanes = 16;

ONEPOOL_ISA_CLONES ZeroInclusiveRange zero_inclusive_range(const float* x, int64_t count) {
  float low[kRangeLanes] = {};
  float high[kRangeLanes] = {};
  float unordered[kRangeLanes] = {};  // 1 in a lane that met a NaN
  int64_t i = 0;
  for (; i + kRangeLanes <= count; i += kRangeLanes) {
    for (int lane = 0; lane < kRangeLanes; ++lane) {
      const float v = x[i + lane];
      low[lane] = v < low[lane] ? v : low[lane];
      high[lane] = v > high[lane] ? v : high[lane];
      unordered[lane] = v != v ? 1.0f : unordered[lane];
    }
  }
  for (; i < count; ++i) {
    low[0] = x[i] < low[0] ? x[i] : low[0];
    high[0] = x[i] > high[0] ? x[i] : high[0];
    unordered[0] = x[i] != x[i] ? 1.0f : unordered[0];
  }
  ZeroInclusiveRange range;
  bool nan = false;
  for (int lane = 0; lane < kRangeLanes; ++lane) {
    range.low = low[lane] < range.low ? low[lane] : range.low;
    range.high = high[lane] > range.high ? high[lane] : range.high;
    nan = nan || unordered[lane] != 0.0f;
  }
  if (nan) range.low = range.high = std::numeric_limits<float>::quiet_NaN();
  return range;
}

// DynamicQuantizeLinear: uint8 quantization of x over [min(0, min x), max(0, max x)], as the
// spec writes it: scale = (max - min) / 255, zero point = saturate(round(0 - min / scale)),
// y = saturate(round(x / scale) + zero point). All of x zero (scale 0) gives scale 0, zero
// point 0 and y 0, where the spec's formula would divide by zero. A NaN in x gives scale NaN
// (the reference's np.max / np.min propagate it), zero point 0 and y 0.
class DynamicQuantizeKernel final : public Kernel {
 public:
  explicit DynamicQuantizeKernel(int64_t count) : count_(count) {}

  Status run(const RunContext& context) override {
    const float* x = context.inputs[0].as<const float>();
    // A NaN in x makes the scale NaN, as the reference's np.min and np.max do.
    const auto [low, high] = zero_inclusive_range(x, count_);
    const float scale = (high - low) / 255.0f;
    const uint8_t zero =
        scale == 0.0f ? 0 : quant::saturate_rounded<uint8_t>(0.0f - low / scale, 0);
    uint8_t* y = context.outputs[0].as<uint8_t>();
    if (scale == 0.0f) {
      std::fill(y, y + count_, uint8_t{0});
    } else {
      quant::quantize_row<uint8_t>(x, scale, zero, y, count_);
    }
    if (context.outputs.size() > 1 && context.outputs[1].data) {
      *context.outputs[1].as<float>() = scale;
    }
    if (context.outputs.size() > 2 && context.outputs[2].data) {
      *context.outputs[2].as<uint8_t>() = zero;
    }
    return Status::ok();
  }

 private:
  int64_t count_;
};

Expected<PreparedKernel> make_dynamic_quantize_linear(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 0, DType::kFloat32));
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_RETURN_IF_ERROR(require_same_shape(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, DType::kUInt8));
  const DType scalar_types[] = {DType::kFloat32, DType::kUInt8};
  for (size_t i = 1; i < 3; ++i) {
    if (!node.has_output(i)) continue;
    ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, i, scalar_types[i - 1]));
    if (node.output(i).shape.element_count() != 1) {
      return node.error(StatusCode::kInvalidModel, describe_output(node, i),
                        ": expected a scalar, got ", node.output(i).shape.to_string());
    }
  }
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t count, node.input(0).shape.element_count_checked());
  PreparedKernel result;
  result.kernel = std::make_unique<DynamicQuantizeKernel>(count);
  return result;
}

}  // namespace

void register_quantized_kernels(KernelRegistry& registry) {
  registry.add("QuantizeLinear", &make_quantize_linear);
  registry.add("DequantizeLinear", &make_dequantize_linear);
  registry.add("DynamicQuantizeLinear", &make_dynamic_quantize_linear);
  registry.add("MatMulInteger", &quant::make_matmul_integer);
  registry.add("QLinearMatMul", &quant::make_qlinear_matmul);
  registry.add("ConvInteger", &quant::make_conv_integer);
  registry.add("QLinearConv", &quant::make_qlinear_conv);
}

}  // namespace onepool::cpu
