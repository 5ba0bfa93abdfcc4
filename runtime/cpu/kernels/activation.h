// Fused activation epilogues for Conv / ConvTranspose / Gemm / MatMul kernels.
//
// The graph optimizer fuses a following activation node into the producer by adding attributes
// to it (names starting with "onepool_", which ONNX never uses):
//   onepool_activation : string, one of Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish,
//                        HardSigmoidMul (x * HardSigmoid(x) with alpha/beta, the exporter pattern)
//   onepool_alpha, onepool_beta : floats (LeakyRelu alpha; HardSigmoid alpha, beta;
//                                 Clip min = alpha, max = beta)
// A kernel calls parse_activation() at prepare time and apply_activation() over its output.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "planner/core/graph.h"
#include "runtime/cpu/kernels/fast_math.h"
#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu {

enum class ActivationKind : uint8_t {
  kNone,
  kRelu,
  kClip,
  kLeakyRelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kHardSigmoidMul
};

struct Activation {
  ActivationKind kind = ActivationKind::kNone;
  float alpha = 0.0f;
  float beta = 0.0f;

  float apply(float x) const {
    switch (kind) {
      case ActivationKind::kNone:
        return x;
      case ActivationKind::kRelu:
        return relu(x);
      case ActivationKind::kClip:
        return clip(x, alpha, beta);
      case ActivationKind::kLeakyRelu:
        return x < 0.0f ? alpha * x : x;
      case ActivationKind::kSigmoid:
        return fast_sigmoid(x);
      case ActivationKind::kHardSigmoid:
        return clip(alpha * x + beta, 0.0f, 1.0f);
      case ActivationKind::kHardSwish:
        return x * clip(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
      case ActivationKind::kHardSigmoidMul:
        return x * clip(alpha * x + beta, 0.0f, 1.0f);
    }
    return x;
  }

  // Each comparison is written so that a NaN fails it and passes through unchanged, as the
  // unfused Relu / Clip / HardSigmoid kernels (and the ONNX reference) do: a fused epilogue must
  // not turn NaN into 0 or into a bound. A NaN bound makes every element NaN, as the Clip kernel
  // (numpy's clip) does.
  static float relu(float x) { return x < 0.0f ? 0.0f : x; }
  static float clip(float x, float low, float high) {
    if (low != low || high != high) return low != low ? low : high;
    const float raised = x < low ? low : x;  // Min(high, Max(x, low)): min > max gives max
    return raised > high ? high : raised;
  }
};

/// Reads the fused activation from a node's attributes (kNone when there is none): `prefix` +
/// "activation" / "alpha" / "beta" ("onepool_pointwise_" names a PointwiseDepthwiseConv's first
/// activation).
inline Activation parse_activation(const AttributeMap& attributes,
                                   const std::string& prefix = "onepool_") {
  Activation activation;
  const std::string name = attributes.get_string(prefix + "activation", "");
  activation.alpha = attributes.get_float(prefix + "alpha", 0.0f);
  activation.beta = attributes.get_float(prefix + "beta", 0.0f);
  if (name == "Relu") activation.kind = ActivationKind::kRelu;
  if (name == "Clip") activation.kind = ActivationKind::kClip;
  if (name == "LeakyRelu") activation.kind = ActivationKind::kLeakyRelu;
  if (name == "Sigmoid") activation.kind = ActivationKind::kSigmoid;
  if (name == "HardSigmoid") activation.kind = ActivationKind::kHardSigmoid;
  if (name == "HardSwish") activation.kind = ActivationKind::kHardSwish;
  if (name == "HardSigmoidMul") activation.kind = ActivationKind::kHardSigmoidMul;
  return activation;
}

// `fn` by value: its captures (alpha, beta) are then locals the stores to `data` cannot alias,
// so the loop vectorizes (through a reference, every element reloaded them, one at a time).
template <class Fn>
ONEPOOL_ISA_CLONES void map_in_place(float* data, int64_t count, Fn fn) {
  for (int64_t i = 0; i < count; ++i) data[i] = fn(data[i]);
}

/// data[i] = data[i] + other[i]: a fused residual Add (the same operation as the Add kernel).
void add_residual(float* data, const float* other, int64_t count);

/// Applies the activation in place over data[0, count). One loop per kind (the same formulas as
/// Activation::apply) so that the loops vectorize.
inline void apply_activation(const Activation& activation, float* data, int64_t count) {
  const float alpha = activation.alpha;
  const float beta = activation.beta;
  switch (activation.kind) {
    case ActivationKind::kNone:
      return;
    case ActivationKind::kRelu:
      return map_in_place(data, count, [](float x) { return Activation::relu(x); });
    case ActivationKind::kClip:
      return map_in_place(data, count, [=](float x) { return Activation::clip(x, alpha, beta); });
    case ActivationKind::kLeakyRelu:
      return map_in_place(data, count, [=](float x) { return x < 0.0f ? alpha * x : x; });
    case ActivationKind::kHardSigmoid:
      return map_in_place(data, count,
                          [=](float x) { return Activation::clip(alpha * x + beta, 0.0f, 1.0f); });
    case ActivationKind::kHardSwish:
      return map_in_place(data, count, [](float x) {
        return x * Activation::clip(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
      });
    case ActivationKind::kHardSigmoidMul:
      return map_in_place(
          data, count, [=](float x) { return x * Activation::clip(alpha * x + beta, 0.0f, 1.0f); });
    case ActivationKind::kSigmoid:
      return map_in_place(data, count, [](float x) { return fast_sigmoid(x); });
  }
}

}  // namespace onepool::cpu
