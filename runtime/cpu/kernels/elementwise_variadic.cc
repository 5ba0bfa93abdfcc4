// Variadic Sum, Max, Min, Mean with broadcasting. The output is built in passes over each chunk
// of output elements: out = op(x0, x1), then out = op(out, xk) for k >= 2 (each pass reads and
// writes only the same output element, so passes are safe in place), then Mean divides by N.
// Max and Min propagate NaN (as ONNX Runtime since 1.13).
#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

template <class T>
struct SumOp {
  T operator()(T a, T b) const { return a + b; }
};

// a when it is NaN; else b when b > a or b is NaN (the comparison fails); else a.
template <class T>
struct MaxOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a > b || std::isnan(a)) ? a : b;
    return a > b ? a : b;
  }
};

template <class T>
struct MinOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a < b || std::isnan(a)) ? a : b;
    return a < b ? a : b;
  }
};

template <class T>
struct IdentityOp {
  T operator()(T x) const { return x; }
};

template <class Op, class T>
class VariadicKernel final : public Kernel {
 public:
  VariadicKernel(std::vector<BroadcastPlan> plans, bool mean)
      : plans_(std::move(plans)), mean_(mean) {}

  Status run(const RunContext& context) override {
    T* out = context.outputs[0].as<T>();
    const int64_t count = plans_[0].element_count;
    parallel_elements(context.threads, count,
                      [&](int64_t begin, int64_t end) { run_chunk(context, out, begin, end); });
    return Status::ok();
  }

 private:
  void run_chunk(const RunContext& context, T* out, int64_t begin, int64_t end) const {
    const Op op{};
    binary_range(plans_[0], op, out, context.inputs[0].as<const T>(),
                 context.inputs[1].as<const T>(), begin, end);
    for (size_t k = 2; k < context.inputs.size(); ++k) {
      binary_range(plans_[k - 1], op, out, static_cast<const T*>(out),
                   context.inputs[k].as<const T>(), begin, end);
    }
    if (!mean_) return;
    const T divisor = static_cast<T>(context.inputs.size());
    for (int64_t i = begin; i < end; ++i) out[i] = out[i] / divisor;
  }

  std::vector<BroadcastPlan> plans_;  // [0]: inputs 0, 1; [k - 1]: output, input k
  bool mean_;
};

template <template <class> class Op, class T>
Expected<PreparedKernel> make_variadic_kernel(const NodeContext& node, bool mean) {
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, dtype_of<T>()));
  if (node.input_count() == 1) return make_unary_kernel<T>(node, IdentityOp<T>{});
  std::vector<size_t> indices;
  for (size_t i = 0; i < node.input_count(); ++i) {
    ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, i, dtype_of<T>()));
    indices.push_back(i);
  }
  ONEPOOL_RETURN_IF_ERROR(check_output_is_broadcast(node, indices));
  std::vector<BroadcastPlan> plans;
  const size_t first[] = {0, 1};
  ONEPOOL_ASSIGN_OR_RETURN(BroadcastPlan plan, make_broadcast_plan(node, first));
  plans.push_back(plan);
  for (size_t k = 2; k < node.input_count(); ++k) {
    // Validate input k against the output with its own name in the message.
    const size_t alone[] = {k};
    ONEPOOL_RETURN_IF_ERROR(make_broadcast_plan(node, alone).status());
    const Shape shapes[] = {node.output(0).shape, node.input(k).shape};
    ONEPOOL_ASSIGN_OR_RETURN(BroadcastPlan pass,
                             make_broadcast_plan_for_shapes(node, shapes, node.output(0).shape));
    plans.push_back(pass);
  }
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<VariadicKernel<Op<T>, T>>(std::move(plans), mean);
  if (node.input(0).shape == node.output(0).shape) prepared.in_place_inputs = kInPlaceInput0;
  return prepared;
}

template <template <class> class Op, DTypeSet Allowed, bool Mean>
Expected<PreparedKernel> make_variadic(const NodeContext& node) {
  if (node.input_count() == 0) {
    return node.error(StatusCode::kInvalidModel, "needs at least one input, got 0");
  }
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  return visit_dtype<Allowed>(node, describe_input(node, 0), node.input(0).dtype,
                              [&](auto tag) -> Expected<PreparedKernel> {
                                using T = typename decltype(tag)::type;
                                return make_variadic_kernel<Op, T>(node, Mean);
                              });
}

}  // namespace

void register_variadic_kernels(KernelRegistry& registry) {
  registry.add("Sum", &make_variadic<SumOp, kFloatTypes, false>);
  registry.add("Mean", &make_variadic<SumOp, kFloatTypes, true>);
  registry.add("Max", &make_variadic<MaxOp, kNumericTypes, false>);
  registry.add("Min", &make_variadic<MinOp, kNumericTypes, false>);
}

}  // namespace onepool::cpu
