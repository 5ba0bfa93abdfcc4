// The activation functions of the ONNX recurrent ops (LSTM, GRU, RNN) and one entry of their
// `activations` attribute with its alpha and beta. Plain data with no dependencies, shared by the
// attribute parser (runtime/recurrent_attributes.h), the CPU kernels and the CUDA device code
// (runtime/cuda/kernels/recurrent_launch.h, compiled by nvcc too).
#pragma once

#include <cstdint>

namespace onepool::recurrent {

enum class ActivationFunction : uint8_t {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

/// One entry of the `activations` attribute with its alpha and beta.
struct GateActivation {
  ActivationFunction function = ActivationFunction::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
};

}  // namespace onepool::recurrent
