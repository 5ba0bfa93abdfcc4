// InstanceNormalization: each (image, channel) plane is normalized by its own mean and
// variance, then y = normalized * scale[c] + B[c]. Parallel over planes.
#include <algorithm>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/norm_kernels.h"

namespace onepool::cpu::nn {
namespace {

class InstanceNormKernel final : public Kernel {
 public:
  InstanceNormKernel(int64_t planes, int64_t channels, int64_t plane_size, float epsilon)
      : planes_(planes), channels_(channels), plane_size_(plane_size), epsilon_(epsilon) {}

  Status run(const RunContext& context) override {
    const float* x = context.inputs[0].as<const float>();
    const float* scale = context.inputs[1].as<const float>();
    const float* bias = context.inputs[2].as<const float>();
    float* y = context.outputs[0].as<float>();
    context.threads->parallel_for(planes_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const float* src = x + plane * plane_size_;
        float* dst = y + plane * plane_size_;
        const RowMoments moments = row_moments(src, plane_size_, epsilon_);
        const float a = moments.inv_std * scale[plane % channels_];
        const float b = bias[plane % channels_] - moments.mean * a;
        for (int64_t i = 0; i < plane_size_; ++i) dst[i] = src[i] * a + b;
      }
    });
    return Status::ok();
  }

 private:
  int64_t planes_;
  int64_t channels_;
  int64_t plane_size_;
  float epsilon_;
};

}  // namespace

Expected<PreparedKernel> make_instance_norm_kernel(const NodeContext& node) {
  for (size_t i = 0; i < 3; ++i) {
    if (!node.has_input(i)) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " is required (input, scale, B)");
    }
    ONEPOOL_RETURN_IF_ERROR(require_float32(node, i));
  }
  const Shape& x = node.input(0).shape;
  if (x.rank() < 3) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name, "' has shape ",
                      x.to_string(), ": expected [N,C,spatial...] of rank >= 3");
  }
  for (size_t i = 1; i < 3; ++i) {
    if (node.input(i).shape != Shape{x[1]}) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " '", node.input(i).name,
                        "': expected shape [", x[1], "], got ", node.input(i).shape.to_string());
    }
  }
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 0, x));
  int64_t plane_size = 1;
  for (int axis = 2; axis < x.rank(); ++axis) plane_size *= x[axis];  // divides X's count
  const float epsilon = node.node().attributes.get_float("epsilon", 1e-5f);
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<InstanceNormKernel>(x[0] * x[1], x[1], plane_size, epsilon);
  prepared.in_place_inputs = kInPlaceInput0;
  return prepared;
}

}  // namespace onepool::cpu::nn
