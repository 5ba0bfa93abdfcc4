// The node checks and attributes of LSTM, GRU and RNN shared by every backend: inputs and outputs,
// dtypes (every float tensor like X, sequence_lens int32), the attributes of the ONNX spec
// (direction, layout, clip, activations with activation_alpha / activation_beta, hidden_size,
// linear_before_reset, input_forget), and the dims of X and R checked against every other shape.
// Each backend adds what is its own: the dtypes its kernels take for X (checked between
// check_recurrent_arity and read_recurrent_spec, so that errors come in the same order on every
// backend), its workspace layout and its run-time checks (runtime/cpu/kernels/recurrent.h,
// runtime/cuda/kernels/recurrent_ops.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onepool/status.h"
#include "runtime/node_context.h"
#include "runtime/recurrent_activation.h"

namespace onepool::recurrent {

enum class RecurrentOp : uint8_t { kRnn, kGru, kLstm };

// Input and output positions shared by the three ops (initial_c and P exist for LSTM only).
inline constexpr size_t kInputX = 0;
inline constexpr size_t kInputW = 1;
inline constexpr size_t kInputR = 2;
inline constexpr size_t kInputB = 3;
inline constexpr size_t kInputSequenceLens = 4;
inline constexpr size_t kInputInitialH = 5;
inline constexpr size_t kInputInitialC = 6;
inline constexpr size_t kInputP = 7;
inline constexpr size_t kOutputY = 0;
inline constexpr size_t kOutputYH = 1;
inline constexpr size_t kOutputYC = 2;

/// Attributes and dims of one recurrent node, fixed at prepare time.
struct RecurrentSpec {
  RecurrentOp op = RecurrentOp::kRnn;
  std::string node_label;  // "node 'n' (LSTM)", for run-time errors
  int64_t seq_length = 0;
  int64_t batch = 0;
  int64_t input_size = 0;
  int64_t hidden = 0;
  int64_t gates = 1;         // gate blocks in W and R: 1 (RNN), 3 (GRU), 4 (LSTM)
  int64_t directions = 1;    // 2 when bidirectional
  bool reverse = false;      // direction == "reverse"
  bool batch_first = false;  // layout == 1
  bool has_clip = false;
  float clip = 0.0f;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM: f = 1 - i
  int64_t activations_per_direction = 1;
  std::vector<GateActivation> activations;  // directions * activations_per_direction

  int64_t gate_width() const { return gates * hidden; }
  /// Whether direction d runs from the last time step to the first.
  bool backward(int64_t d) const { return reverse || d == 1; }
  /// Offset in Y of the hidden vector of (t, direction d, b).
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return batch_first ? ((b * seq_length + t) * directions + d) * hidden
                       : ((t * directions + d) * batch + b) * hidden;
  }
  /// Offset in initial_h / initial_c / Y_h / Y_c of (direction d, b).
  int64_t state_offset(int64_t d, int64_t b) const {
    return batch_first ? (b * directions + d) * hidden : (d * batch + b) * hidden;
  }
  const GateActivation& activation(int64_t d, int64_t k) const {
    return activations[static_cast<size_t>(d * activations_per_direction + k)];
  }
};

/// X, W and R present; at most 8 inputs and 3 outputs (LSTM), 6 and 2 (GRU, RNN). kInvalidModel.
Status check_recurrent_arity(const NodeContext& node, RecurrentOp op);

/// Arity, then every float tensor's dtype against X's and sequence_lens int32, the attributes,
/// the dims from X and R and every other shape against them (the input X's dtype itself is the
/// backend's to check). kInvalidModel / kUnsupported / kOutOfRange naming the node, the tensor
/// or attribute and expected vs actual.
Expected<RecurrentSpec> read_recurrent_spec(const NodeContext& node, RecurrentOp op);

}  // namespace onepool::recurrent
