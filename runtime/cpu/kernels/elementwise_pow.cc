// Pow with broadcasting and mixed base / exponent dtypes (opset 12+: float or int base, any of
// float32/float64/int32/int64 exponent; the output has the base's dtype). A constant scalar
// exponent of 1, 2, 3 or 0.5 on a float base becomes a unary kernel (x, x*x, x*x*x, sqrt), the
// forms exporters emit for variance and norms.
#include <cmath>
#include <type_traits>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

constexpr DTypeSet kPowTypes = kFloatTypes | dtype_bit(DType::kInt32) | dtype_bit(DType::kInt64);

template <class T, class E>
struct PowOp {
  T operator()(T a, E b) const {
    if constexpr (std::is_same_v<T, float>) {
      return std::pow(a, static_cast<float>(b));
    } else {
      return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    }
  }
};

template <class T>
struct IdentityOp {
  T operator()(T x) const { return x; }
};
template <class T>
struct SquareOp {
  T operator()(T x) const { return x * x; }
};
template <class T>
struct CubeOp {
  T operator()(T x) const { return x * x * x; }
};
template <class T>
struct PowHalfOp {
  T operator()(T x) const { return std::sqrt(x); }
};

// The unary kernel for an exponent of 1, 2, 3 or 0.5 (checked by pow_fast_exponent).
template <class T>
Expected<PreparedKernel> make_pow_fast_path(const NodeContext& node, double exponent) {
  if (exponent == 1.0) return make_unary_kernel<T>(node, IdentityOp<T>{});
  if (exponent == 2.0) return make_unary_kernel<T>(node, SquareOp<T>{});
  if (exponent == 3.0) return make_unary_kernel<T>(node, CubeOp<T>{});
  return make_unary_kernel<T>(node, PowHalfOp<T>{});
}

// True when input 1 is a one-element weight whose value has a fast form and the output has the
// base's shape.
bool pow_fast_exponent(const NodeContext& node, double& exponent) {
  const HostTensor* constant = node.constant_input(1);
  if (constant == nullptr || constant->element_count() != 1) return false;
  if (!(node.input(0).shape == node.output(0).shape)) return false;
  exponent = constant->float_at(0);
  return exponent == 1.0 || exponent == 2.0 || exponent == 3.0 || exponent == 0.5;
}

Expected<PreparedKernel> make_pow(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 1));
  return visit_dtype<kPowTypes>(node, describe_input(node, 0), node.input(0).dtype,
                                [&](auto base_tag) -> Expected<PreparedKernel> {
                                  using T = typename decltype(base_tag)::type;
                                  double exponent = 0.0;
                                  if constexpr (std::is_floating_point_v<T>) {
                                    if (pow_fast_exponent(node, exponent))
                                      return make_pow_fast_path<T>(node, exponent);
                                  }
                                  return visit_dtype<kPowTypes>(
                                      node, describe_input(node, 1), node.input(1).dtype,
                                      [&](auto exponent_tag) -> Expected<PreparedKernel> {
                                        using E = typename decltype(exponent_tag)::type;
                                        return make_binary_kernel<T, E>(node, PowOp<T, E>{});
                                      });
                                });
}

}  // namespace

void register_pow_kernel(KernelRegistry& registry) { registry.add("Pow", &make_pow); }

}  // namespace onepool::cpu
