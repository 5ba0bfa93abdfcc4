// Pass: fold inference BatchNormalization into the preceding Conv / ConvTranspose.
//
// BN computes y = (x - mean) * scale / sqrt(var + eps) + bias per channel c, i.e.
// y = x * factor[c] + (bias[c] - mean[c] * factor[c]) with factor[c] = scale[c] / sqrt(var[c] +
// eps). Folding gives W'[c] = W[c] * factor[c] and B'[c] = (B[c] - mean[c]) * factor[c] + bias[c],
// computed in double and stored as new float32 weights (the old ones may be shared).
// For ConvTranspose the output channel of W[ci, j, ...] is (ci / (C_in / group)) * (C_out / group)
// + j. A BN whose variance makes var + eps <= 0 is left alone.
#include <cmath>
#include <vector>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

struct ChannelAffine {  // y = x * factor[c] + shift[c]
  std::vector<double> factor;
  std::vector<double> shift;
};

bool is_conv(const Node& node) { return is_op(node, "Conv") || is_op(node, "ConvTranspose"); }

bool extra_outputs_unused(const Graph& graph, const Node& node) {
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    const Value& value = value_at(graph, node.outputs[i]);
    if (!value.consumers.empty() || value.is_graph_output) return false;
  }
  return true;
}

bool is_float32_weight(const Graph& graph, ValueId id) {
  const HostTensor* tensor = weight_of(graph, id);
  return tensor != nullptr && tensor->dtype == DType::kFloat32;
}

// The Conv feeding `bn` when the pair can be folded, else nullptr.
Node* foldable_conv(Graph& graph, NodeId bn_id) {
  const Node& bn = graph.nodes[static_cast<size_t>(bn_id)];
  if (!is_op(bn, "BatchNormalization") || bn.inputs.size() < 5 || bn.outputs.empty())
    return nullptr;
  if (bn.outputs[0] == kNoValue || bn.attributes.get_int("training_mode", 0) != 0) return nullptr;
  if (bn.attributes.get_int("spatial", 1) == 0 || !extra_outputs_unused(graph, bn)) return nullptr;
  for (size_t i = 1; i < 5; ++i) {
    if (weight_of(graph, bn.inputs[i]) == nullptr) return nullptr;
  }
  const ValueId x = bn.inputs[0];
  if (!only_feeds(graph, x, bn_id) || value_at(graph, x).dtype != DType::kFloat32) return nullptr;
  Node* conv = producer_of(graph, x);
  if (conv == nullptr || !is_conv(*conv) || has_fused_activation(*conv)) return nullptr;
  if (conv->outputs.size() != 1 || !is_float32_weight(graph, conv->input(1))) return nullptr;
  if (conv->input(2) != kNoValue && !is_float32_weight(graph, conv->input(2))) return nullptr;
  return conv;
}

// Output channels of the conv's weight, checked against its output's channel dim.
Expected<int64_t> conv_output_channels(const Graph& graph, const Node& conv) {
  const HostTensor& w = *weight_of(graph, conv.input(1));
  if (w.shape.rank() < 2) {
    return make_status(StatusCode::kInvalidModel, describe_node(conv), ": weight '",
                       value_at(graph, conv.input(1)).name, "' expected rank >= 2, got ",
                       w.shape.to_string());
  }
  int64_t channels = w.shape[0];
  if (is_op(conv, "ConvTranspose")) {
    const int64_t group = conv.attributes.get_int("group", 1);
    if (group <= 0 || w.shape[0] % group != 0 ||
        __builtin_mul_overflow(w.shape[1], group, &channels)) {
      return make_status(StatusCode::kInvalidModel, describe_node(conv), ": group ", group,
                         " does not divide the ", w.shape[0], " input channels of weight ",
                         w.shape.to_string());
    }
  }
  const Value& out = value_at(graph, conv.outputs[0]);
  if (out.shape.rank() < 2 || out.shape[1] != channels) {
    return make_status(StatusCode::kInvalidModel, describe_node(conv), ": output '", out.name,
                       "' expected ", channels, " channels (from weight ", w.shape.to_string(),
                       "), got shape ", out.shape.to_string());
  }
  return channels;
}

// Reads input `index` of `node` (a weight) as `channels` doubles.
Expected<std::vector<double>> read_channels(const Graph& graph, const Node& node, size_t index,
                                            int64_t channels) {
  const HostTensor& tensor = *weight_of(graph, node.inputs[index]);
  if (tensor.element_count() != channels) {
    return make_status(StatusCode::kInvalidModel, describe_node(node), ": input ", index, " '",
                       value_at(graph, node.inputs[index]).name, "' expected ", channels,
                       " elements (one per channel), got shape ", tensor.shape.to_string());
  }
  std::vector<double> values(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) values[static_cast<size_t>(c)] = tensor.float_at(c);
  return values;
}

// The BN as a per-channel affine map; an empty result when var + eps <= 0 somewhere.
Expected<ChannelAffine> batchnorm_affine(const Graph& graph, const Node& bn, int64_t channels) {
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<double> scale, read_channels(graph, bn, 1, channels));
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<double> bias, read_channels(graph, bn, 2, channels));
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<double> mean, read_channels(graph, bn, 3, channels));
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<double> var, read_channels(graph, bn, 4, channels));
  const double epsilon = bn.attributes.get_float("epsilon", 1e-5f);
  ChannelAffine affine;
  for (size_t c = 0; c < scale.size(); ++c) {
    const double denominator = var[c] + epsilon;
    if (!(denominator > 0.0) || !std::isfinite(denominator)) return ChannelAffine{};
    affine.factor.push_back(scale[c] / std::sqrt(denominator));
    affine.shift.push_back(bias[c] - mean[c] * affine.factor.back());
  }
  return affine;
}

// W scaled per output channel (see the file comment for the ConvTranspose layout).
std::vector<double> scale_weight(const HostTensor& w, const Node& conv, const ChannelAffine& bn) {
  const int64_t count = w.element_count();
  std::vector<double> scaled(static_cast<size_t>(count));
  const bool transpose = is_op(conv, "ConvTranspose");
  const int64_t group = conv.attributes.get_int("group", 1);
  const int64_t out_per_group = w.shape[1];
  const int64_t in_per_group = w.shape[0] / (transpose ? group : 1);
  const int64_t inner = count == 0 ? 1 : count / (w.shape[0] * out_per_group);
  const int64_t per_channel = count == 0 ? 1 : count / static_cast<int64_t>(bn.factor.size());
  for (int64_t i = 0; i < count; ++i) {
    int64_t channel = i / per_channel;
    if (transpose) {
      const int64_t ci = i / (out_per_group * inner);
      channel = (ci / in_per_group) * out_per_group + (i / inner) % out_per_group;
    }
    scaled[static_cast<size_t>(i)] = w.float_at(i) * bn.factor[static_cast<size_t>(channel)];
  }
  return scaled;
}

// Folds BN node `bn_id` into its Conv when possible; returns whether it did.
Expected<bool> fold_one(Graph& graph, NodeId bn_id) {
  Node* conv = foldable_conv(graph, bn_id);
  if (conv == nullptr) return false;
  const Node& bn = graph.nodes[static_cast<size_t>(bn_id)];
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t channels, conv_output_channels(graph, *conv));
  const Value& x = value_at(graph, bn.inputs[0]);
  const Value& y = value_at(graph, bn.outputs[0]);
  if (!(x.shape == y.shape) || y.dtype != x.dtype) {
    return make_status(StatusCode::kInvalidModel, describe_node(bn), ": output '", y.name,
                       "' expected shape ", x.shape.to_string(), " (input '", x.name, "'), got ",
                       y.shape.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(const ChannelAffine affine, batchnorm_affine(graph, bn, channels));
  if (affine.factor.empty() && channels > 0) return false;

  std::vector<double> bias(static_cast<size_t>(channels), 0.0);
  if (conv->input(2) != kNoValue) {
    ONEPOOL_ASSIGN_OR_RETURN(bias, read_channels(graph, *conv, 2, channels));
  }
  for (size_t c = 0; c < bias.size(); ++c) bias[c] = bias[c] * affine.factor[c] + affine.shift[c];
  const HostTensor& w = *weight_of(graph, conv->input(1));
  HostTensor new_w = make_float_weight(w.shape, scale_weight(w, *conv, affine));
  const ValueId new_b_id =
      add_weight(graph, str_cat(conv->name, "_B_bnfold"), make_float_weight({channels}, bias));
  const ValueId new_w_id = add_weight(graph, str_cat(conv->name, "_W_bnfold"), std::move(new_w));

  if (conv->inputs.size() < 3) conv->inputs.resize(3, kNoValue);
  conv->inputs[1] = new_w_id;
  conv->inputs[2] = new_b_id;
  conv->outputs[0] = graph.nodes[static_cast<size_t>(bn_id)].outputs[0];
  remove_node(graph, bn_id);
  graph.rebuild_edges();
  return true;
}

}  // namespace

Status fold_batchnorms(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    ONEPOOL_ASSIGN_OR_RETURN(const bool folded, fold_one(graph, static_cast<NodeId>(n)));
    if (folded) ++report.folded_batchnorms;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
