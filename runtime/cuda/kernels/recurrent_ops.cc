// Node preparation and orchestration of LSTM, GRU and RNN on CUDA (float32; float16 / bfloat16
// models through the float32 adapter of half_compute.h). The node checks and attributes are shared
// with the CPU backend (runtime/recurrent_attributes.h); the device code is recurrent.cu.
//
// Every direction runs at once (direction 1 of a bidirectional node walks backward):
//   1. H (and C) from initial_h / initial_c, zeros without (one kernel).
//   2. X * W^T for every time step and direction: one SGEMM, strided-batched over the
//      directions with X shared. Rows stay in X's order, so layout 1 needs no transpose (the gate
//      kernel indexes them b * seq_length + t).
//   3. Per walk position s (time step s forward, seq_length - 1 - s backward, as on the CPU):
//      H * R^T, one SGEMM batched over the directions, then one gate kernel over (direction, row,
//      unit) that adds the projection and both biases, clips, activates, applies peepholes and
//      input_forget, updates H (and C) and writes Y at that time step; rows past their length
//      keep their state and get zeros in Y. GRU with linear_before_reset 0 needs r before the h
//      gate's product: an SGEMM on the z and r columns, a kernel finishing z and r and forming
//      r . H, an SGEMM of that with Rh, then the gate kernel.
//   4. Y_h / Y_c from the final states, zeros for rows of length 0 (one kernel).
// sequence_lens is device data: only the kernels read it. Cost: one SGEMM of
// [seq*batch, input] x [input, gates*hidden] per direction, seq_length batched SGEMMs of
// [batch, hidden] x [hidden, gates*hidden] (twice as many GRU ones without linear_before_reset)
// and as many gate kernels (twice as many for that GRU), all on the stream (a CUDA graph replays
// them as one launch).
// Workspace, each slice 256-byte aligned: [cuBLAS workspace][projection: directions * seq *
// batch * gates*hidden][recurrent: directions * batch * gates*hidden][H][C, LSTM][r . H, GRU with
// linear_before_reset 0], the last three directions * batch * hidden. The projection of every
// step at once is gates times the size of Y.
#include <cstdint>
#include <utility>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"
#include "runtime/cuda/kernels/gemm.h"
#include "runtime/cuda/kernels/recurrent_launch.h"
#include "runtime/recurrent_attributes.h"

namespace onepool::cuda {

namespace {

using recurrent::RecurrentOp;
using recurrent::RecurrentSpec;

// Everything enqueue needs, fixed at prepare time; the tensor and workspace pointers of `params`
// are set on every enqueue.
struct RecurrentPlan {
  RecurrentParams params;
  GemmCall projection;     // X [seq*batch, input] * W_d^T, batched over the directions
  GemmCall recurrence;     // H_d [batch, hidden] * R_d^T (GRU without linear_before_reset: z, r)
  GemmCall reset;          // GRU without linear_before_reset: (r . H_d) * Rh_d^T into the h columns
  bool split_gru = false;  // GRU with linear_before_reset 0: step 3's four launches
  bool zero_projection = false;  // input_size 0: X * W^T is zeros (no product)
  int64_t rh_offset = 0;         // elements of R_d before Rh (2 * hidden * hidden)
  int64_t h_columns = 0;         // column of the h gate in a recurrent row (2 * hidden)
  size_t cublas_bytes = 0;
  size_t projected_offset = 0, projected_bytes = 0;
  size_t recurrent_offset = 0, hidden_offset = 0, cell_offset = 0, reset_offset = 0;
  size_t workspace_bytes = 0;
};

// Dims and attributes of the device parameters (pointers stay null until enqueue).
RecurrentParams params_of(const RecurrentSpec& spec) {
  RecurrentParams p;
  p.cell = spec.op == RecurrentOp::kLstm
               ? RecurrentCell::kLstm
               : (spec.op == RecurrentOp::kGru ? RecurrentCell::kGru : RecurrentCell::kRnn);
  p.seq_length = spec.seq_length;
  p.batch = spec.batch;
  p.hidden = spec.hidden;
  p.directions = static_cast<int32_t>(spec.directions);
  p.reverse = spec.reverse;
  p.batch_first = spec.batch_first;
  p.has_clip = spec.has_clip;
  p.clip = spec.clip;
  p.linear_before_reset = spec.linear_before_reset;
  p.input_forget = spec.input_forget;
  for (int64_t d = 0; d < spec.directions; ++d) {
    for (int64_t k = 0; k < spec.activations_per_direction; ++k) {
      p.functions[d][k] = spec.activation(d, k);
    }
  }
  return p;
}

// Appends a slice of `floats` float32 values, 256-byte aligned; false when the sizes overflow.
bool add_slice(int64_t floats, size_t& total, size_t& offset) {
  size_t bytes = 0;
  if (floats < 0 || __builtin_mul_overflow(static_cast<size_t>(floats), sizeof(float), &bytes) ||
      bytes > SIZE_MAX - 255) {
    return false;
  }
  offset = total;
  return !__builtin_add_overflow(total, align_256(bytes), &total);
}

// The workspace slices of the header comment, and every size the products use (W and R of one
// direction are their strides), overflow-checked.
Status plan_workspace(const CudaNodeContext& node, const RecurrentSpec& spec, RecurrentPlan& plan) {
  int64_t rows = 0, projected = 0, recurrent = 0, state = 0, w = 0, r = 0;
  bool fits = !__builtin_mul_overflow(spec.gate_width(), spec.input_size, &w) &&
              !__builtin_mul_overflow(spec.gate_width(), spec.hidden, &r) &&
              !__builtin_mul_overflow(spec.seq_length, spec.batch, &rows) &&
              !__builtin_mul_overflow(rows, spec.gate_width(), &projected) &&
              !__builtin_mul_overflow(projected, spec.directions, &projected) &&
              !__builtin_mul_overflow(spec.batch, spec.gate_width(), &recurrent) &&
              !__builtin_mul_overflow(recurrent, spec.directions, &recurrent) &&
              !__builtin_mul_overflow(spec.batch, spec.hidden, &state) &&
              !__builtin_mul_overflow(state, spec.directions, &state);
  plan.cublas_bytes = align_256(node.options().cublas_workspace_bytes);
  size_t total = plan.cublas_bytes;
  fits = fits && add_slice(projected, total, plan.projected_offset) &&
         add_slice(recurrent, total, plan.recurrent_offset) &&
         add_slice(state, total, plan.hidden_offset);
  if (fits && spec.op == RecurrentOp::kLstm) fits = add_slice(state, total, plan.cell_offset);
  if (fits && plan.split_gru) fits = add_slice(state, total, plan.reset_offset);
  if (!fits) {
    return node.error(StatusCode::kOutOfRange, "workspace for seq_length=", spec.seq_length,
                      " batch=", spec.batch, " input_size=", spec.input_size, " ", spec.gates,
                      "*hidden_size=", spec.gate_width(), " overflows");
  }
  plan.projected_bytes = static_cast<size_t>(projected) * sizeof(float);
  plan.workspace_bytes = total;
  return Status::ok();
}

// The three products in cuBLAS terms; fails (kUnsupported) past cuBLAS's int32 dims.
Status plan_products(const CudaNodeContext& node, const RecurrentSpec& spec, RecurrentPlan& plan) {
  const int64_t h = spec.hidden;
  const int64_t width = spec.gate_width();
  const int64_t d = spec.directions;
  Expected<GemmCall> projection =
      row_major_gemm(spec.seq_length * spec.batch, width, spec.input_size, false, true, d, 0,
                     width * spec.input_size, spec.seq_length * spec.batch * width);
  // Without linear_before_reset, the GRU's first product covers z and r only.
  const int64_t columns = plan.split_gru ? 2 * h : width;
  Expected<GemmCall> recurrence = row_major_gemm(spec.batch, columns, h, false, true, d,
                                                 spec.batch * h, width * h, spec.batch * width);
  Expected<GemmCall> reset = row_major_gemm(spec.batch, h, h, false, true, d, spec.batch * h,
                                            width * h, spec.batch * width);
  for (const Expected<GemmCall>* call : {&projection, &recurrence, &reset}) {
    if (!*call) return node.error(call->status().code(), call->status().message());
  }
  plan.projection = *projection;
  plan.recurrence = *recurrence;
  plan.reset = *reset;
  // The products land in rows of the recurrent slice, gates*hidden wide.
  if (width > 0) {
    plan.recurrence.ldc = static_cast<int>(width);
    plan.reset.ldc = static_cast<int>(width);
  }
  plan.zero_projection = spec.input_size == 0;
  plan.rh_offset = 2 * h * h;
  plan.h_columns = 2 * h;
  return Status::ok();
}

// The node's tensors and workspace slices into the device parameters.
RecurrentParams bind(const RecurrentPlan& plan, const CudaRunContext& c) {
  const auto in = [&](size_t i) -> const void* {
    return i < c.inputs.size() ? c.inputs[i].data : nullptr;
  };
  const auto out = [&](size_t i) -> float* {
    return i < c.outputs.size() ? static_cast<float*>(c.outputs[i].data) : nullptr;
  };
  const auto slice = [&](size_t offset) { return reinterpret_cast<float*>(c.workspace + offset); };
  RecurrentParams p = plan.params;
  p.bias = static_cast<const float*>(in(recurrent::kInputB));
  p.sequence_lens = static_cast<const int32_t*>(in(recurrent::kInputSequenceLens));
  p.initial_h = static_cast<const float*>(in(recurrent::kInputInitialH));
  const bool lstm = p.cell == RecurrentCell::kLstm;
  p.initial_c = lstm ? static_cast<const float*>(in(recurrent::kInputInitialC)) : nullptr;
  p.peepholes = lstm ? static_cast<const float*>(in(recurrent::kInputP)) : nullptr;
  p.y = out(recurrent::kOutputY);
  p.y_h = out(recurrent::kOutputYH);
  p.y_c = lstm ? out(recurrent::kOutputYC) : nullptr;
  p.projected = slice(plan.projected_offset);
  p.recurrent = slice(plan.recurrent_offset);
  p.hidden_state = slice(plan.hidden_offset);
  p.cell_state = lstm ? slice(plan.cell_offset) : nullptr;
  p.reset_hidden = plan.split_gru ? slice(plan.reset_offset) : nullptr;
  return p;
}

// Step 3 at walk position `step`: the recurrent product(s) and the gate math.
Status run_step(const RecurrentPlan& plan, const RecurrentParams& p, const CudaRunContext& c,
                const float* r, int64_t step) {
  ONEPOOL_RETURN_IF_ERROR(
      run_gemm(c, plan.recurrence, p.hidden_state, r, p.recurrent, plan.cublas_bytes));
  if (plan.split_gru) {
    ONEPOOL_LAUNCH_RETURN_IF_ERROR(launch_gru_reset_gates(p, step, c.stream));
    ONEPOOL_RETURN_IF_ERROR(run_gemm(c, plan.reset, p.reset_hidden, r + plan.rh_offset,
                                     p.recurrent + plan.h_columns, plan.cublas_bytes));
  }
  return ONEPOOL_CUDA_STATUS(launch_recurrent_gates(p, step, c.stream));
}

Status enqueue_recurrent(const RecurrentPlan& plan, const CudaRunContext& c) {
  if (c.workspace_bytes < plan.workspace_bytes) {
    return make_status(StatusCode::kInternal, "workspace of ", c.workspace_bytes,
                       " bytes, expected at least ", plan.workspace_bytes);
  }
  const RecurrentParams p = bind(plan, c);
  const auto* x = static_cast<const float*>(c.inputs[recurrent::kInputX].data);
  const auto* w = static_cast<const float*>(c.inputs[recurrent::kInputW].data);
  const auto* r = static_cast<const float*>(c.inputs[recurrent::kInputR].data);
  // Step 1. Initial states.
  ONEPOOL_LAUNCH_RETURN_IF_ERROR(launch_recurrent_load_state(p, c.stream));
  // Step 2. The input projection of every time step and direction.
  auto* projected = reinterpret_cast<float*>(c.workspace + plan.projected_offset);
  if (plan.zero_projection) {
    if (plan.projected_bytes > 0) {
      ONEPOOL_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(projected, 0, plan.projected_bytes, c.stream));
    }
  } else {
    ONEPOOL_RETURN_IF_ERROR(run_gemm(c, plan.projection, x, w, projected, plan.cublas_bytes));
  }
  // Step 3. The recurrence.
  for (int64_t step = 0; step < p.seq_length; ++step) {
    ONEPOOL_RETURN_IF_ERROR(run_step(plan, p, c, r, step));
  }
  // Step 4. Final states.
  return ONEPOOL_CUDA_STATUS(launch_recurrent_final_state(p, c.stream));
}

Expected<CudaPreparedKernel> make_recurrent_kernel(const CudaNodeContext& node, RecurrentOp op) {
  // Step 1. Inputs and outputs, X's dtype, then what every backend checks
  // (runtime/recurrent_attributes.h).
  ONEPOOL_RETURN_IF_ERROR(recurrent::check_recurrent_arity(node, op));
  if (node.input(recurrent::kInputX).dtype != DType::kFloat32) {
    return node.unsupported("float32 only: X, W, R, B, initial states and P must be float32");
  }
  ONEPOOL_ASSIGN_OR_RETURN(RecurrentSpec spec, recurrent::read_recurrent_spec(node, op));
  // Step 2. Device parameters, products and workspace.
  RecurrentPlan plan;
  plan.params = params_of(spec);
  plan.split_gru = op == RecurrentOp::kGru && !spec.linear_before_reset;
  ONEPOOL_RETURN_IF_ERROR(plan_workspace(node, spec, plan));  // first: checks the products' sizes
  ONEPOOL_RETURN_IF_ERROR(plan_products(node, spec, plan));
  const size_t workspace_bytes = plan.workspace_bytes;
  return make_kernel(
      [plan = std::move(plan)](const CudaRunContext& c) { return enqueue_recurrent(plan, c); },
      workspace_bytes);
}

}  // namespace

Expected<CudaPreparedKernel> make_lstm_kernel(const CudaNodeContext& node) {
  return make_recurrent_kernel(node, RecurrentOp::kLstm);
}

Expected<CudaPreparedKernel> make_gru_kernel(const CudaNodeContext& node) {
  return make_recurrent_kernel(node, RecurrentOp::kGru);
}

Expected<CudaPreparedKernel> make_rnn_kernel(const CudaNodeContext& node) {
  return make_recurrent_kernel(node, RecurrentOp::kRnn);
}

void register_recurrent_kernels(CudaKernelRegistry& registry) {
  registry.add("LSTM", &make_lstm_kernel);
  registry.add("GRU", &make_gru_kernel);
  registry.add("RNN", &make_rnn_kernel);
}

}  // namespace onepool::cuda
