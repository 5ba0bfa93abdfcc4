// Clip. Opset < 11 takes attributes min / max; opset >= 11 takes optional scalar inputs 1 and 2
// (omitted, weights, or tensors computed at run time, read from the input views on each run).
// Both forms are accepted at any opset: an input, when present, overrides the attribute.
// Bounds default to the type's lowest / max (as ONNX Runtime). NaN inputs stay NaN, and a NaN
// bound makes every element NaN (the ONNX reference's np.clip: max(x, NaN) and min(x, NaN) are
// NaN).
#include <algorithm>
#include <limits>
#include <memory>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

template <class T>
struct ClipOp {
  // Min(high, Max(x, low)), as the spec writes it: min > max gives max everywhere.
  T operator()(T x) const {
    const T raised = x < low ? low : x;
    return raised > high ? high : raised;
  }
  T low;
  T high;
};

template <class T>
class ClipKernel final : public Kernel {
 public:
  ClipKernel(int64_t count, T low, T high) : count_(count), low_(low), high_(high) {}

  Status run(const RunContext& context) override {
    const ClipOp<T> op{bound(context, 1, low_), bound(context, 2, high_)};
    const T* in = context.inputs[0].as<const T>();
    T* out = context.outputs[0].as<T>();
    if (op.low != op.low || op.high != op.high) {  // a NaN bound: numpy's clip gives NaN
      std::fill(out, out + count_, op.low != op.low ? op.low : op.high);
      return Status::ok();
    }
    parallel_elements(context.threads, count_, [&](int64_t begin, int64_t end) {
      unary_row(op, out + begin, in + begin, end - begin);
    });
    return Status::ok();
  }

 private:
  static T bound(const RunContext& context, size_t i, T fallback) {
    if (i >= context.inputs.size() || context.inputs[i].data == nullptr) return fallback;
    return *context.inputs[i].as<const T>();
  }

  int64_t count_;
  T low_;
  T high_;
};

// Inputs 1 and 2, when present, must hold one element of the input's dtype.
Status check_bound_input(const NodeContext& node, size_t i) {
  if (!node.has_input(i)) return Status::ok();
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, i, node.input(0).dtype));
  const Shape& shape = node.input(i).shape;
  if (shape.element_count() == 1) return Status::ok();
  return node.error(StatusCode::kInvalidModel, describe_input(node, i),
                    ": expected a scalar bound, got shape ", shape.to_string());
}

template <class T>
Expected<PreparedKernel> make_clip_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, dtype_of<T>()));
  ONEPOOL_RETURN_IF_ERROR(require_same_shape(node, 0));
  ONEPOOL_RETURN_IF_ERROR(check_bound_input(node, 1));
  ONEPOOL_RETURN_IF_ERROR(check_bound_input(node, 2));
  const AttributeMap& attributes = node.node().attributes;
  T low = std::numeric_limits<T>::lowest();
  T high = std::numeric_limits<T>::max();
  if constexpr (std::is_floating_point_v<T>) {
    if (attributes.has("min")) low = static_cast<T>(attributes.get_float("min", 0.0f));
    if (attributes.has("max")) high = static_cast<T>(attributes.get_float("max", 0.0f));
  }
  PreparedKernel prepared;
  prepared.kernel =
      std::make_unique<ClipKernel<T>>(node.output(0).shape.element_count(), low, high);
  prepared.in_place_inputs = kInPlaceInput0;
  return prepared;
}

Expected<PreparedKernel> make_clip(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  return visit_dtype<kNumericTypes>(node, describe_input(node, 0), node.input(0).dtype,
                                    [&](auto tag) -> Expected<PreparedKernel> {
                                      using T = typename decltype(tag)::type;
                                      return make_clip_kernel<T>(node);
                                    });
}

}  // namespace

void register_clip_kernel(KernelRegistry& registry) { registry.add("Clip", &make_clip); }

}  // namespace onepool::cpu
