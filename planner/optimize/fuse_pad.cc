// Pass: a zero-padding Pad whose only reader is a Conv (as its input X) becomes part of the
// Conv's pads. Exporters from frameworks with asymmetric "same" padding (TensorFlow's
// MobileNets: M-LSD, BlazeFace) write Pad -> Conv pairs; the Pad copies the whole activation,
// which the Conv then reads again.
//
// Fused only when exact: mode "constant" with value 0 (or none), constant non-negative pads on
// the spatial axes only (none on N and C), no `axes` input, and a Conv with explicit pads
// (auto_pad NOTSET). A Conv pads with zeros, so the result is the same convolution.
#include <vector>

#include "planner/optimize/graph_edit.h"
#include "planner/optimize/passes.h"

namespace onepool::graph_opt {

namespace {

// The Pad's pads (begins then ends, one per axis of a rank-`rank` input), or empty when they
// are not constant.
std::vector<int64_t> constant_pads(const Graph& graph, const Node& pad, int rank) {
  if (graph.opset < 11) return pad.attributes.get_ints("pads");
  const HostTensor* pads = weight_of(graph, pad.input(1));
  if (pads == nullptr || pads->element_count() != 2 * rank) return {};
  std::vector<int64_t> values;
  for (int64_t i = 0; i < pads->element_count(); ++i) values.push_back(pads->int_at(i));
  return values;
}

// True when the Pad pads with zeros: no value, or a constant 0.
bool pads_with_zero(const Graph& graph, const Node& pad) {
  if (pad.attributes.get_string("mode", "constant") != "constant") return false;
  if (graph.opset < 11) return pad.attributes.get_float("value", 0.0f) == 0.0f;
  const ValueId value = pad.input(2);
  if (value == kNoValue) return true;
  const HostTensor* constant = weight_of(graph, value);
  return constant != nullptr && constant->element_count() == 1 && constant->float_at(0) == 0.0;
}

// The Conv's pads once the Pad's spatial pads are added, or empty when the two cannot merge.
std::vector<int64_t> merged_pads(const Node& conv, const std::vector<int64_t>& pad_pads, int rank) {
  const int spatial = rank - 2;
  if (conv.attributes.get_string("auto_pad", "NOTSET") != "NOTSET") return {};
  std::vector<int64_t> pads =
      conv.attributes.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (static_cast<int>(pads.size()) != 2 * spatial) return {};
  for (int axis = 0; axis < rank; ++axis) {
    const int64_t begin = pad_pads[static_cast<size_t>(axis)];
    const int64_t end = pad_pads[static_cast<size_t>(rank + axis)];
    if (begin < 0 || end < 0) return {};
    if (axis < 2) {
      if (begin != 0 || end != 0) return {};
      continue;
    }
    pads[static_cast<size_t>(axis - 2)] += begin;
    pads[static_cast<size_t>(spatial + axis - 2)] += end;
  }
  return pads;
}

bool fuse_one(Graph& graph, NodeId pad_id) {
  const Node& pad = graph.nodes[static_cast<size_t>(pad_id)];
  if (!is_op(pad, "Pad") || pad.outputs.size() != 1 || pad.inputs.empty()) return false;
  if (pad.input(3) != kNoValue || !pads_with_zero(graph, pad)) return false;
  const ValueId padded = pad.outputs[0];
  const Value& input = value_at(graph, pad.inputs[0]);
  const int rank = input.shape.rank();
  const std::vector<NodeId>& readers = value_at(graph, padded).consumers;
  if (rank < 3 || readers.size() != 1) return false;
  const NodeId conv_id = readers[0];
  if (!only_feeds(graph, padded, conv_id)) return false;
  Node& conv = graph.nodes[static_cast<size_t>(conv_id)];
  if (!is_op(conv, "Conv") || conv.inputs.empty() || conv.inputs[0] != padded) return false;
  const std::vector<int64_t> pad_pads = constant_pads(graph, pad, rank);
  if (static_cast<int>(pad_pads.size()) != 2 * rank) return false;
  const std::vector<int64_t> pads = merged_pads(conv, pad_pads, rank);
  if (pads.empty()) return false;
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInts;
  attribute.ints = pads;
  conv.attributes.set("pads", attribute);
  conv.inputs[0] = pad.inputs[0];
  remove_node(graph, pad_id);
  graph.rebuild_edges();
  return true;
}

}  // namespace

Status fuse_pads(Graph& graph, OptimizeReport& report) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (fuse_one(graph, static_cast<NodeId>(n))) ++report.fused_pads;
  }
  erase_removed_nodes(graph);
  return Status::ok();
}

}  // namespace onepool::graph_opt
