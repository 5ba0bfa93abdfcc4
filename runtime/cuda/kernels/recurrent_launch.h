// The device-code contract of the recurrent layers (recurrent.cu), in the manner of launch.h:
// one plain parameter struct and its launchers, each enqueuing on `stream`, allocating nothing
// and returning cudaGetLastError() after its launch. Prepared by recurrent_ops.cc.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/recurrent_activation.h"

namespace onepool::cuda {

enum class RecurrentCell : int32_t { kRnn, kGru, kLstm };

/// The activation functions and their alpha / beta: the CPU's (runtime/recurrent_activation.h).
using GateFunction = recurrent::ActivationFunction;
using GateFunctionParams = recurrent::GateActivation;

/// One LSTM / GRU / RNN node: dims, attributes, its tensors (null when omitted) and its workspace
/// slices. Per direction d (d = 1 walks backward when bidirectional), at walk position `step` the
/// time step is t = step (forward) or seq_length - 1 - step (backward) for every batch row; a row
/// takes part while t < its length. Gate blocks in W, R and B: LSTM i o f c, GRU z r h, RNN one.
struct RecurrentParams {
  RecurrentCell cell = RecurrentCell::kRnn;
  int64_t seq_length = 0, batch = 0, hidden = 0;
  int32_t directions = 1;
  bool reverse = false;      // direction "reverse" (one direction, backward)
  bool batch_first = false;  // layout 1
  bool has_clip = false;
  float clip = 0.0f;
  bool linear_before_reset = false;         // GRU
  bool input_forget = false;                // LSTM
  GateFunctionParams functions[2][3] = {};  // [direction][f, g, h]
  const float* bias = nullptr;              // B [directions, 2 * gates * hidden]: Wb then Rb
  const float* peepholes = nullptr;         // P [directions, 3 * hidden]: i o f
  const int32_t* sequence_lens = nullptr;   // [batch], read on the device only
  const float* initial_h = nullptr;
  const float* initial_c = nullptr;
  float* y = nullptr;
  float* y_h = nullptr;
  float* y_c = nullptr;
  /// X * W^T per direction: [directions][seq_length * batch rows][gates * hidden], rows in X's
  /// order (t * batch + b for layout 0, b * seq_length + t for layout 1).
  const float* projected = nullptr;
  float* recurrent = nullptr;     // [directions][batch][gates * hidden]: H * R^T of this step
  float* hidden_state = nullptr;  // [directions][batch][hidden]
  float* cell_state = nullptr;    // [directions][batch][hidden], LSTM
  float* reset_hidden = nullptr;  // [directions][batch][hidden], GRU linear_before_reset 0: r . H
};

/// The hidden (and cell) state of every direction from initial_h / initial_c, zeros without.
cudaError_t launch_recurrent_load_state(const RecurrentParams& p, cudaStream_t stream);
/// GRU with linear_before_reset 0, before the h gate's product: z and r into `recurrent`,
/// reset_hidden = r . H (zeros for rows past their length).
cudaError_t launch_gru_reset_gates(const RecurrentParams& p, int64_t step, cudaStream_t stream);
/// The gate math of walk position `step` for every direction, row and unit: the new states, and
/// Y at that time step (zeros for rows past their length, whose states stay).
cudaError_t launch_recurrent_gates(const RecurrentParams& p, int64_t step, cudaStream_t stream);
/// Y_h (and Y_c) from the final states, zeros for rows of length 0.
cudaError_t launch_recurrent_final_state(const RecurrentParams& p, cudaStream_t stream);

}  // namespace onepool::cuda
