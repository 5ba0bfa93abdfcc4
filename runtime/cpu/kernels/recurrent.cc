// X's dtype check and the workspace layout shared by the CPU LSTM, GRU and RNN kernels, and their
// registration. The other node checks and the attributes are every backend's
// (runtime/recurrent_attributes.h); the gate math of each op lives in recurrent_{lstm,gru,rnn}.cc.
#include "runtime/cpu/kernels/recurrent.h"

#include <limits>
#include <utility>

#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu::recurrent {
namespace {

// X's dtype: the CPU kernels are float32 and float64 (the other tensors must match it: checked by
// read_recurrent_spec).
Status check_cpu_dtype(const NodeContext& node) {
  const DType dtype = node.input(kInputX).dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    return node.error(StatusCode::kUnsupported, "input '", node.input(kInputX).name, "': dtype ",
                      dtype_name(dtype), " is not supported by the CPU kernel (float32, float64)");
  }
  return Status::ok();
}

// Appends a slice of `count` elements padded to 64 bytes; false when the sizes overflow.
bool add_slice(int64_t count, int64_t element_size, int64_t& total, int64_t& offset) {
  const int64_t pad = 64 / element_size;
  offset = total;
  int64_t padded = 0;
  if (__builtin_add_overflow(count, pad - 1, &padded)) return false;
  padded = padded / pad * pad;
  return !__builtin_add_overflow(total, padded, &total);
}

constexpr int64_t kLeastProjectionRows = 64;

// The fixed slices first, then the projection window: every step at the preferred size; at the
// least, enough steps for kLeastProjectionRows rows of X (a one-row GEMM per step would cost
// twice the time for a saving of a few hundred KB). CBLAS takes 32-bit dims and leading dimensions:
// checked for the largest products (seq*batch rows; X rows seq*input apart with layout 1).
Status plan_workspace(const NodeContext& node, RecurrentPlan& plan) {
  const int64_t element_size = node.input(kInputX).dtype == DType::kFloat64 ? 8 : 4;
  int64_t rows = 0;
  int64_t step = 0;
  int64_t all_steps = 0;
  int64_t state = 0;
  const bool products_fit = !__builtin_mul_overflow(plan.seq_length, plan.batch, &rows) &&
                            !__builtin_mul_overflow(plan.batch, plan.gate_width(), &step) &&
                            !__builtin_mul_overflow(rows, plan.gate_width(), &all_steps) &&
                            !__builtin_mul_overflow(plan.batch, plan.hidden, &state);
  const int64_t least_steps =
      std::min(plan.seq_length,
               std::max<int64_t>(1, kLeastProjectionRows / std::max<int64_t>(1, plan.batch)));
  int64_t least_window = 0;
  int64_t total = 0;
  bool fits = products_fit && !__builtin_mul_overflow(step, least_steps, &least_window) &&
              add_slice(step, element_size, total, plan.recurrent_offset) &&
              add_slice(state, element_size, total, plan.hidden_offset);
  if (fits && plan.op == RecurrentOp::kLstm) {
    fits = add_slice(state, element_size, total, plan.cell_offset);
  }
  if (fits && plan.op == RecurrentOp::kGru && !plan.linear_before_reset) {
    fits = add_slice(state, element_size, total, plan.scratch_offset);
  }
  plan.projected_offset = total;
  int64_t least = 0;
  int64_t preferred = 0;
  fits = fits && !__builtin_add_overflow(total, std::max(step, least_window), &least) &&
         !__builtin_add_overflow(total, all_steps, &preferred) &&
         !__builtin_mul_overflow(least, element_size, &least) &&
         !__builtin_mul_overflow(preferred, element_size, &preferred);
  if (!fits) {
    return node.error(StatusCode::kOutOfRange, "workspace for seq_length=", plan.seq_length,
                      " batch=", plan.batch, " ", plan.gates, "*hidden_size=", plan.gate_width(),
                      " overflows int64");
  }
  plan.workspace_bytes = static_cast<size_t>(least);
  plan.workspace_preferred_bytes = static_cast<size_t>(preferred);
  GemmShape largest;
  largest.m = rows;
  largest.n = plan.gate_width();
  largest.k = std::max(plan.input_size, plan.hidden);
  if (__builtin_mul_overflow(plan.seq_length, plan.input_size, &largest.lda)) {
    largest.lda = std::numeric_limits<int64_t>::max();
  }
  if (!plan.batch_first) largest.lda = largest.k;
  largest.ldb = largest.k;
  largest.ldc = step;
  if (!gemm_fits_blas(largest)) {
    return node.error(StatusCode::kUnsupported, "seq_length=", plan.seq_length,
                      " batch=", plan.batch, " input_size=", plan.input_size, " ", plan.gates,
                      "*hidden_size=", plan.gate_width(), " exceed the 32-bit BLAS range");
  }
  return Status::ok();
}

}  // namespace

Expected<RecurrentPlan> plan_recurrent(const NodeContext& node, RecurrentOp op) {
  // Step 1. Inputs and outputs, X's dtype, then everything the backends share (dtypes, attributes,
  // dims, shapes: runtime/recurrent_attributes.h).
  ONEPOOL_RETURN_IF_ERROR(onepool::recurrent::check_recurrent_arity(node, op));
  ONEPOOL_RETURN_IF_ERROR(check_cpu_dtype(node));
  ONEPOOL_ASSIGN_OR_RETURN(RecurrentSpec spec, onepool::recurrent::read_recurrent_spec(node, op));
  RecurrentPlan plan;
  static_cast<RecurrentSpec&>(plan) = std::move(spec);
  // Step 2. Workspace slices, overflow-checked.
  ONEPOOL_RETURN_IF_ERROR(plan_workspace(node, plan));
  return plan;
}

Status check_sequence_lens(const RecurrentPlan& plan, const int32_t* sequence_lens) {
  if (sequence_lens == nullptr) return Status::ok();
  for (int64_t b = 0; b < plan.batch; ++b) {
    if (sequence_lens[b] >= 0 && sequence_lens[b] <= plan.seq_length) continue;
    return make_status(StatusCode::kInvalidArgument, plan.node_label, ": input sequence_lens[", b,
                       "] = ", sequence_lens[b], ": expected a length in [0, ", plan.seq_length,
                       "] (seq_length of X)");
  }
  return Status::ok();
}

}  // namespace onepool::cpu::recurrent

namespace onepool::cpu {

void register_recurrent_kernels(KernelRegistry& registry) {
  registry.add("LSTM", &recurrent::make_lstm_kernel);
  registry.add("GRU", &recurrent::make_gru_kernel);
  registry.add("RNN", &recurrent::make_rnn_kernel);
}

}  // namespace onepool::cpu
