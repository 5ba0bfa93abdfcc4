// CPU LSTM (opset 7 and 14 semantics). Gates in W, R and B are ordered i, o, f, c; peepholes P
// are i, o, f. Per time step, with the products done as GEMMs (see recurrent.h):
//   i = f(Xt*Wi^T + Ht-1*Ri^T + Pi (.) Ct-1 + Wbi + Rbi)
//   f = f(Xt*Wf^T + Ht-1*Rf^T + Pf (.) Ct-1 + Wbf + Rbf)     (1 - i when input_forget)
//   c = g(Xt*Wc^T + Ht-1*Rc^T + Wbc + Rbc)
//   Ct = f (.) Ct-1 + i (.) c
//   o = f(Xt*Wo^T + Ht-1*Ro^T + Po (.) Ct + Wbo + Rbo)
//   Ht = o (.) h(Ct)
// `clip` bounds every gate's input before its activation (not Ct), as ONNX Runtime does.
#include <algorithm>
#include <memory>
#include <utility>

#include "runtime/cpu/kernels/recurrent.h"

namespace onepool::cpu::recurrent {
namespace {

template <class T>
class LstmKernel final : public DirectionalKernel<T> {
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
    T* cell = workspace + plan_.cell_offset;
    // Step 1. The input projection with both biases, a window of time steps at a time.
    InputProjection<T> projection(plan_, io, d, width, workspace, workspace_bytes, threads);
    load_state(plan_, io.initial_h, d, hidden);
    load_state(plan_, io.initial_c, d, cell);
    const T* r = io.r + d * width * h;
    const T* peepholes = io.p ? io.p + d * 3 * h : nullptr;
    // Step 2. The recurrence, one GEMM and one pass of gate math per time step.
    for (int64_t step = 0; step < plan_.seq_length; ++step) {
      const int64_t t = time_at(plan_, d, step);
      projection.cover(t);
      product_transposed(plan_.batch, width, h, hidden, h, r, recurrent, width, threads);
      for_each_running_row(plan_, io, t, threads, [&](int64_t b) {
        update_row(d, projection.row(t, b), recurrent + b * width, peepholes, hidden + b * h,
                   cell + b * h);
      });
      store_step_output(plan_, io, hidden, t, d);
    }
    // Step 3. Final states.
    store_final_state(plan_, io, hidden, d, io.y_h);
    store_final_state(plan_, io, cell, d, io.y_c);
  }

  // One batch row: `gates` holds Ht-1*R^T and becomes the gate values; h and c are updated.
  void update_row(int64_t d, const T* projected, T* gates, const T* peepholes, T* h_row,
                  T* c_row) const {
    const int64_t h = plan_.hidden;
    const GateActivation& f = plan_.activation(d, 0);
    const GateActivation& g = plan_.activation(d, 1);
    const GateActivation& h_activation = plan_.activation(d, 2);
    T* gate_i = gates;
    T* gate_o = gates + h;
    T* gate_f = gates + 2 * h;
    T* gate_c = gates + 3 * h;
    for (int64_t j = 0; j < h; ++j) {
      gate_i[j] += projected[j];
      gate_c[j] += projected[3 * h + j];
    }
    if (peepholes) {
      for (int64_t j = 0; j < h; ++j) gate_i[j] += peepholes[j] * c_row[j];
    }
    finish_gate(plan_, f, gate_i, h);
    if (plan_.input_forget) {
      for (int64_t j = 0; j < h; ++j) gate_f[j] = T{1} - gate_i[j];
    } else {
      for (int64_t j = 0; j < h; ++j) gate_f[j] += projected[2 * h + j];
      if (peepholes) {
        for (int64_t j = 0; j < h; ++j) gate_f[j] += peepholes[2 * h + j] * c_row[j];
      }
      finish_gate(plan_, f, gate_f, h);
    }
    finish_gate(plan_, g, gate_c, h);
    for (int64_t j = 0; j < h; ++j) c_row[j] = gate_f[j] * c_row[j] + gate_i[j] * gate_c[j];
    for (int64_t j = 0; j < h; ++j) gate_o[j] += projected[h + j];
    if (peepholes) {
      for (int64_t j = 0; j < h; ++j) gate_o[j] += peepholes[h + j] * c_row[j];
    }
    finish_gate(plan_, f, gate_o, h);
    // h(Ct) goes through gate_c's slot (its value is used up) so that h runs as one loop.
    std::copy(c_row, c_row + h, gate_c);
    activate_in_place(h_activation, gate_c, h);
    for (int64_t j = 0; j < h; ++j) h_row[j] = gate_o[j] * gate_c[j];
  }
};

}  // namespace

Expected<PreparedKernel> make_lstm_kernel(const NodeContext& node) {
  ONEPOOL_ASSIGN_OR_RETURN(RecurrentPlan plan, plan_recurrent(node, RecurrentOp::kLstm));
  PreparedKernel prepared;
  prepared.workspace_bytes = plan.workspace_bytes;
  prepared.workspace_preferred_bytes = plan.workspace_preferred_bytes;
  if (node.input(kInputX).dtype == DType::kFloat64) {
    prepared.kernel = std::make_unique<LstmKernel<double>>(std::move(plan));
  } else {
    prepared.kernel = std::make_unique<LstmKernel<float>>(std::move(plan));
  }
  return prepared;
}

}  // namespace onepool::cpu::recurrent
