// Trigonometric and hyperbolic unary ops (Sin and Cos live with the other math functions in
// elementwise_unary.cc). Each is the <cmath> function, so NaN and ±Inf follow IEEE: asin(2) and
// acosh(0.5) are NaN, atanh(±1) is ±Inf, tan and the inverse functions pass NaN through.
#include <cmath>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

template <class T>
struct TanOp {
  T operator()(T x) const { return std::tan(x); }
};
template <class T>
struct AsinOp {
  T operator()(T x) const { return std::asin(x); }
};
template <class T>
struct AcosOp {
  T operator()(T x) const { return std::acos(x); }
};
template <class T>
struct AtanOp {
  T operator()(T x) const { return std::atan(x); }
};
template <class T>
struct SinhOp {
  T operator()(T x) const { return std::sinh(x); }
};
template <class T>
struct CoshOp {
  T operator()(T x) const { return std::cosh(x); }
};
template <class T>
struct AsinhOp {
  T operator()(T x) const { return std::asinh(x); }
};
template <class T>
struct AcoshOp {
  T operator()(T x) const { return std::acosh(x); }
};
template <class T>
struct AtanhOp {
  T operator()(T x) const { return std::atanh(x); }
};

}  // namespace

void register_trig_kernels(KernelRegistry& registry) {
  registry.add("Tan", &make_unary_op<TanOp, kFloatTypes>);
  registry.add("Asin", &make_unary_op<AsinOp, kFloatTypes>);
  registry.add("Acos", &make_unary_op<AcosOp, kFloatTypes>);
  registry.add("Atan", &make_unary_op<AtanOp, kFloatTypes>);
  registry.add("Sinh", &make_unary_op<SinhOp, kFloatTypes>);
  registry.add("Cosh", &make_unary_op<CoshOp, kFloatTypes>);
  registry.add("Asinh", &make_unary_op<AsinhOp, kFloatTypes>);
  registry.add("Acosh", &make_unary_op<AcoshOp, kFloatTypes>);
  registry.add("Atanh", &make_unary_op<AtanhOp, kFloatTypes>);
}

}  // namespace onepool::cpu
