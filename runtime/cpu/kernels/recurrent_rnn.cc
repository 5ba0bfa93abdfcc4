// CPU RNN (opset 7 and 14 semantics): Ht = f(Xt*W^T + Ht-1*R^T + Wb + Rb), f = Tanh by default,
// `clip` applied to f's input. The products are GEMMs (see recurrent.h).
#include <memory>
#include <utility>

#include "runtime/cpu/kernels/recurrent.h"

namespace onepool::cpu::recurrent {
namespace {

template <class T>
class RnnKernel final : public DirectionalKernel<T> {
 public:
  using DirectionalKernel<T>::DirectionalKernel;

 private:
  using DirectionalKernel<T>::plan_;

  void run_direction(const RecurrentTensors<T>& io, int64_t d, T* workspace, size_t workspace_bytes,
                     ThreadPool* threads) const override {
    const int64_t h = plan_.hidden;
    T* recurrent = workspace + plan_.recurrent_offset;
    T* hidden = workspace + plan_.hidden_offset;
    // Step 1. The input projection with both biases, a window of time steps at a time.
    InputProjection<T> projection(plan_, io, d, h, workspace, workspace_bytes, threads);
    load_state(plan_, io.initial_h, d, hidden);
    const T* r = io.r + d * h * h;
    const GateActivation& f = plan_.activation(d, 0);
    // Step 2. The recurrence.
    for (int64_t step = 0; step < plan_.seq_length; ++step) {
      const int64_t t = time_at(plan_, d, step);
      projection.cover(t);
      product_transposed(plan_.batch, h, h, hidden, h, r, recurrent, h, threads);
      for_each_running_row(plan_, io, t, threads, [&](int64_t b) {
        const T* x_part = projection.row(t, b);
        T* gate = recurrent + b * h;
        for (int64_t j = 0; j < h; ++j) gate[j] += x_part[j];
        finish_gate(plan_, f, gate, h);
        std::copy(gate, gate + h, hidden + b * h);
      });
      store_step_output(plan_, io, hidden, t, d);
    }
    // Step 3. Final state.
    store_final_state(plan_, io, hidden, d, io.y_h);
  }
};

}  // namespace

Expected<PreparedKernel> make_rnn_kernel(const NodeContext& node) {
  ONEPOOL_ASSIGN_OR_RETURN(RecurrentPlan plan, plan_recurrent(node, RecurrentOp::kRnn));
  PreparedKernel prepared;
  prepared.workspace_bytes = plan.workspace_bytes;
  prepared.workspace_preferred_bytes = plan.workspace_preferred_bytes;
  if (node.input(kInputX).dtype == DType::kFloat64) {
    prepared.kernel = std::make_unique<RnnKernel<double>>(std::move(plan));
  } else {
    prepared.kernel = std::make_unique<RnnKernel<float>>(std::move(plan));
  }
  return prepared;
}

}  // namespace onepool::cpu::recurrent
