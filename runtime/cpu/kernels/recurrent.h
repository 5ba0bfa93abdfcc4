// Shared pieces of the CPU LSTM, GRU and RNN kernels (recurrent_lstm.cc, recurrent_gru.cc,
// recurrent_rnn.cc); the workspace layout lives in recurrent.cc, the node checks and attributes
// shared with the CUDA backend in runtime/recurrent_attributes.cc.
//
// Each direction runs in three steps, every buffer a slice of the node's planned workspace:
//   1. projected = X * W^T + biases for a window of time steps at once (InputProjection): as
//      many steps as the granted workspace holds, all of them at the preferred size (one GEMM
//      with seq*batch rows), 64 rows of X at the least (plan_workspace in recurrent.cc).
//   2. Per time step: recurrent = H_prev * R^T (one GEMM over the batch), then the op's gate
//      math row by row, only for the batch rows whose sequence is still running (sequence_lens).
//   3. Y at the steps past a row's length is zero; Y_h / Y_c hold the state after the row's last
//      step (zero for a row of length 0, as ONNX Runtime does).
// Cost per direction: [seq*batch, input] x [input, gates*hidden] of input products (in windows),
// seq products of [batch, hidden] x [hidden, gates*hidden], and O(seq*batch*gates*hidden) gate
// math. Workspace: a [batch, gates*hidden] slice, 1 to 3 [batch, hidden] slices, and 1 to seq
// steps of projection.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels/fast_math.h"
#include "runtime/cpu/kernels/gemm_blas.h"
#include "runtime/recurrent_attributes.h"

namespace onepool::cpu::recurrent {

// The node checks and attributes shared with the other backends (runtime/recurrent_attributes.h).
using onepool::recurrent::ActivationFunction;
using onepool::recurrent::GateActivation;
using onepool::recurrent::kInputB;
using onepool::recurrent::kInputInitialC;
using onepool::recurrent::kInputInitialH;
using onepool::recurrent::kInputP;
using onepool::recurrent::kInputR;
using onepool::recurrent::kInputSequenceLens;
using onepool::recurrent::kInputW;
using onepool::recurrent::kInputX;
using onepool::recurrent::kOutputY;
using onepool::recurrent::kOutputYC;
using onepool::recurrent::kOutputYH;
using onepool::recurrent::RecurrentOp;
using onepool::recurrent::RecurrentSpec;

/// The node's attributes and dims (RecurrentSpec) and the CPU workspace layout, fixed at prepare
/// time.
struct RecurrentPlan : RecurrentSpec {
  // Workspace slices, in elements from its start (each padded to 64 bytes).
  int64_t recurrent_offset = 0;  // [batch, gates*hidden]
  int64_t hidden_offset = 0;     // [batch, hidden]
  int64_t cell_offset = 0;       // [batch, hidden], LSTM
  int64_t scratch_offset = 0;    // [batch, hidden], GRU with linear_before_reset == 0
  int64_t projected_offset = 0;  // last: [window steps, batch, gates*hidden], 1 to seq steps
  size_t workspace_bytes = 0;    // with the least window
  size_t workspace_preferred_bytes = 0;  // with a seq-step window
};

/// Checks the node (inputs, outputs, dtypes, shapes, attributes) and lays out its workspace.
/// kInvalidModel / kUnsupported / kOutOfRange naming the node, the tensor and expected vs actual.
Expected<RecurrentPlan> plan_recurrent(const NodeContext& node, RecurrentOp op);

/// The factories, registered by register_recurrent_kernels (recurrent.cc).
Expected<PreparedKernel> make_lstm_kernel(const NodeContext& node);
Expected<PreparedKernel> make_gru_kernel(const NodeContext& node);
Expected<PreparedKernel> make_rnn_kernel(const NodeContext& node);

// ---- Run-time helpers (no allocation) ----

/// f(x) for one element. NaN stays NaN in every function (comparisons are written so that a
/// NaN takes the branch that carries it).
template <class T>
inline T activate(const GateActivation& a, T x) {
  const T alpha = static_cast<T>(a.alpha);
  const T beta = static_cast<T>(a.beta);
  switch (a.function) {
    case ActivationFunction::kRelu:
      return x < T{0} ? T{0} : x;
    case ActivationFunction::kTanh:
      return std::tanh(x);
    case ActivationFunction::kSigmoid:
      return T{1} / (T{1} + std::exp(-x));
    case ActivationFunction::kAffine:
      return alpha * x + beta;
    case ActivationFunction::kLeakyRelu:
      return x < T{0} ? alpha * x : x;
    case ActivationFunction::kThresholdedRelu:
      return x < alpha ? T{0} : x;
    case ActivationFunction::kScaledTanh:
      return alpha * std::tanh(beta * x);
    case ActivationFunction::kHardSigmoid: {
      const T v = alpha * x + beta;
      return v < T{0} ? T{0} : (v > T{1} ? T{1} : v);
    }
    case ActivationFunction::kElu:
      return x < T{0} ? alpha * std::expm1(x) : x;
    case ActivationFunction::kSoftsign:
      return x / (T{1} + std::abs(x));
    case ActivationFunction::kSoftplus:
      return x > T{0} ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
  return x;
}

/// tanh within a few 1e-7 relative: an odd Taylor polynomial below |x| = 0.3 (where
/// (1 - e^-2|x|) / (1 + e^-2|x|) would cancel), that quotient with fast_exp above. NaN stays NaN;
/// branch-free, so GCC vectorizes loops over it.
inline float fast_tanh(float x) {
  const float a = std::fabs(x);
  const float e = fast_exp(-2.0f * a);
  const float quotient = (1.0f - e) / (1.0f + e);
  const float a2 = a * a;
  const float series =
      a * (1.0f + a2 * (-1.0f / 3 + a2 * (2.0f / 15 + a2 * (-17.0f / 315 + a2 * (62.0f / 2835)))));
  return std::copysign(a < 0.3f ? series : quotient, x);
}

/// x[i] = f(x[i]) over n values. The switch stays out of the loops; float Sigmoid and Tanh, the
/// gates of nearly every model, use the vectorizable fast_math forms.
template <class T>
inline void activate_in_place(const GateActivation& a, T* x, int64_t n) {
  switch (a.function) {
    case ActivationFunction::kTanh:
      if constexpr (std::is_same_v<T, float>) {
        for (int64_t i = 0; i < n; ++i) x[i] = fast_tanh(x[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
      }
      return;
    case ActivationFunction::kSigmoid:
      if constexpr (std::is_same_v<T, float>) {
        for (int64_t i = 0; i < n; ++i) x[i] = fast_sigmoid(x[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) x[i] = T{1} / (T{1} + std::exp(-x[i]));
      }
      return;
    default:
      for (int64_t i = 0; i < n; ++i) x[i] = activate(a, x[i]);
      return;
  }
}

/// The `clip` attribute: x limited to [-threshold, threshold]; NaN stays NaN.
template <class T>
inline void clip_in_place(T* x, int64_t n, float threshold) {
  const T high = static_cast<T>(threshold);
  const T low = -high;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] < low) x[i] = low;
    if (x[i] > high) x[i] = high;
  }
}

/// Clip (when the node has one), then the activation: a gate's pre-activation becomes its value.
template <class T>
inline void finish_gate(const RecurrentPlan& plan, const GateActivation& a, T* x, int64_t n) {
  if (plan.has_clip) clip_in_place(x, n, plan.clip);
  activate_in_place(a, x, n);
}

/// C = A * B^T (A [m,k] with row stride lda, B [n,k] row-major, C [m,n] with row stride ldc),
/// threaded through the Session's pool. k == 0 writes zeros (BLAS may skip C then).
template <class T>
inline void product_transposed(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                               T* c, int64_t ldc, ThreadPool* threads) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T{0});
    return;
  }
  GemmShape shape;
  shape.trans_b = true;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  shape.lda = lda;
  shape.ldb = k;
  shape.ldc = ldc;
  gemm(shape, 1.0f, a, b, 0.0f, c, threads);
}

/// The tensors of one run, typed. Omitted inputs and outputs are nullptr.
template <class T>
struct RecurrentTensors {
  const T* x = nullptr;
  const T* w = nullptr;
  const T* r = nullptr;
  const T* b = nullptr;
  const int32_t* sequence_lens = nullptr;
  const T* initial_h = nullptr;
  const T* initial_c = nullptr;
  const T* p = nullptr;
  T* y = nullptr;
  T* y_h = nullptr;
  T* y_c = nullptr;

  explicit RecurrentTensors(const RunContext& context) {
    const auto in = [&](size_t i) -> const void* {
      return i < context.inputs.size() ? context.inputs[i].data : nullptr;
    };
    const auto out = [&](size_t i) -> T* {
      return i < context.outputs.size() ? static_cast<T*>(context.outputs[i].data) : nullptr;
    };
    x = static_cast<const T*>(in(kInputX));
    w = static_cast<const T*>(in(kInputW));
    r = static_cast<const T*>(in(kInputR));
    b = static_cast<const T*>(in(kInputB));
    sequence_lens = static_cast<const int32_t*>(in(kInputSequenceLens));
    initial_h = static_cast<const T*>(in(kInputInitialH));
    initial_c = static_cast<const T*>(in(kInputInitialC));
    p = static_cast<const T*>(in(kInputP));
    y = out(kOutputY);
    y_h = out(kOutputYH);
    y_c = out(kOutputYC);
  }

  /// Length of batch row b's sequence (seq_length without sequence_lens).
  int64_t length(const RecurrentPlan& plan, int64_t b) const {
    return sequence_lens ? sequence_lens[b] : plan.seq_length;
  }
};

/// Fails (kInvalidArgument) when a sequence_lens value lies outside [0, seq_length].
Status check_sequence_lens(const RecurrentPlan& plan, const int32_t* sequence_lens);

/// The run() of every recurrent kernel: checks sequence_lens, then runs each direction in turn.
template <class T>
class DirectionalKernel : public Kernel {
 public:
  explicit DirectionalKernel(RecurrentPlan plan) : plan_(std::move(plan)) {}

  Status run(const RunContext& context) final {
    const RecurrentTensors<T> io(context);
    ONEPOOL_RETURN_IF_ERROR(check_sequence_lens(plan_, io.sequence_lens));
    T* workspace = reinterpret_cast<T*>(context.workspace);
    for (int64_t d = 0; d < plan_.directions; ++d) {
      run_direction(io, d, workspace, context.workspace_bytes, context.threads);
    }
    return Status::ok();
  }

 protected:
  /// Direction d (0 forward, 1 reverse when bidirectional) over the whole sequence.
  virtual void run_direction(const RecurrentTensors<T>& io, int64_t d, T* workspace,
                             size_t workspace_bytes, ThreadPool* threads) const = 0;

  RecurrentPlan plan_;
};

/// Step 1 of a direction: X * W_d^T plus Wb_d and, on the first `rb_columns` columns, Rb_d
/// (the part of the recurrence bias that can be added before the gate math), for a window of
/// time steps at a time, laid out [step - begin][batch][gates*hidden] in the workspace's last
/// slice. Windows are aligned to multiples of their length, so a backward walk reuses them too.
template <class T>
class InputProjection {
 public:
  InputProjection(const RecurrentPlan& plan, const RecurrentTensors<T>& io, int64_t d,
                  int64_t rb_columns, T* workspace, size_t workspace_bytes, ThreadPool* threads)
      : plan_(plan),
        x_(io.x),
        w_(io.w + d * plan.gate_width() * plan.input_size),
        wb_(io.b ? io.b + d * 2 * plan.gate_width() : nullptr),
        rb_columns_(rb_columns),
        buffer_(workspace + plan.projected_offset),
        threads_(threads) {
    const int64_t step_elements = plan.batch * plan.gate_width();
    const int64_t available =
        static_cast<int64_t>(workspace_bytes / sizeof(T)) - plan.projected_offset;
    window_ = step_elements == 0 ? plan.seq_length : available / step_elements;
    window_ = std::max<int64_t>(1, std::min(window_, plan.seq_length));
  }

  /// Makes time step t's projection available, projecting its window when needed.
  void cover(int64_t t) {
    if (t >= begin_ && t < end_) return;
    begin_ = t / window_ * window_;
    end_ = std::min(begin_ + window_, plan_.seq_length);
    project();
  }

  /// The projected row of (t, b); t must be covered.
  const T* row(int64_t t, int64_t b) const {
    return buffer_ + ((t - begin_) * plan_.batch + b) * plan_.gate_width();
  }

 private:
  void project() const {
    const int64_t width = plan_.gate_width();
    const int64_t input = plan_.input_size;
    const int64_t batch = plan_.batch;
    const int64_t steps = end_ - begin_;
    if (!plan_.batch_first) {
      // The window's rows of X are contiguous: one product.
      product_transposed(steps * batch, width, input, x_ + begin_ * batch * input, input, w_,
                         buffer_, width, threads_);
    } else if (batch <= steps) {
      // X[b, begin:end] is contiguous; its rows land batch*width apart in the window.
      for (int64_t b = 0; b < batch; ++b) {
        product_transposed(steps, width, input, x_ + (b * plan_.seq_length + begin_) * input, input,
                           w_, buffer_ + b * width, batch * width, threads_);
      }
    } else {
      // X[:, t] has its batch rows seq*input apart.
      for (int64_t t = begin_; t < end_; ++t) {
        product_transposed(batch, width, input, x_ + t * input, plan_.seq_length * input, w_,
                           buffer_ + (t - begin_) * batch * width, width, threads_);
      }
    }
    if (wb_ == nullptr) return;
    const T* rb = wb_ + width;
    const int64_t min_rows = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, width));
    threads_->parallel_for(steps * batch, min_rows, [&](int64_t first, int64_t last) {
      for (int64_t row = first; row < last; ++row) {
        T* p = buffer_ + row * width;
        for (int64_t j = 0; j < rb_columns_; ++j) p[j] += wb_[j] + rb[j];
        for (int64_t j = rb_columns_; j < width; ++j) p[j] += wb_[j];
      }
    });
  }

  const RecurrentPlan& plan_;
  const T* x_;
  const T* w_;
  const T* wb_;
  int64_t rb_columns_;
  T* buffer_;
  ThreadPool* threads_;
  int64_t window_ = 1;
  int64_t begin_ = 0;
  int64_t end_ = 0;  // empty until the first cover()
};

/// state[b] = the initial state of direction d (zeros when the input is omitted).
template <class T>
void load_state(const RecurrentPlan& plan, const T* initial, int64_t d, T* state) {
  const int64_t h = plan.hidden;
  for (int64_t b = 0; b < plan.batch; ++b) {
    T* dst = state + b * h;
    if (initial == nullptr) {
      std::fill(dst, dst + h, T{0});
    } else {
      const T* src = initial + plan.state_offset(d, b);
      std::copy(src, src + h, dst);
    }
  }
}

/// Y_h / Y_c of direction d from the final state; rows of length 0 get zeros.
template <class T>
void store_final_state(const RecurrentPlan& plan, const RecurrentTensors<T>& io, const T* state,
                       int64_t d, T* out) {
  if (out == nullptr) return;
  const int64_t h = plan.hidden;
  for (int64_t b = 0; b < plan.batch; ++b) {
    T* dst = out + plan.state_offset(d, b);
    if (io.length(plan, b) == 0) {
      std::fill(dst, dst + h, T{0});
    } else {
      std::copy(state + b * h, state + (b + 1) * h, dst);
    }
  }
}

/// Y at time step t of direction d: the state for running rows, zeros past a row's length.
template <class T>
void store_step_output(const RecurrentPlan& plan, const RecurrentTensors<T>& io, const T* state,
                       int64_t t, int64_t d) {
  if (io.y == nullptr) return;
  const int64_t h = plan.hidden;
  for (int64_t b = 0; b < plan.batch; ++b) {
    T* dst = io.y + plan.y_offset(t, d, b);
    if (t < io.length(plan, b)) {
      std::copy(state + b * h, state + (b + 1) * h, dst);
    } else {
      std::fill(dst, dst + h, T{0});
    }
  }
}

/// Calls fn(b) for each batch row whose sequence covers time step t, split over the threads.
template <class T, class Fn>
void for_each_running_row(const RecurrentPlan& plan, const RecurrentTensors<T>& io, int64_t t,
                          ThreadPool* threads, const Fn& fn) {
  const int64_t min_rows = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, plan.gate_width()));
  threads->parallel_for(plan.batch, min_rows, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      if (t < io.length(plan, b)) fn(b);
    }
  });
}

/// The time step at position `step` of direction d's walk.
inline int64_t time_at(const RecurrentPlan& plan, int64_t d, int64_t step) {
  return plan.backward(d) ? plan.seq_length - 1 - step : step;
}

}  // namespace onepool::cpu::recurrent
