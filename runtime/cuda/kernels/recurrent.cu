// Device code of LSTM, GRU and RNN (the orchestration and the cuBLAS products are in
// recurrent_ops.cc). Every kernel is a grid-stride loop over (direction, batch row, hidden unit):
// a thread owns unit j of row b of direction d, reads only its own elements of the states, and
// does every gate of that unit, so one launch per time step covers all the gate math, both
// directions at once. The math mirrors the CPU kernels (runtime/cpu/kernels/recurrent_*.cc) in
// the same order: pre-activation = H*R^T + (X*W^T + (Wb + Rb)), then clip, then the function.
//
// sequence_lens is read here only (never on the host: the node may be captured into a CUDA
// graph). A length outside [0, seq_length], which the CPU refuses at run time, is clamped to it:
// a kernel cannot report it.
#include "runtime/cuda/kernels/device_util.cuh"
#include "runtime/cuda/kernels/recurrent_launch.h"

namespace onepool::cuda {

namespace {

// f(x) of runtime/cpu/kernels/recurrent.h activate(), NaN kept by the same comparisons.
__device__ inline float gate_function(const GateFunctionParams& a, float x) {
  switch (a.function) {
    case GateFunction::kRelu:
      return x < 0.0f ? 0.0f : x;
    case GateFunction::kTanh:
      return tanhf(x);
    case GateFunction::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case GateFunction::kAffine:
      return a.alpha * x + a.beta;
    case GateFunction::kLeakyRelu:
      return x < 0.0f ? a.alpha * x : x;
    case GateFunction::kThresholdedRelu:
      return x < a.alpha ? 0.0f : x;
    case GateFunction::kScaledTanh:
      return a.alpha * tanhf(a.beta * x);
    case GateFunction::kHardSigmoid: {
      const float v = a.alpha * x + a.beta;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
    case GateFunction::kElu:
      return x < 0.0f ? a.alpha * expm1f(x) : x;
    case GateFunction::kSoftsign:
      return x / (1.0f + fabsf(x));
    case GateFunction::kSoftplus:
      return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
  }
  return x;
}

// The `clip` attribute (NaN stays NaN), then the function: a gate's pre-activation to its value.
__device__ inline float finish_gate(const RecurrentParams& p, const GateFunctionParams& a,
                                    float x) {
  if (p.has_clip) {
    if (x < -p.clip) x = -p.clip;
    if (x > p.clip) x = p.clip;
  }
  return gate_function(a, x);
}

__device__ inline int64_t gate_count(RecurrentCell cell) {
  return cell == RecurrentCell::kLstm ? 4 : (cell == RecurrentCell::kGru ? 3 : 1);
}

// Row b's sequence length, clamped to [0, seq_length].
__device__ inline int64_t row_length(const RecurrentParams& p, int64_t b) {
  if (p.sequence_lens == nullptr) return p.seq_length;
  const int64_t n = p.sequence_lens[b];
  return n < 0 ? 0 : (n > p.seq_length ? p.seq_length : n);
}

// Offset in initial_h / initial_c / Y_h / Y_c of (direction d, row b).
__device__ inline int64_t state_offset(const RecurrentParams& p, int64_t d, int64_t b) {
  return p.batch_first ? (b * p.directions + d) * p.hidden : (d * p.batch + b) * p.hidden;
}

// One (direction, row, unit) at one walk position, with its slices of the tensors.
struct Unit {
  int64_t d = 0, b = 0, j = 0, t = 0;
  bool running = false;       // t < the row's length: the unit steps; else Y[t] is zero
  int64_t state = 0;          // index of (d, b, j) in hidden_state / cell_state / reset_hidden
  const float* x = nullptr;   // projected row of (d, t, b)
  float* r = nullptr;         // recurrent row of (d, b)
  const float* wb = nullptr;  // Wb of d, or null without B
  const float* rb = nullptr;  // Rb of d, or null without B
  int64_t y = 0;              // offset of (t, d, b, j) in Y
};

__device__ inline Unit unit_at(const RecurrentParams& p, int64_t i, int64_t step) {
  Unit u;
  u.j = i % p.hidden;
  const int64_t rest = i / p.hidden;
  u.b = rest % p.batch;
  u.d = rest / p.batch;
  const bool backward = p.reverse || u.d == 1;
  u.t = backward ? p.seq_length - 1 - step : step;
  u.running = u.t < row_length(p, u.b);
  u.state = (u.d * p.batch + u.b) * p.hidden + u.j;
  const int64_t width = gate_count(p.cell) * p.hidden;
  const int64_t row = p.batch_first ? u.b * p.seq_length + u.t : u.t * p.batch + u.b;
  u.x = p.projected + (u.d * p.seq_length * p.batch + row) * width;
  u.r = p.recurrent + (u.d * p.batch + u.b) * width;
  if (p.bias != nullptr) {
    u.wb = p.bias + u.d * 2 * width;
    u.rb = u.wb + width;
  }
  u.y = (p.batch_first ? (u.b * p.seq_length + u.t) * p.directions + u.d
                       : (u.t * p.directions + u.d) * p.batch + u.b) *
            p.hidden +
        u.j;
  return u;
}

// H*R^T + (X*W^T + (Wb + Rb)) at `column` of the gate row.
__device__ inline float gate_input(const Unit& u, int64_t column) {
  const float bias = u.wb != nullptr ? u.wb[column] + u.rb[column] : 0.0f;
  return u.r[column] + (u.x[column] + bias);
}

// The running unit's new hidden value, and Y at its time step.
__device__ inline void store_hidden(const RecurrentParams& p, const Unit& u, float h) {
  p.hidden_state[u.state] = h;
  if (p.y != nullptr) p.y[u.y] = h;
}

// LSTM, gates i o f c: Ct = f . Ct-1 + i . c, Ht = o . h(Ct), peepholes on i and f (Ct-1) and o
// (Ct); f = 1 - i with input_forget.
__device__ inline void lstm_unit(const RecurrentParams& p, const Unit& u) {
  const int64_t h = p.hidden;
  const GateFunctionParams* fn = p.functions[u.d];
  const float* peep = p.peepholes != nullptr ? p.peepholes + u.d * 3 * h : nullptr;
  const float c_prev = p.cell_state[u.state];
  float i_in = gate_input(u, u.j);
  if (peep != nullptr) i_in += peep[u.j] * c_prev;
  const float i = finish_gate(p, fn[0], i_in);
  float f = 1.0f - i;
  if (!p.input_forget) {
    float f_in = gate_input(u, 2 * h + u.j);
    if (peep != nullptr) f_in += peep[2 * h + u.j] * c_prev;
    f = finish_gate(p, fn[0], f_in);
  }
  const float c_gate = finish_gate(p, fn[1], gate_input(u, 3 * h + u.j));
  const float c = f * c_prev + i * c_gate;
  float o_in = gate_input(u, h + u.j);
  if (peep != nullptr) o_in += peep[h + u.j] * c;
  const float o = finish_gate(p, fn[0], o_in);
  p.cell_state[u.state] = c;
  store_hidden(p, u, o * gate_function(fn[2], c));
}

// GRU, gates z r h: Ht = (1 - z) . h + z . Ht-1. With linear_before_reset the h gate is
// g(X*Wh^T + Wbh + r . (Ht-1*Rh^T + Rbh)); without, z and r were finished by gru_reset_kernel
// and the h columns of `recurrent` hold (r . Ht-1)*Rh^T.
__device__ inline void gru_unit(const RecurrentParams& p, const Unit& u) {
  const int64_t h = p.hidden;
  const GateFunctionParams* fn = p.functions[u.d];
  const int64_t column = 2 * h + u.j;
  float z = 0.0f;
  float h_in = 0.0f;
  if (p.linear_before_reset) {
    z = finish_gate(p, fn[0], gate_input(u, u.j));
    const float reset = finish_gate(p, fn[0], gate_input(u, h + u.j));
    const float linear = u.rb != nullptr ? u.r[column] + u.rb[column] : u.r[column];
    const float x_part = u.wb != nullptr ? u.x[column] + u.wb[column] : u.x[column];
    h_in = x_part + reset * linear;
  } else {
    z = u.r[u.j];
    h_in = gate_input(u, column);
  }
  const float candidate = finish_gate(p, fn[1], h_in);
  const float h_prev = p.hidden_state[u.state];
  store_hidden(p, u, (1.0f - z) * candidate + z * h_prev);
}

template <RecurrentCell kCell>
__global__ void recurrent_gates_kernel(RecurrentParams p, int64_t step) {
  const int64_t count = p.directions * p.batch * p.hidden;
  ONEPOOL_GRID_LOOP(i, count) {
    const Unit u = unit_at(p, i, step);
    if (!u.running) {
      // The state stays; only Y at this time step is written (zeros).
      if (p.y != nullptr) p.y[u.y] = 0.0f;
      continue;
    }
    if constexpr (kCell == RecurrentCell::kLstm) {
      lstm_unit(p, u);
    } else if constexpr (kCell == RecurrentCell::kGru) {
      gru_unit(p, u);
    } else {
      store_hidden(p, u, finish_gate(p, p.functions[u.d][0], gate_input(u, u.j)));
    }
  }
}

// GRU with linear_before_reset 0: z and r in place in `recurrent`, reset_hidden = r . Ht-1.
__global__ void gru_reset_kernel(RecurrentParams p, int64_t step) {
  const int64_t count = p.directions * p.batch * p.hidden;
  ONEPOOL_GRID_LOOP(i, count) {
    const Unit u = unit_at(p, i, step);
    if (!u.running) {
      p.reset_hidden[u.state] = 0.0f;  // its product lands in a row nobody reads
      continue;
    }
    const GateFunctionParams& f = p.functions[u.d][0];
    const float z = finish_gate(p, f, gate_input(u, u.j));
    const float reset = finish_gate(p, f, gate_input(u, p.hidden + u.j));
    u.r[u.j] = z;
    u.r[p.hidden + u.j] = reset;
    p.reset_hidden[u.state] = reset * p.hidden_state[u.state];
  }
}

// Unit i of the state slices, (direction, row, unit) in that order: its row and its offset in
// initial_h / initial_c / Y_h / Y_c.
struct StateUnit {
  int64_t b = 0;
  int64_t offset = 0;
};
__device__ inline StateUnit state_unit(const RecurrentParams& p, int64_t i) {
  const int64_t j = i % p.hidden;
  const int64_t b = (i / p.hidden) % p.batch;
  const int64_t d = i / p.hidden / p.batch;
  return StateUnit{b, state_offset(p, d, b) + j};
}

__global__ void load_state_kernel(RecurrentParams p) {
  const int64_t count = p.directions * p.batch * p.hidden;
  ONEPOOL_GRID_LOOP(i, count) {
    const int64_t from = state_unit(p, i).offset;
    p.hidden_state[i] = p.initial_h != nullptr ? p.initial_h[from] : 0.0f;
    if (p.cell_state != nullptr) {
      p.cell_state[i] = p.initial_c != nullptr ? p.initial_c[from] : 0.0f;
    }
  }
}

__global__ void final_state_kernel(RecurrentParams p) {
  const int64_t count = p.directions * p.batch * p.hidden;
  ONEPOOL_GRID_LOOP(i, count) {
    const StateUnit unit = state_unit(p, i);
    const int64_t to = unit.offset;
    const bool empty = row_length(p, unit.b) == 0;
    if (p.y_h != nullptr) p.y_h[to] = empty ? 0.0f : p.hidden_state[i];
    if (p.y_c != nullptr && p.cell_state != nullptr) {
      p.y_c[to] = empty ? 0.0f : p.cell_state[i];
    }
  }
}

int64_t unit_count(const RecurrentParams& p) { return p.directions * p.batch * p.hidden; }

}  // namespace

cudaError_t launch_recurrent_load_state(const RecurrentParams& p, cudaStream_t stream) {
  if (unit_count(p) == 0) return cudaSuccess;
  load_state_kernel<<<grid_for(unit_count(p)), kBlock, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_gru_reset_gates(const RecurrentParams& p, int64_t step, cudaStream_t stream) {
  if (unit_count(p) == 0) return cudaSuccess;
  gru_reset_kernel<<<grid_for(unit_count(p)), kBlock, 0, stream>>>(p, step);
  return cudaGetLastError();
}

cudaError_t launch_recurrent_gates(const RecurrentParams& p, int64_t step, cudaStream_t stream) {
  if (unit_count(p) == 0) return cudaSuccess;
  const unsigned grid = grid_for(unit_count(p));
  switch (p.cell) {
    case RecurrentCell::kLstm:
      recurrent_gates_kernel<RecurrentCell::kLstm><<<grid, kBlock, 0, stream>>>(p, step);
      break;
    case RecurrentCell::kGru:
      recurrent_gates_kernel<RecurrentCell::kGru><<<grid, kBlock, 0, stream>>>(p, step);
      break;
    case RecurrentCell::kRnn:
      recurrent_gates_kernel<RecurrentCell::kRnn><<<grid, kBlock, 0, stream>>>(p, step);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_recurrent_final_state(const RecurrentParams& p, cudaStream_t stream) {
  if (unit_count(p) == 0) return cudaSuccess;
  final_state_kernel<<<grid_for(unit_count(p)), kBlock, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace onepool::cuda
