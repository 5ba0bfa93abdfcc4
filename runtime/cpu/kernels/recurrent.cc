// Node checks, attributes and workspace layout shared by the CPU LSTM, GRU and RNN kernels, and
// their registration. The gate math of each op lives in recurrent_{lstm,gru,rnn}.cc.
#include "runtime/cpu/kernels/recurrent.h"

#include <cctype>
#include <limits>
#include <utility>

#include "runtime/cpu/kernel_registry.h"

namespace onepool::cpu::recurrent {
namespace {

int64_t gate_count(RecurrentOp op) {
  switch (op) {
    case RecurrentOp::kLstm:
      return 4;
    case RecurrentOp::kGru:
      return 3;
    case RecurrentOp::kRnn:
      return 1;
  }
  return 1;
}

// The ONNX defaults: LSTM f=Sigmoid g=Tanh h=Tanh, GRU f=Sigmoid g=Tanh, RNN f=Tanh.
std::vector<std::string> default_activations(RecurrentOp op) {
  switch (op) {
    case RecurrentOp::kLstm:
      return {"Sigmoid", "Tanh", "Tanh"};
    case RecurrentOp::kGru:
      return {"Sigmoid", "Tanh"};
    case RecurrentOp::kRnn:
      return {"Tanh"};
  }
  return {"Tanh"};
}

struct ActivationInfo {
  const char* name;  // lower case
  ActivationFunction function;
  bool takes_alpha;
  bool takes_beta;
  float default_alpha;
  float default_beta;
};

// Defaults are those of the ONNX operators of the same name (ThresholdedRelu alpha 1, Affine
// alpha 1 beta 0, ScaledTanh taken as 1 and 1: the spec gives none).
constexpr ActivationInfo kActivationTable[] = {
    {"relu", ActivationFunction::kRelu, false, false, 0.0f, 0.0f},
    {"tanh", ActivationFunction::kTanh, false, false, 0.0f, 0.0f},
    {"sigmoid", ActivationFunction::kSigmoid, false, false, 0.0f, 0.0f},
    {"affine", ActivationFunction::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActivationFunction::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"thresholdedrelu", ActivationFunction::kThresholdedRelu, true, false, 1.0f, 0.0f},
    {"scaledtanh", ActivationFunction::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActivationFunction::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActivationFunction::kElu, true, false, 1.0f, 0.0f},
    {"softsign", ActivationFunction::kSoftsign, false, false, 0.0f, 0.0f},
    {"softplus", ActivationFunction::kSoftplus, false, false, 0.0f, 0.0f},
};

const ActivationInfo* find_activation(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const ActivationInfo& info : kActivationTable) {
    if (lower == info.name) return &info;
  }
  return nullptr;
}

// `activations` with `activation_alpha` / `activation_beta`. The spec consumes the alpha and beta
// lists in the order of the functions; like ONNX Runtime, only functions that take an alpha (a
// beta) consume one, and a function past the end of a list gets its default.
Status read_activations(const NodeContext& node, RecurrentPlan& plan) {
  const AttributeMap& attributes = node.node().attributes;
  std::vector<std::string> names = default_activations(plan.op);
  plan.activations_per_direction = static_cast<int64_t>(names.size());
  if (const Attribute* given = attributes.find("activations")) {
    if (given->kind != Attribute::Kind::kStrings) {
      return node.error(StatusCode::kInvalidModel, "attribute 'activations': expected a list of ",
                        "strings");
    }
    names = given->strings;
  } else if (plan.directions == 2) {
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  const size_t per_direction = static_cast<size_t>(plan.activations_per_direction);
  const size_t expected = per_direction * static_cast<size_t>(plan.directions);
  if (names.size() == per_direction && plan.directions == 2) {
    // One set given for both directions: the reverse direction reuses it.
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  } else if (names.size() == 2 * per_direction && plan.directions == 1) {
    names.resize(per_direction);  // a both-directions list on a one-direction node
  } else if (names.size() != expected) {
    return node.error(StatusCode::kInvalidModel, "attribute 'activations': expected ", expected,
                      " functions (", per_direction, " per direction, ", plan.directions,
                      " direction(s)), got ", names.size());
  }
  const std::vector<float> alphas = attributes.get_floats("activation_alpha");
  const std::vector<float> betas = attributes.get_floats("activation_beta");
  size_t next_alpha = 0;
  size_t next_beta = 0;
  for (const std::string& name : names) {
    const ActivationInfo* info = find_activation(name);
    if (info == nullptr) {
      return node.error(StatusCode::kUnsupported, "activation '", name,
                        "': expected one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                        "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus");
    }
    GateActivation activation;
    activation.function = info->function;
    activation.alpha = info->default_alpha;
    activation.beta = info->default_beta;
    if (info->takes_alpha && next_alpha < alphas.size()) activation.alpha = alphas[next_alpha++];
    if (info->takes_beta && next_beta < betas.size()) activation.beta = betas[next_beta++];
    plan.activations.push_back(activation);
  }
  return Status::ok();
}

Status read_attributes(const NodeContext& node, RecurrentPlan& plan) {
  const AttributeMap& attributes = node.node().attributes;
  const std::string direction = attributes.get_string("direction", "forward");
  if (direction == "bidirectional") {
    plan.directions = 2;
  } else if (direction == "reverse") {
    plan.reverse = true;
  } else if (direction != "forward") {
    return node.error(StatusCode::kInvalidModel, "attribute 'direction': expected forward, ",
                      "reverse or bidirectional, got '", direction, "'");
  }
  const int64_t layout = attributes.get_int("layout", 0);
  if (layout != 0 && layout != 1) {
    return node.error(StatusCode::kInvalidModel, "attribute 'layout': expected 0 or 1, got ",
                      layout);
  }
  plan.batch_first = layout == 1;
  if (attributes.has("clip")) {
    plan.has_clip = true;
    plan.clip = attributes.get_float("clip", 0.0f);
    if (!(plan.clip >= 0.0f)) {
      return node.error(StatusCode::kInvalidModel, "attribute 'clip': expected a threshold >= 0, ",
                        "got ", plan.clip);
    }
  }
  if (plan.op == RecurrentOp::kGru) {
    plan.linear_before_reset = attributes.get_int("linear_before_reset", 0) != 0;
  }
  if (plan.op == RecurrentOp::kLstm) {
    plan.input_forget = attributes.get_int("input_forget", 0) != 0;
  }
  return read_activations(node, plan);
}

Status check_arity(const NodeContext& node, RecurrentOp op) {
  const size_t max_inputs = op == RecurrentOp::kLstm ? 8 : 6;
  const size_t max_outputs = op == RecurrentOp::kLstm ? 3 : 2;
  if (!node.has_input(kInputX) || !node.has_input(kInputW) || !node.has_input(kInputR)) {
    return node.error(StatusCode::kInvalidModel, "inputs X, W and R are required");
  }
  if (node.input_count() > max_inputs || node.output_count() > max_outputs) {
    return node.error(StatusCode::kInvalidModel, "expected at most ", max_inputs, " inputs and ",
                      max_outputs, " outputs, got ", node.input_count(), " and ",
                      node.output_count());
  }
  return Status::ok();
}

// Every float tensor shares X's dtype (float32 or float64); sequence_lens is int32.
Status check_dtypes(const NodeContext& node) {
  const DType dtype = node.input(kInputX).dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    return node.error(StatusCode::kUnsupported, "input '", node.input(kInputX).name, "': dtype ",
                      dtype_name(dtype), " is not supported by the CPU kernel (float32, float64)");
  }
  for (size_t i = 0; i < node.input_count(); ++i) {
    if (!node.has_input(i)) continue;
    const DType want = i == kInputSequenceLens ? DType::kInt32 : dtype;
    if (node.input(i).dtype != want) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " '", node.input(i).name,
                        "': expected ", dtype_name(want), ", got ",
                        dtype_name(node.input(i).dtype));
    }
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    if (node.has_output(i) && node.output(i).dtype != dtype) {
      return node.error(StatusCode::kInvalidModel, "output ", i, " '", node.output(i).name,
                        "': expected ", dtype_name(dtype), " like X, got ",
                        dtype_name(node.output(i).dtype));
    }
  }
  return Status::ok();
}

Status expect_shape(const NodeContext& node, bool is_input, size_t index, const Shape& expected,
                    const std::string& dims) {
  if (is_input ? !node.has_input(index) : !node.has_output(index)) return Status::ok();
  const Value& value = is_input ? node.input(index) : node.output(index);
  if (value.shape == expected) return Status::ok();
  return node.error(StatusCode::kInvalidModel, is_input ? "input '" : "output '", value.name,
                    "': expected shape ", expected.to_string(), " (", dims, "), got ",
                    value.shape.to_string());
}

// X fixes seq_length, batch and input_size; R fixes hidden_size.
Status read_dims(const NodeContext& node, RecurrentPlan& plan) {
  const Shape& x = node.input(kInputX).shape;
  if (x.rank() != 3) {
    return node.error(
        StatusCode::kInvalidModel, "input '", node.input(kInputX).name, "': expected rank 3 (",
        plan.batch_first ? "[batch, seq_length, input_size]" : "[seq_length, batch, input_size]",
        "), got ", x.to_string());
  }
  plan.seq_length = plan.batch_first ? x[1] : x[0];
  plan.batch = plan.batch_first ? x[0] : x[1];
  plan.input_size = x[2];
  const Shape& r = node.input(kInputR).shape;
  if (r.rank() != 3) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(kInputR).name,
                      "': expected rank 3 ([num_directions, gates*hidden_size, hidden_size]), got ",
                      r.to_string());
  }
  plan.hidden = r[2];
  const int64_t hidden_attribute = node.node().attributes.get_int("hidden_size", plan.hidden);
  if (hidden_attribute != plan.hidden) {
    return node.error(StatusCode::kInvalidModel, "attribute hidden_size=", hidden_attribute,
                      " but input '", node.input(kInputR).name, "' ", r.to_string(),
                      " has hidden_size ", plan.hidden);
  }
  // W, R and B dims (up to 2*gates*hidden) are computed below: they must fit int64.
  int64_t bias_width = 0;
  if (__builtin_mul_overflow(plan.gates * 2, plan.hidden, &bias_width)) {
    return node.error(StatusCode::kOutOfRange, "hidden_size ", plan.hidden, " overflows int64");
  }
  return Status::ok();
}

Status check_shapes(const NodeContext& node, const RecurrentPlan& plan) {
  const int64_t d = plan.directions;
  const int64_t g = plan.gates;
  const int64_t h = plan.hidden;
  const std::string gh = str_cat(g, "*hidden_size=", g * h);
  const std::string nd = str_cat("num_directions=", d);
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputW, Shape{d, g * h, plan.input_size},
                                       str_cat(nd, ", ", gh, ", input_size=", plan.input_size)));
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputR, Shape{d, g * h, h},
                                       str_cat(nd, ", ", gh, ", hidden_size=", h)));
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputB, Shape{d, 2 * g * h},
                                       str_cat(nd, ", 2*", gh, " (Wb then Rb)")));
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputSequenceLens, Shape{plan.batch},
                                       str_cat("batch_size=", plan.batch)));
  const Shape state = plan.batch_first ? Shape{plan.batch, d, h} : Shape{d, plan.batch, h};
  const std::string state_dims =
      plan.batch_first
          ? str_cat("layout=1: batch_size=", plan.batch, ", ", nd, ", hidden_size=", h)
          : str_cat("layout=0: ", nd, ", batch_size=", plan.batch, ", hidden_size=", h);
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputInitialH, state, state_dims));
  if (plan.op == RecurrentOp::kLstm) {
    ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputInitialC, state, state_dims));
    ONEPOOL_RETURN_IF_ERROR(
        expect_shape(node, true, kInputP, Shape{d, 3 * h}, str_cat(nd, ", 3*hidden_size=", 3 * h)));
    ONEPOOL_RETURN_IF_ERROR(expect_shape(node, false, kOutputYC, state, state_dims));
  }
  const Shape y = plan.batch_first ? Shape{plan.batch, plan.seq_length, d, h}
                                   : Shape{plan.seq_length, d, plan.batch, h};
  ONEPOOL_RETURN_IF_ERROR(expect_shape(
      node, false, kOutputY, y,
      str_cat(plan.batch_first ? "layout=1: [batch, seq_length, num_directions, hidden_size]"
                               : "layout=0: [seq_length, num_directions, batch, hidden_size]")));
  return expect_shape(node, false, kOutputYH, state, state_dims);
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
  // Step 1. Inputs, outputs and dtypes.
  RecurrentPlan plan;
  plan.op = op;
  plan.gates = gate_count(op);
  plan.node_label = describe_node(node.node());
  ONEPOOL_RETURN_IF_ERROR(check_arity(node, op));
  ONEPOOL_RETURN_IF_ERROR(check_dtypes(node));
  // Step 2. Attributes, then dims from X and R, then every other shape against them.
  ONEPOOL_RETURN_IF_ERROR(read_attributes(node, plan));
  ONEPOOL_RETURN_IF_ERROR(read_dims(node, plan));
  ONEPOOL_RETURN_IF_ERROR(check_shapes(node, plan));
  // Step 3. Workspace slices, overflow-checked.
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
