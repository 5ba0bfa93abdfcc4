// CPU GRU (opset 7 and 14 semantics). Gates in W, R and B are ordered z, r, h. Per time step,
// with the products done as GEMMs (see recurrent.h):
//   z = f(Xt*Wz^T + Ht-1*Rz^T + Wbz + Rbz)
//   r = f(Xt*Wr^T + Ht-1*Rr^T + Wbr + Rbr)
//   h = g(Xt*Wh^T + (r (.) Ht-1)*Rh^T + Rbh + Wbh)        linear_before_reset == 0
//   h = g(Xt*Wh^T + r (.) (Ht-1*Rh^T + Rbh) + Wbh)        linear_before_reset != 0
//   Ht = (1 - z) (.) h + z (.) Ht-1
// With linear_before_reset == 0 the h gate needs r first: each step runs a GEMM for z and r,
// the gate math for them, then a second GEMM on r (.) Ht-1.
#include <memory>
#include <utility>

#include "runtime/cpu/kernels/recurrent.h"

namespace onepool::cpu::recurrent {
namespace {

template <class T>
class GruKernel final : public DirectionalKernel<T> {
 public:
  using DirectionalKernel<T>::DirectionalKernel;

 private:
  using DirectionalKernel<T>::plan_;

  void run_direction(const RecurrentTensors<T>& io, int64_t d, T* workspace, size_t workspace_bytes,
                     ThreadPool* threads) const override {
    const int64_t h = plan_.hidden;
    const int64_t width = plan_.gate_width();
    T* recurrent = workspace + plan_.recurrent_offset;
    T* hidden = workspace + plan_.hidden_offset;
    // Step 1. The input projection, a window of time steps at a time; Rbh joins it unless it
    // must be multiplied by r.
    InputProjection<T> projection(plan_, io, d, plan_.linear_before_reset ? 2 * h : width,
                                  workspace, workspace_bytes, threads);
    load_state(plan_, io.initial_h, d, hidden);
    const T* r = io.r + d * width * h;
    const T* rb_h = io.b ? io.b + d * 2 * width + width + 2 * h : nullptr;
    // Step 2. The recurrence.
    for (int64_t step = 0; step < plan_.seq_length; ++step) {
      const int64_t t = time_at(plan_, d, step);
      projection.cover(t);
      if (plan_.linear_before_reset) {
        step_linear_before_reset(io, d, t, r, rb_h, projection, recurrent, hidden, threads);
      } else {
        step_reset_before_linear(io, d, t, r, projection, recurrent, hidden,
                                 workspace + plan_.scratch_offset, threads);
      }
      store_step_output(plan_, io, hidden, t, d);
    }
    // Step 3. Final state.
    store_final_state(plan_, io, hidden, d, io.y_h);
  }

  // z and r from their pre-activations (projection + recurrence), in place in `gates`.
  void finish_update_gates(int64_t d, const T* projected, T* gates) const {
    const int64_t h = plan_.hidden;
    for (int64_t j = 0; j < 2 * h; ++j) gates[j] += projected[j];
    finish_gate(plan_, plan_.activation(d, 0), gates, h);
    finish_gate(plan_, plan_.activation(d, 0), gates + h, h);
  }

  // Ht = (1 - z) (.) h + z (.) Ht-1.
  static void blend(const T* z, const T* h_gate, T* h_row, int64_t h) {
    for (int64_t j = 0; j < h; ++j) h_row[j] = (T{1} - z[j]) * h_gate[j] + z[j] * h_row[j];
  }

  void step_linear_before_reset(const RecurrentTensors<T>& io, int64_t d, int64_t t, const T* r,
                                const T* rb_h, const InputProjection<T>& projection, T* recurrent,
                                T* hidden, ThreadPool* threads) const {
    const int64_t h = plan_.hidden;
    const int64_t width = plan_.gate_width();
    product_transposed(plan_.batch, width, h, hidden, h, r, recurrent, width, threads);
    for_each_running_row(plan_, io, t, threads, [&](int64_t b) {
      const T* x_part = projection.row(t, b);
      T* gates = recurrent + b * width;
      finish_update_gates(d, x_part, gates);
      const T* reset = gates + h;
      T* h_gate = gates + 2 * h;
      for (int64_t j = 0; j < h; ++j) {
        const T linear = rb_h ? h_gate[j] + rb_h[j] : h_gate[j];
        h_gate[j] = x_part[2 * h + j] + reset[j] * linear;
      }
      finish_gate(plan_, plan_.activation(d, 1), h_gate, h);
      blend(gates, h_gate, hidden + b * h, h);
    });
  }

  void step_reset_before_linear(const RecurrentTensors<T>& io, int64_t d, int64_t t, const T* r,
                                const InputProjection<T>& projection, T* recurrent, T* hidden,
                                T* reset_hidden, ThreadPool* threads) const {
    const int64_t h = plan_.hidden;
    const int64_t width = plan_.gate_width();
    // z and r for every row; rows past their length only feed r (.) Ht-1 rows nobody reads.
    product_transposed(plan_.batch, 2 * h, h, hidden, h, r, recurrent, width, threads);
    const int64_t min_rows = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, width));
    threads->parallel_for(plan_.batch, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        T* gates = recurrent + b * width;
        finish_update_gates(d, projection.row(t, b), gates);
        const T* h_row = hidden + b * h;
        for (int64_t j = 0; j < h; ++j) reset_hidden[b * h + j] = gates[h + j] * h_row[j];
      }
    });
    product_transposed(plan_.batch, h, h, reset_hidden, h, r + 2 * h * h, recurrent + 2 * h, width,
                       threads);
    for_each_running_row(plan_, io, t, threads, [&](int64_t b) {
      const T* x_part = projection.row(t, b);
      T* gates = recurrent + b * width;
      T* h_gate = gates + 2 * h;
      for (int64_t j = 0; j < h; ++j) h_gate[j] += x_part[2 * h + j];
      finish_gate(plan_, plan_.activation(d, 1), h_gate, h);
      blend(gates, h_gate, hidden + b * h, h);
    });
  }
};

}  // namespace

Expected<PreparedKernel> make_gru_kernel(const NodeContext& node) {
  ONEPOOL_ASSIGN_OR_RETURN(RecurrentPlan plan, plan_recurrent(node, RecurrentOp::kGru));
  PreparedKernel prepared;
  prepared.workspace_bytes = plan.workspace_bytes;
  prepared.workspace_preferred_bytes = plan.workspace_preferred_bytes;
  if (node.input(kInputX).dtype == DType::kFloat64) {
    prepared.kernel = std::make_unique<GruKernel<double>>(std::move(plan));
  } else {
    prepared.kernel = std::make_unique<GruKernel<float>>(std::move(plan));
  }
  return prepared;
}

}  // namespace onepool::cpu::recurrent
