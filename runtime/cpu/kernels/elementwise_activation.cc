// Activations beyond the common ones in elementwise_unary.cc: Celu, Softsign, Shrink,
// ThresholdedRelu, Mish. Each follows its ONNX formula. A NaN input comes out as NaN: Shrink and
// ThresholdedRelu compare x with a bound, which NaN fails on both sides, so they test for it
// rather than map it to 0.
#include <cmath>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

// Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
template <class T>
struct CeluOp {
  explicit CeluOp(const AttributeMap& attributes)
      : alpha(static_cast<T>(attributes.get_float("alpha", 1.0f))) {}
  T operator()(T x) const { return x > T(0) ? x : alpha * std::expm1(x / alpha); }
  T alpha;
};

// Softsign(x) = x / (1 + |x|).
template <class T>
struct SoftsignOp {
  T operator()(T x) const { return x / (T(1) + std::abs(x)); }
};

// Shrink: x < -lambd → x + bias; x > lambd → x - bias; else 0. Float types only: an integer
// x - bias can leave the type's range, which the spec leaves undefined.
template <class T>
struct ShrinkOp {
  explicit ShrinkOp(const AttributeMap& attributes)
      : lambd(static_cast<T>(attributes.get_float("lambd", 0.5f))),
        bias(static_cast<T>(attributes.get_float("bias", 0.0f))) {}
  T operator()(T x) const {
    if (x < -lambd) return x + bias;
    if (x > lambd) return x - bias;
    return std::isnan(x) ? x : T(0);
  }
  T lambd;
  T bias;
};

// ThresholdedRelu(x) = x > alpha ? x : 0.
template <class T>
struct ThresholdedReluOp {
  explicit ThresholdedReluOp(const AttributeMap& attributes)
      : alpha(static_cast<T>(attributes.get_float("alpha", 1.0f))) {}
  T operator()(T x) const { return x > alpha || std::isnan(x) ? x : T(0); }
  T alpha;
};

// Mish(x) = x * tanh(softplus(x)), softplus computed without overflow for large x.
template <class T>
struct MishOp {
  T operator()(T x) const {
    const T softplus = x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    return x * std::tanh(softplus);
  }
};

}  // namespace

void register_activation_kernels(KernelRegistry& registry) {
  registry.add("Celu", &make_unary_op<CeluOp, kFloatTypes>);
  registry.add("Softsign", &make_unary_op<SoftsignOp, kFloatTypes>);
  registry.add("Shrink", &make_unary_op<ShrinkOp, kFloatTypes>);
  registry.add("ThresholdedRelu", &make_unary_op<ThresholdedReluOp, kFloatTypes>);
  registry.add("Mish", &make_unary_op<MishOp, kFloatTypes>);
}

}  // namespace onepool::cpu
