// GlobalAveragePool and GlobalMaxPool: one reduction per (image, channel) plane, in parallel.
#include <algorithm>
#include <limits>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/nan_order.h"
#include "runtime/cpu/kernels/pool_kernels.h"

namespace onepool::cpu::nn {
namespace {

enum class GlobalKind : uint8_t { kAverage, kMax };

class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(GlobalKind kind, int64_t planes, int64_t plane_size)
      : kind_(kind), planes_(planes), plane_size_(plane_size) {}

  Status run(const RunContext& context) override {
    const float* x = context.inputs[0].as<const float>();
    float* y = context.outputs[0].as<float>();
    const int64_t min_planes = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, plane_size_));
    context.threads->parallel_for(planes_, min_planes, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const float* data = x + plane * plane_size_;
        y[plane] = kind_ == GlobalKind::kMax ? max_of(data) : mean(data);
      }
    });
    return Status::ok();
  }

 private:
  // NaN anywhere in the plane gives NaN (std::max_element would skip a NaN after the first value).
  float max_of(const float* data) const {
    if (plane_size_ == 0) return -std::numeric_limits<float>::infinity();
    float best = data[0];
    for (int64_t i = 1; i < plane_size_; ++i) best = nan_max(best, data[i]);
    return best;
  }

  float mean(const float* data) const {
    float sum = 0.0f;
    for (int64_t i = 0; i < plane_size_; ++i) sum += data[i];
    return sum / static_cast<float>(plane_size_);
  }

  GlobalKind kind_;
  int64_t planes_;
  int64_t plane_size_;
};

Expected<PreparedKernel> make_global_kernel(const NodeContext& node, GlobalKind kind) {
  ONEPOOL_RETURN_IF_ERROR(require_float32(node, 0));
  const Shape& x = node.input(0).shape;
  if (x.rank() < 3) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name, "' has shape ",
                      x.to_string(), ": expected [N,C,spatial...] of rank >= 3");
  }
  Shape expected{x[0], x[1]};
  int64_t plane_size = 1;
  for (int axis = 2; axis < x.rank(); ++axis) {
    expected.push_back(1);
    plane_size *= x[axis];  // a factor of the input's element count, which import checked
  }
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 0, expected));
  if (plane_size == 0) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name, "' has shape ",
                      x.to_string(), ": empty spatial dims");
  }
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<GlobalPoolKernel>(kind, x[0] * x[1], plane_size);
  return prepared;
}

}  // namespace

Expected<PreparedKernel> make_global_average_pool_kernel(const NodeContext& node) {
  return make_global_kernel(node, GlobalKind::kAverage);
}

Expected<PreparedKernel> make_global_max_pool_kernel(const NodeContext& node) {
  return make_global_kernel(node, GlobalKind::kMax);
}

}  // namespace onepool::cpu::nn
