// Unary elementwise ops: math functions and activations. One functor per op; NaN flows through
// (comparisons are written so that a NaN input fails them and is returned unchanged).
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"
#include "runtime/cpu/kernels/fast_math.h"

namespace onepool::cpu {
namespace {

template <class T>
T clamp01(T v) {
  return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
}

template <class T>
struct SqrtOp {
  T operator()(T x) const { return std::sqrt(x); }
};
template <class T>
struct LogOp {
  T operator()(T x) const { return std::log(x); }
};
template <class T>
struct ExpOp {
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) return fast_exp(x);  // vectorizes; fast_math.h
    return std::exp(x);
  }
};
template <class T>
struct ErfOp {
  T operator()(T x) const { return std::erf(x); }
};
template <class T>
struct TanhOp {
  T operator()(T x) const { return std::tanh(x); }
};
template <class T>
struct SinOp {
  T operator()(T x) const { return std::sin(x); }
};
template <class T>
struct CosOp {
  T operator()(T x) const { return std::cos(x); }
};
template <class T>
struct FloorOp {
  T operator()(T x) const { return std::floor(x); }
};
template <class T>
struct CeilOp {
  T operator()(T x) const { return std::ceil(x); }
};
// Round half to even, as ONNX specifies (the default rounding mode).
template <class T>
struct RoundOp {
  T operator()(T x) const { return std::nearbyint(x); }
};
template <class T>
struct ReciprocalOp {
  T operator()(T x) const { return T(1) / x; }
};

template <class T>
struct SigmoidOp {
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) return fast_sigmoid(x);
    return T(1) / (T(1) + std::exp(-x));
  }
};

// log(1 + exp(x)) without overflow for large x.
template <class T>
struct SoftplusOp {
  T operator()(T x) const {
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

template <class T>
struct ReluOp {
  T operator()(T x) const { return x < T(0) ? T(0) : x; }
};

template <class T>
struct LeakyReluOp {
  explicit LeakyReluOp(const AttributeMap& attributes)
      : alpha(static_cast<T>(attributes.get_float("alpha", 0.01f))) {}
  T operator()(T x) const { return x < T(0) ? alpha * x : x; }
  T alpha;
};

template <class T>
struct EluOp {
  explicit EluOp(const AttributeMap& attributes)
      : alpha(static_cast<T>(attributes.get_float("alpha", 1.0f))) {}
  T operator()(T x) const { return x < T(0) ? alpha * std::expm1(x) : x; }
  T alpha;
};

template <class T>
struct SeluOp {
  explicit SeluOp(const AttributeMap& attributes)
      : alpha(static_cast<T>(attributes.get_float("alpha", 1.67326319217681884765625f))),
        gamma(static_cast<T>(attributes.get_float("gamma", 1.05070102214813232421875f))) {}
  T operator()(T x) const { return x > T(0) ? gamma * x : gamma * (alpha * std::exp(x) - alpha); }
  T alpha;
  T gamma;
};

template <class T>
struct HardSigmoidOp {
  explicit HardSigmoidOp(const AttributeMap& attributes)
      : alpha(static_cast<T>(attributes.get_float("alpha", 0.2f))),
        beta(static_cast<T>(attributes.get_float("beta", 0.5f))) {}
  T operator()(T x) const { return clamp01(alpha * x + beta); }
  T alpha;
  T beta;
};

template <class T>
struct HardSwishOp {
  T operator()(T x) const { return x * clamp01(x * T(1.0 / 6.0) + T(0.5)); }
};

// Gelu (opset 20): x · Φ(x) exactly with erf, or the tanh approximation GPT-2 trains with. The
// graph optimizer (planner/optimize/fuse_gelu.cc) produces it from the decomposed chains. Two
// functors, so the tanh form's loop holds no libm call and vectorizes.
template <class T>
struct GeluErfOp {
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return 0.5f * x * fast_one_plus_erf(x * 0.70710678118654752f);
    } else {
      // 1 + erf(z) = erfc(-z), without the cancellation for large negative x.
      return T(0.5) * x * std::erfc(x * T(-0.7071067811865476));
    }
  }
};

template <class T>
struct GeluTanhOp {
  T operator()(T x) const {
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u): no cancellation where tanh(u) nears -1, and in
    // float a branch-free sigmoid (std::tanh is a scalar libm call).
    const T twice_inner = T(1.5957691216057308) * (x + T(0.044715) * x * x * x);
    if constexpr (std::is_same_v<T, float>) {
      return x * fast_sigmoid(twice_inner);
    } else {
      return x / (T(1) + std::exp(-twice_inner));
    }
  }
};

template <class T>
struct NegOp {
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(x));
    } else {
      return -x;
    }
  }
};

template <class T>
struct AbsOp {
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (std::is_integral_v<T>) {
      return x < 0 ? NegOp<T>{}(x) : x;
    } else {
      return std::abs(x);
    }
  }
};

template <class T>
struct SignOp {
  T operator()(T x) const { return x > T(0) ? T(1) : (x < T(0) ? static_cast<T>(-1) : x); }
};

template <class T>
struct NotOp {
  bool operator()(T x) const { return !x; }
};

template <class T>
struct IsNaNOp {
  bool operator()(T x) const { return std::isnan(x); }
};

template <class T>
struct IsInfOp {
  explicit IsInfOp(const AttributeMap& attributes)
      : negative(attributes.get_int("detect_negative", 1) != 0),
        positive(attributes.get_int("detect_positive", 1) != 0) {}
  bool operator()(T x) const {
    return (positive && x == std::numeric_limits<T>::infinity()) ||
           (negative && x == -std::numeric_limits<T>::infinity());
  }
  bool negative;
  bool positive;
};

// Gelu's attribute names the formula; anything but "none" or "tanh" is a bad model, not a
// silent fallback to erf.
Expected<PreparedKernel> make_gelu(const NodeContext& node) {
  const std::string approximate = node.node().attributes.get_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return node.error(StatusCode::kInvalidModel, "attribute 'approximate' must be 'none' or ",
                      "'tanh', got '", approximate, "'");
  }
  if (approximate == "tanh") return make_unary_op<GeluTanhOp, kFloatTypes>(node);
  return make_unary_op<GeluErfOp, kFloatTypes>(node);
}

}  // namespace

void register_unary_kernels(KernelRegistry& registry) {
  registry.add("Sqrt", &make_unary_op<SqrtOp, kFloatTypes>);
  registry.add("Log", &make_unary_op<LogOp, kFloatTypes>);
  registry.add("Exp", &make_unary_op<ExpOp, kFloatTypes>);
  registry.add("Erf", &make_unary_op<ErfOp, kFloatTypes>);
  registry.add("Tanh", &make_unary_op<TanhOp, kFloatTypes>);
  registry.add("Sin", &make_unary_op<SinOp, kFloatTypes>);
  registry.add("Cos", &make_unary_op<CosOp, kFloatTypes>);
  registry.add("Floor", &make_unary_op<FloorOp, kFloatTypes>);
  registry.add("Ceil", &make_unary_op<CeilOp, kFloatTypes>);
  registry.add("Round", &make_unary_op<RoundOp, kFloatTypes>);
  registry.add("Reciprocal", &make_unary_op<ReciprocalOp, kFloatTypes>);
  registry.add("Sigmoid", &make_unary_op<SigmoidOp, kFloatTypes>);
  registry.add("Softplus", &make_unary_op<SoftplusOp, kFloatTypes>);
  registry.add("Relu", &make_unary_op<ReluOp, kSignedTypes>);
  registry.add("LeakyRelu", &make_unary_op<LeakyReluOp, kFloatTypes>);
  registry.add("Elu", &make_unary_op<EluOp, kFloatTypes>);
  registry.add("Selu", &make_unary_op<SeluOp, kFloatTypes>);
  registry.add("HardSigmoid", &make_unary_op<HardSigmoidOp, kFloatTypes>);
  registry.add("HardSwish", &make_unary_op<HardSwishOp, kFloatTypes>);
  registry.add("Gelu", &make_gelu);
  registry.add("Neg", &make_unary_op<NegOp, kSignedTypes>);
  registry.add("Abs", &make_unary_op<AbsOp, kNumericTypes>);
  registry.add("Sign", &make_unary_op<SignOp, kNumericTypes>);
  registry.add("Not", &make_unary_op<NotOp, kBoolType>);
  registry.add("IsNaN", &make_unary_op<IsNaNOp, kFloatTypes>);
  registry.add("IsInf", &make_unary_op<IsInfOp, kFloatTypes>);
}

}  // namespace onepool::cpu
