// BatchNormalization in inference mode as a per-channel scale and shift:
//   y = x * a[c] + b[c],  a = scale / sqrt(var + epsilon),  b = B - mean * a.
// When scale, B, mean and var are all weights, a and b are computed once at prepare time;
// otherwise each run computes them into the workspace (2 * C floats).
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/norm_kernels.h"

namespace onepool::cpu::nn {
namespace {

constexpr size_t kParamCount = 4;  // scale, B, mean, var: inputs 1..4

void fold_parameters(const float* const params[kParamCount], int64_t channels, float epsilon,
                     float* a, float* b) {
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = params[0][c] / std::sqrt(params[3][c] + epsilon);
    b[c] = params[1][c] - params[2][c] * a[c];
  }
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(int64_t batch, int64_t channels, int64_t plane_size, float epsilon,
                  std::vector<float> folded)
      : batch_(batch),
        channels_(channels),
        plane_size_(plane_size),
        epsilon_(epsilon),
        folded_(std::move(folded)) {}

  Status run(const RunContext& context) override {
    const float* a = folded_.data();
    if (folded_.empty()) {
      float* scratch = reinterpret_cast<float*>(context.workspace);
      const float* params[kParamCount];
      for (size_t i = 0; i < kParamCount; ++i) params[i] = context.inputs[1 + i].as<const float>();
      fold_parameters(params, channels_, epsilon_, scratch, scratch + channels_);
      a = scratch;
    }
    const float* b = a + channels_;
    const float* x = context.inputs[0].as<const float>();
    float* y = context.outputs[0].as<float>();
    const int64_t min_planes = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, plane_size_));
    context.threads->parallel_for(batch_ * channels_, min_planes, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const float scale = a[plane % channels_];
        const float shift = b[plane % channels_];
        const float* src = x + plane * plane_size_;
        float* dst = y + plane * plane_size_;
        for (int64_t i = 0; i < plane_size_; ++i) dst[i] = src[i] * scale + shift;
      }
    });
    return Status::ok();
  }

 private:
  int64_t batch_;
  int64_t channels_;
  int64_t plane_size_;
  float epsilon_;
  std::vector<float> folded_;  // a then b (2 * C), or empty when computed per run
};

Status check_inputs(const NodeContext& node, int64_t channels) {
  if (node.node().attributes.get_int("training_mode", 0) != 0) {
    return node.error(StatusCode::kUnsupported, "training_mode = 1 is not supported");
  }
  for (size_t i = 1; i < node.output_count(); ++i) {
    if (node.has_output(i)) {
      return node.error(StatusCode::kUnsupported, "output ", i, " '", node.output(i).name,
                        "': training-mode outputs (running/saved mean and var) are not supported");
    }
  }
  for (size_t i = 0; i <= kParamCount; ++i) {
    if (!node.has_input(i)) {
      return node.error(StatusCode::kInvalidModel, "input ", i,
                        " is required (X, scale, B, mean, var)");
    }
    ONEPOOL_RETURN_IF_ERROR(require_float32(node, i));
    if (i > 0 && node.input(i).shape != Shape{channels}) {
      return node.error(StatusCode::kUnsupported, "input ", i, " '", node.input(i).name,
                        "': expected shape [", channels, "] (per channel), got ",
                        node.input(i).shape.to_string());
    }
  }
  return Status::ok();
}

}  // namespace

Expected<PreparedKernel> make_batch_norm_kernel(const NodeContext& node) {
  // Step 1. Shapes: X [N, C, ...], parameters [C], Y like X.
  const Shape& x = node.input_count() > 0 && node.has_input(0) ? node.input(0).shape : Shape{};
  if (x.rank() < 2) {
    return node.error(StatusCode::kInvalidModel, "input X has shape ", x.to_string(),
                      ": expected rank >= 2 ([N,C,...])");
  }
  ONEPOOL_RETURN_IF_ERROR(check_inputs(node, x[1]));
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 0, x));
  int64_t plane_size = 1;
  for (int axis = 2; axis < x.rank(); ++axis) plane_size *= x[axis];  // divides X's count
  // Step 2. Fold the parameters now when they are weights.
  const float epsilon = node.node().attributes.get_float("epsilon", 1e-5f);
  const int64_t channels = x[1];
  std::vector<float> folded;
  PreparedKernel prepared;
  const float* params[kParamCount];
  bool constant = true;
  for (size_t i = 0; i < kParamCount; ++i) {
    const HostTensor* weight = node.constant_input(1 + i);
    constant = constant && weight != nullptr;
    params[i] = weight ? weight->as<float>() : nullptr;
  }
  if (constant) {
    folded.resize(static_cast<size_t>(2 * channels));
    fold_parameters(params, channels, epsilon, folded.data(), folded.data() + channels);
  } else {
    prepared.workspace_bytes = static_cast<size_t>(2 * channels) * sizeof(float);
  }
  prepared.kernel =
      std::make_unique<BatchNormKernel>(x[0], channels, plane_size, epsilon, std::move(folded));
  prepared.in_place_inputs = kInPlaceInput0;
  return prepared;
}

}  // namespace onepool::cpu::nn
