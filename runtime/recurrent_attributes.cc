// The node checks and attributes shared by the LSTM, GRU and RNN kernels of every backend (see
// recurrent_attributes.h). Moved from the CPU kernels unchanged: same checks, same messages.
#include "runtime/recurrent_attributes.h"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "planner/core/graph.h"

namespace onepool::recurrent {
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
Status read_activations(const NodeContext& node, RecurrentSpec& spec) {
  const AttributeMap& attributes = node.node().attributes;
  std::vector<std::string> names = default_activations(spec.op);
  spec.activations_per_direction = static_cast<int64_t>(names.size());
  if (const Attribute* given = attributes.find("activations")) {
    if (given->kind != Attribute::Kind::kStrings) {
      return node.error(StatusCode::kInvalidModel, "attribute 'activations': expected a list of ",
                        "strings");
    }
    names = given->strings;
  } else if (spec.directions == 2) {
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  const size_t per_direction = static_cast<size_t>(spec.activations_per_direction);
  const size_t expected = per_direction * static_cast<size_t>(spec.directions);
  if (names.size() == per_direction && spec.directions == 2) {
    // One set given for both directions: the reverse direction reuses it.
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  } else if (names.size() == 2 * per_direction && spec.directions == 1) {
    names.resize(per_direction);  // a both-directions list on a one-direction node
  } else if (names.size() != expected) {
    return node.error(StatusCode::kInvalidModel, "attribute 'activations': expected ", expected,
                      " functions (", per_direction, " per direction, ", spec.directions,
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
    spec.activations.push_back(activation);
  }
  return Status::ok();
}

Status read_attributes(const NodeContext& node, RecurrentSpec& spec) {
  const AttributeMap& attributes = node.node().attributes;
  const std::string direction = attributes.get_string("direction", "forward");
  if (direction == "bidirectional") {
    spec.directions = 2;
  } else if (direction == "reverse") {
    spec.reverse = true;
  } else if (direction != "forward") {
    return node.error(StatusCode::kInvalidModel, "attribute 'direction': expected forward, ",
                      "reverse or bidirectional, got '", direction, "'");
  }
  const int64_t layout = attributes.get_int("layout", 0);
  if (layout != 0 && layout != 1) {
    return node.error(StatusCode::kInvalidModel, "attribute 'layout': expected 0 or 1, got ",
                      layout);
  }
  spec.batch_first = layout == 1;
  if (attributes.has("clip")) {
    spec.has_clip = true;
    spec.clip = attributes.get_float("clip", 0.0f);
    if (!(spec.clip >= 0.0f)) {
      return node.error(StatusCode::kInvalidModel, "attribute 'clip': expected a threshold >= 0, ",
                        "got ", spec.clip);
    }
  }
  if (spec.op == RecurrentOp::kGru) {
    spec.linear_before_reset = attributes.get_int("linear_before_reset", 0) != 0;
  }
  if (spec.op == RecurrentOp::kLstm) {
    spec.input_forget = attributes.get_int("input_forget", 0) != 0;
  }
  return read_activations(node, spec);
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

// Every float tensor shares X's dtype (which dtypes X may have is the backend's to say);
// sequence_lens is int32.
Status check_dtypes(const NodeContext& node) {
  const DType dtype = node.input(kInputX).dtype;
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
Status read_dims(const NodeContext& node, RecurrentSpec& spec) {
  const Shape& x = node.input(kInputX).shape;
  if (x.rank() != 3) {
    return node.error(
        StatusCode::kInvalidModel, "input '", node.input(kInputX).name, "': expected rank 3 (",
        spec.batch_first ? "[batch, seq_length, input_size]" : "[seq_length, batch, input_size]",
        "), got ", x.to_string());
  }
  spec.seq_length = spec.batch_first ? x[1] : x[0];
  spec.batch = spec.batch_first ? x[0] : x[1];
  spec.input_size = x[2];
  const Shape& r = node.input(kInputR).shape;
  if (r.rank() != 3) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(kInputR).name,
                      "': expected rank 3 ([num_directions, gates*hidden_size, hidden_size]), got ",
                      r.to_string());
  }
  spec.hidden = r[2];
  const int64_t hidden_attribute = node.node().attributes.get_int("hidden_size", spec.hidden);
  if (hidden_attribute != spec.hidden) {
    return node.error(StatusCode::kInvalidModel, "attribute hidden_size=", hidden_attribute,
                      " but input '", node.input(kInputR).name, "' ", r.to_string(),
                      " has hidden_size ", spec.hidden);
  }
  // W, R and B dims (up to 2*gates*hidden) are computed below: they must fit int64.
  int64_t bias_width = 0;
  if (__builtin_mul_overflow(spec.gates * 2, spec.hidden, &bias_width)) {
    return node.error(StatusCode::kOutOfRange, "hidden_size ", spec.hidden, " overflows int64");
  }
  return Status::ok();
}

Status check_shapes(const NodeContext& node, const RecurrentSpec& spec) {
  const int64_t d = spec.directions;
  const int64_t g = spec.gates;
  const int64_t h = spec.hidden;
  const std::string gh = str_cat(g, "*hidden_size=", g * h);
  const std::string nd = str_cat("num_directions=", d);
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputW, Shape{d, g * h, spec.input_size},
                                       str_cat(nd, ", ", gh, ", input_size=", spec.input_size)));
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputR, Shape{d, g * h, h},
                                       str_cat(nd, ", ", gh, ", hidden_size=", h)));
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputB, Shape{d, 2 * g * h},
                                       str_cat(nd, ", 2*", gh, " (Wb then Rb)")));
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputSequenceLens, Shape{spec.batch},
                                       str_cat("batch_size=", spec.batch)));
  const Shape state = spec.batch_first ? Shape{spec.batch, d, h} : Shape{d, spec.batch, h};
  const std::string state_dims =
      spec.batch_first
          ? str_cat("layout=1: batch_size=", spec.batch, ", ", nd, ", hidden_size=", h)
          : str_cat("layout=0: ", nd, ", batch_size=", spec.batch, ", hidden_size=", h);
  ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputInitialH, state, state_dims));
  if (spec.op == RecurrentOp::kLstm) {
    ONEPOOL_RETURN_IF_ERROR(expect_shape(node, true, kInputInitialC, state, state_dims));
    ONEPOOL_RETURN_IF_ERROR(
        expect_shape(node, true, kInputP, Shape{d, 3 * h}, str_cat(nd, ", 3*hidden_size=", 3 * h)));
    ONEPOOL_RETURN_IF_ERROR(expect_shape(node, false, kOutputYC, state, state_dims));
  }
  const Shape y = spec.batch_first ? Shape{spec.batch, spec.seq_length, d, h}
                                   : Shape{spec.seq_length, d, spec.batch, h};
  ONEPOOL_RETURN_IF_ERROR(expect_shape(
      node, false, kOutputY, y,
      str_cat(spec.batch_first ? "layout=1: [batch, seq_length, num_directions, hidden_size]"
                               : "layout=0: [seq_length, num_directions, batch, hidden_size]")));
  return expect_shape(node, false, kOutputYH, state, state_dims);
}

// Appends a slice of `count` elements padded to 64 bytes; false when the sizes overflow.

}  // namespace

Status check_recurrent_arity(const NodeContext& node, RecurrentOp op) {
  return check_arity(node, op);
}

Expected<RecurrentSpec> read_recurrent_spec(const NodeContext& node, RecurrentOp op) {
  // Step 1. Inputs, outputs and dtypes.
  RecurrentSpec spec;
  spec.op = op;
  spec.gates = gate_count(op);
  spec.node_label = describe_node(node.node());
  ONEPOOL_RETURN_IF_ERROR(check_arity(node, op));
  ONEPOOL_RETURN_IF_ERROR(check_dtypes(node));
  // Step 2. Attributes, then dims from X and R, then every other shape against them.
  ONEPOOL_RETURN_IF_ERROR(read_attributes(node, spec));
  ONEPOOL_RETURN_IF_ERROR(read_dims(node, spec));
  ONEPOOL_RETURN_IF_ERROR(check_shapes(node, spec));
  return spec;
}

}  // namespace onepool::recurrent
