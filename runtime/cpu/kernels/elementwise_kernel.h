// Generic unary and binary elementwise kernels: an op is a small functor (`out = op(a)` or
// `out = op(a, b)`), the kernel owns the prepared broadcast plan and runs contiguous rows split
// over the thread pool.
//
// Aliasing: the output may be the same memory as input 0, or as input 1 of a binary op, when
// that input has the output's shape and type (PreparedKernel::in_place_inputs), so neither
// input is __restrict; every loop writes element i only from element i of its inputs (or from a
// broadcast scalar read before the loop), and `ONEPOOL_IVDEP` (GCC's `ivdep`) tells the vectorizer
// there is no loop-carried dependence.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels/broadcast.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu {

// `op` by value, so that its state (an alpha, a bound) is a local the stores cannot alias and
// the loop vectorizes (see map_in_place in activation.h).
template <class Op, class In, class Out>
ONEPOOL_ISA_CLONES void unary_row(Op op, Out* out, const In* in, int64_t n) {
  ONEPOOL_IVDEP
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(op(in[i]));
}

/// out[i] = op(a[i * sa], b[i * sb]) for i < n, where sa and sb are 0 or 1.
template <class Op, class A, class B, class Out>
ONEPOOL_ISA_CLONES void binary_row(Op op, Out* out, const A* a, int64_t sa, const B* b, int64_t sb,
                                   int64_t n) {
  if (sa == 1 && sb == 1) {
    ONEPOOL_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(op(a[i], b[i]));
    return;
  }
  if (sa == 1) {
    const B scalar = b[0];
    ONEPOOL_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(op(a[i], scalar));
    return;
  }
  const A scalar = a[0];
  if (sb == 1) {
    ONEPOOL_IVDEP
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(op(scalar, b[i]));
    return;
  }
  const Out value = static_cast<Out>(op(scalar, b[0]));
  for (int64_t i = 0; i < n; ++i) out[i] = value;
}

/// Runs binary_row over output elements [begin, end) of `plan` (inputs 0 and 1 of the plan).
template <class Op, class A, class B, class Out>
void binary_range(const BroadcastPlan& plan, const Op& op, Out* out, const A* a, const B* b,
                  int64_t begin, int64_t end) {
  const int64_t sa = plan.inner_stride(0);
  const int64_t sb = plan.inner_stride(1);
  for_each_row(plan, begin, end,
               [&](int64_t position, const BroadcastPlan::Offsets& offsets, int64_t length) {
                 binary_row(op, out + position, a + offsets[0], sa, b + offsets[1], sb, length);
               });
}

/// out = op(in) over same-shape tensors.
template <class Op, class In, class Out>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(int64_t count, Op op) : count_(count), op_(std::move(op)) {}

  Status run(const RunContext& context) override {
    const In* in = context.inputs[0].as<const In>();
    Out* out = context.outputs[0].as<Out>();
    parallel_elements(context.threads, count_, [&](int64_t begin, int64_t end) {
      unary_row(op_, out + begin, in + begin, end - begin);
    });
    return Status::ok();
  }

 private:
  int64_t count_;
  Op op_;
};

/// out = op(a, b) with broadcasting.
template <class Op, class A, class B, class Out>
class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(BroadcastPlan plan, Op op) : plan_(plan), op_(std::move(op)) {}

  Status run(const RunContext& context) override {
    const A* a = context.inputs[0].as<const A>();
    const B* b = context.inputs[1].as<const B>();
    Out* out = context.outputs[0].as<Out>();
    parallel_elements(context.threads, plan_.element_count, [&](int64_t begin, int64_t end) {
      binary_range(plan_, op_, out, a, b, begin, end);
    });
    return Status::ok();
  }

 private:
  BroadcastPlan plan_;
  Op op_;
};

/// Builds op from the node's attributes when the functor takes them, else default-constructs.
template <class Op>
Op make_functor(const NodeContext& node) {
  if constexpr (std::is_constructible_v<Op, const AttributeMap&>) {
    return Op(node.node().attributes);
  } else {
    return Op{};
  }
}

/// A UnaryKernel for `op` over input 0 (shape equal to output 0, checked), in place when the
/// input and output types match.
template <class In, class Op>
Expected<PreparedKernel> make_unary_kernel(const NodeContext& node, Op op) {
  using Out = std::decay_t<decltype(op(In{}))>;
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, dtype_of<Out>()));
  ONEPOOL_RETURN_IF_ERROR(require_same_shape(node, 0));
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<UnaryKernel<Op, In, Out>>(node.output(0).shape.element_count(),
                                                               std::move(op));
  if constexpr (std::is_same_v<In, Out>) prepared.in_place_inputs = kInPlaceInput0;
  return prepared;
}

/// A BinaryKernel for `op` over inputs 0 and 1 broadcast to output 0 (validated); in place on
/// either input that has the output's shape and type (GELU's `x + 0.044715 x^3` overwrites the
/// dying cube, not x, which lives on).
template <class A, class B, class Op>
Expected<PreparedKernel> make_binary_kernel(const NodeContext& node, Op op) {
  using Out = std::decay_t<decltype(op(A{}, B{}))>;
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, dtype_of<Out>()));
  const size_t inputs[] = {0, 1};
  ONEPOOL_ASSIGN_OR_RETURN(const BroadcastPlan plan, make_broadcast_plan(node, inputs));
  ONEPOOL_RETURN_IF_ERROR(check_output_is_broadcast(node, inputs));
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<BinaryKernel<Op, A, B, Out>>(plan, std::move(op));
  if (std::is_same_v<A, Out> && node.input(0).shape == node.output(0).shape) {
    prepared.in_place_inputs |= kInPlaceInput0;
  }
  if (std::is_same_v<B, Out> && node.input(1).shape == node.output(0).shape) {
    prepared.in_place_inputs |= kInPlaceInput1;
  }
  return prepared;
}

/// Factory for a unary op whose functor is Op<T> for T in Allowed (the input's dtype).
template <template <class> class Op, DTypeSet Allowed>
Expected<PreparedKernel> make_unary_op(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  return visit_dtype<Allowed>(node, describe_input(node, 0), node.input(0).dtype,
                              [&](auto tag) -> Expected<PreparedKernel> {
                                using T = typename decltype(tag)::type;
                                return make_unary_kernel<T>(node, make_functor<Op<T>>(node));
                              });
}

/// Factory for a binary op whose inputs share the type T in Allowed and whose functor is Op<T>.
template <template <class> class Op, DTypeSet Allowed>
Expected<PreparedKernel> make_binary_op(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 1, node.input(0).dtype));
  return visit_dtype<Allowed>(node, describe_input(node, 0), node.input(0).dtype,
                              [&](auto tag) -> Expected<PreparedKernel> {
                                using T = typename decltype(tag)::type;
                                return make_binary_kernel<T, T>(node, make_functor<Op<T>>(node));
                              });
}

}  // namespace onepool::cpu
