// LayerNormalization (opset 17): X viewed as [outer, inner] with inner = prod(X[axis:]); each
// row is normalized, then y = normalized * Scale + B. Scale and B hold `inner` values or one.
// The optional Mean and InvStdDev outputs receive one float per row.
#include <algorithm>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/norm_kernels.h"

namespace onepool::cpu::nn {
namespace {

struct LayerNormPlan {
  int64_t outer = 0;
  int64_t inner = 0;
  float epsilon = 1e-5f;
  bool scalar_scale = false;
  bool scalar_bias = false;
};

// dst = (src - mean) * inv_std * scale + bias over one row.
ONEPOOL_ISA_CLONES void normalize_row(const LayerNormPlan& plan, const RowMoments& moments,
                                      const float* src, const float* scale, const float* bias,
                                      float* dst) {
  const float mean = moments.mean;
  const float inv_std = moments.inv_std;
  const bool scalar_scale = plan.scalar_scale;
  const bool scalar_bias = plan.scalar_bias;
  if (!scalar_scale && bias != nullptr && !scalar_bias) {  // the usual case, as one plain loop
    for (int64_t i = 0; i < plan.inner; ++i)
      dst[i] = (src[i] - mean) * inv_std * scale[i] + bias[i];
    return;
  }
  for (int64_t i = 0; i < plan.inner; ++i) {
    const float s = scale[scalar_scale ? 0 : i];
    const float b = bias ? bias[scalar_bias ? 0 : i] : 0.0f;
    dst[i] = (src[i] - mean) * inv_std * s + b;
  }
}

class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const LayerNormPlan& plan) : plan_(plan) {}

  Status run(const RunContext& context) override {
    const float* x = context.inputs[0].as<const float>();
    const float* scale = context.inputs[1].as<const float>();
    const float* bias = context.inputs.size() > 2 ? context.inputs[2].as<const float>() : nullptr;
    float* y = context.outputs[0].as<float>();
    float* means = context.outputs.size() > 1 ? context.outputs[1].as<float>() : nullptr;
    float* inv_stds = context.outputs.size() > 2 ? context.outputs[2].as<float>() : nullptr;
    const int64_t inner = plan_.inner;
    const int64_t min_rows = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner));
    context.threads->parallel_for(plan_.outer, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const float* src = x + row * inner;
        float* dst = y + row * inner;
        const RowMoments moments = row_moments(src, inner, plan_.epsilon);
        normalize_row(plan_, moments, src, scale, bias, dst);
        if (means) means[row] = moments.mean;
        if (inv_stds) inv_stds[row] = moments.inv_std;
      }
    });
    return Status::ok();
  }

 private:
  LayerNormPlan plan_;
};

// Scale / B: `inner` values (the normalized shape) or a single one; returns whether scalar.
Expected<bool> check_parameter(const NodeContext& node, size_t index, int64_t inner) {
  ONEPOOL_RETURN_IF_ERROR(require_float32(node, index));
  const int64_t count = node.input(index).shape.element_count();
  if (count == inner || count == 1) return count == 1 && inner != 1;
  return node.error(StatusCode::kUnsupported, "input ", index, " '", node.input(index).name,
                    "' has shape ", node.input(index).shape.to_string(), ": expected ", inner,
                    " values (the normalized shape) or 1");
}

// The optional statistics outputs hold one float per row.
Status check_statistics(const NodeContext& node, int64_t outer) {
  for (size_t i = 1; i < 3; ++i) {
    if (!node.has_output(i)) continue;
    const Value& value = node.output(i);
    if (value.dtype != DType::kFloat32 || value.shape.element_count() != outer) {
      return node.error(StatusCode::kInvalidModel, "output ", i, " '", value.name,
                        "': expected float32 with ", outer, " elements (X[:axis] then ones), got ",
                        dtype_name(value.dtype), " ", value.shape.to_string());
    }
  }
  return Status::ok();
}

}  // namespace

Expected<PreparedKernel> make_layer_norm_kernel(const NodeContext& node) {
  // Step 1. X, axis and the [outer, inner] split.
  if (!node.has_input(0) || !node.has_input(1)) {
    return node.error(StatusCode::kInvalidModel, "inputs X and Scale are required");
  }
  ONEPOOL_RETURN_IF_ERROR(require_float32(node, 0));
  const AttributeMap& attributes = node.node().attributes;
  if (attributes.get_int("stash_type", 1) != 1) {
    return node.error(StatusCode::kUnsupported, "stash_type ", attributes.get_int("stash_type", 1),
                      ": only 1 (float32) is supported");
  }
  const Shape& x = node.input(0).shape;
  int64_t axis = attributes.get_int("axis", -1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank()) {
    return node.error(StatusCode::kInvalidModel, "axis ", attributes.get_int("axis", -1),
                      " out of range for input shape ", x.to_string());
  }
  LayerNormPlan plan;
  plan.outer = 1;
  plan.inner = 1;
  for (int i = 0; i < x.rank(); ++i) (i < axis ? plan.outer : plan.inner) *= x[i];
  plan.epsilon = attributes.get_float("epsilon", 1e-5f);
  // Step 2. Parameters and outputs.
  ONEPOOL_ASSIGN_OR_RETURN(plan.scalar_scale, check_parameter(node, 1, plan.inner));
  if (node.has_input(2)) {
    ONEPOOL_ASSIGN_OR_RETURN(plan.scalar_bias, check_parameter(node, 2, plan.inner));
  }
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 0, x));
  ONEPOOL_RETURN_IF_ERROR(check_statistics(node, plan.outer));
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<LayerNormKernel>(plan);
  return prepared;
}

}  // namespace onepool::cpu::nn
