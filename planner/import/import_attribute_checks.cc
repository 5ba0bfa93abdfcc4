// Window attribute validation for Conv, ConvTranspose, ConvInteger, QLinearConv, DeformConv and
// the pooling operators.
#include "planner/import/import_attribute_checks.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

namespace onepool {

namespace {

constexpr int64_t kMaxWindowValue = (int64_t{1} << 31) - 1;

bool has_window_attributes(std::string_view op) {
  static constexpr std::string_view kOps[] = {
      "Conv",    "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv",
      "MaxPool", "AveragePool",   "LpPool",      "MaxUnpool",   "MaxRoiPool"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (", node.op_type(), ")");
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// Every value of the ints attribute `name` (when present) lies in [low, kMaxWindowValue].
Status check_ints_range(const onnx::NodeProto& node, std::string_view name, int64_t low) {
  const onnx::AttributeProto* attribute = find_attribute(node, name);
  if (attribute == nullptr) return Status::ok();
  for (int i = 0; i < attribute->ints_size(); ++i) {
    const int64_t value = attribute->ints(i);
    if (value >= low && value <= kMaxWindowValue) continue;
    return make_status(StatusCode::kInvalidModel, node_label(node), ": attribute '", name, "'[", i,
                       "] is ", value, "; it must be in [", low, ", ", kMaxWindowValue, "]");
  }
  return Status::ok();
}

// pads holds a begin and an end per spatial axis: twice kernel_shape's length when both exist.
Status check_pads_count(const onnx::NodeProto& node) {
  const onnx::AttributeProto* pads = find_attribute(node, "pads");
  const onnx::AttributeProto* kernel = find_attribute(node, "kernel_shape");
  if (pads == nullptr || kernel == nullptr || pads->ints_size() == 2 * kernel->ints_size()) {
    return Status::ok();
  }
  return make_status(StatusCode::kInvalidModel, node_label(node), ": attribute 'pads' has ",
                     pads->ints_size(), " values; expected ", 2 * kernel->ints_size(),
                     " (a begin and an end for each of the ", kernel->ints_size(),
                     " axes of kernel_shape)");
}

// ConvTranspose: output_padding[i] < max(strides[i], dilations[i]) (the ONNX operator spec).
Status check_output_padding(const onnx::NodeProto& node) {
  const onnx::AttributeProto* output_padding = find_attribute(node, "output_padding");
  if (output_padding == nullptr) return Status::ok();
  const onnx::AttributeProto* strides = find_attribute(node, "strides");
  const onnx::AttributeProto* dilations = find_attribute(node, "dilations");
  for (int i = 0; i < output_padding->ints_size(); ++i) {
    const int64_t stride = strides != nullptr && i < strides->ints_size() ? strides->ints(i) : 1;
    const int64_t dilation =
        dilations != nullptr && i < dilations->ints_size() ? dilations->ints(i) : 1;
    const int64_t limit = std::max(stride, dilation);
    const int64_t value = output_padding->ints(i);
    if (value >= 0 && value < limit) continue;
    return make_status(StatusCode::kInvalidModel, node_label(node),
                       ": attribute "
                       "'output_padding'[",
                       i, "] is ", value, "; it must be in [0, ", limit, ") (below the stride ",
                       stride, " or the dilation ", dilation, ")");
  }
  return Status::ok();
}

Status check_group(const onnx::NodeProto& node) {
  const onnx::AttributeProto* group = find_attribute(node, "group");
  if (group == nullptr || group->i() >= 1) return Status::ok();
  return make_status(StatusCode::kInvalidModel, node_label(node), ": attribute 'group' is ",
                     group->i(), "; it must be at least 1");
}

// ONNX's shape inference reads 'axis' into an int: -2^63 became axis 0 and the model ran. No
// tensor OnePool accepts has more than Shape::kMaxRank (8) axes, so an axis outside [-8, 8]
// (Flatten's 'axis' may equal the rank) is out of range for any input; the kernels check the
// exact range against the input's rank.
Status check_axis_attributes(const onnx::NodeProto& node) {
  constexpr int64_t kAxisLimit = 8;
  if (!node.domain().empty() && node.domain() != "ai.onnx") return Status::ok();
  for (const auto& attribute : node.attribute()) {
    std::vector<int64_t> values;
    if (attribute.name() == "axis" && attribute.type() == onnx::AttributeProto::INT) {
      values.push_back(attribute.i());
    } else if (attribute.name() == "axes" && attribute.type() == onnx::AttributeProto::INTS) {
      values.assign(attribute.ints().begin(), attribute.ints().end());
    }
    for (int64_t value : values) {
      if (value >= -kAxisLimit && value <= kAxisLimit) continue;
      return make_status(StatusCode::kInvalidModel, node_label(node), ": attribute '",
                         attribute.name(), "' holds ", value, ", outside the axes of any tensor ([",
                         -kAxisLimit, ", ", kAxisLimit, "] for up to ", kAxisLimit, " dims)");
    }
  }
  return Status::ok();
}

Status check_node(const onnx::NodeProto& node) {
  ONEPOOL_RETURN_IF_ERROR(check_axis_attributes(node));
  if (!has_window_attributes(node.op_type())) return Status::ok();
  ONEPOOL_RETURN_IF_ERROR(check_ints_range(node, "strides", 1));
  ONEPOOL_RETURN_IF_ERROR(check_ints_range(node, "dilations", 1));
  ONEPOOL_RETURN_IF_ERROR(check_ints_range(node, "kernel_shape", 1));
  ONEPOOL_RETURN_IF_ERROR(check_ints_range(node, "pads", 0));
  ONEPOOL_RETURN_IF_ERROR(check_pads_count(node));
  ONEPOOL_RETURN_IF_ERROR(check_group(node));
  if (node.op_type() == "ConvTranspose") {
    ONEPOOL_RETURN_IF_ERROR(check_ints_range(node, "output_padding", 0));
    ONEPOOL_RETURN_IF_ERROR(check_output_padding(node));
  }
  return Status::ok();
}

}  // namespace

Status check_window_attributes(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    ONEPOOL_RETURN_IF_ERROR(check_node(node));
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) ONEPOOL_RETURN_IF_ERROR(check_window_attributes(attribute.g()));
      for (const auto& body : attribute.graphs()) {
        ONEPOOL_RETURN_IF_ERROR(check_window_attributes(body));
      }
    }
  }
  return Status::ok();
}

}  // namespace onepool
