// `inspect`: the model's declared interface, read straight from the ModelProto.
#include "planner/import/model_info.h"

#include <unordered_set>
#include <utility>

#include "planner/import/import_bind.h"
#include "planner/import/import_model_file.h"
#include "planner/import/import_tensor.h"
#include "planner/import/shape_hints.h"

namespace onepool {

namespace {

ModelIoInfo io_info(const onnx::ValueInfoProto& info) {
  ModelIoInfo io;
  io.name = info.name();
  io.dtype = static_cast<DType>(info.type().tensor_type().elem_type());
  io.dims = declared_dims(info);
  return io;
}

// Bytes an initializer's shape and dtype need (0 when unsupported or overflowing).
int64_t initializer_bytes(const onnx::TensorProto& tensor) {
  const int64_t count = proto_element_count(tensor);
  const auto element = static_cast<int64_t>(dtype_size(dtype_from_onnx(tensor.data_type())));
  if (count < 0 || (element != 0 && count > INT64_MAX / element)) return 0;
  return count * element;
}

void collect_symbolic_dims(ModelInfo* info) {
  std::unordered_set<std::string> seen;
  for (const auto& input : info->inputs) {
    for (const std::string& dim : input.dims) {
      const bool symbolic = dim != "?" && dim.find_first_not_of("0123456789") != std::string::npos;
      if (symbolic && seen.insert(dim).second) info->symbolic_dims.push_back(dim);
    }
  }
}

}  // namespace

Expected<ModelInfo> inspect_onnx_file(const std::string& path) {
  ONEPOOL_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  onnx::ModelProto model;
  ONEPOOL_RETURN_IF_ERROR(parse_model_bytes(bytes, str_cat("'", path, "'"), &model));
  const onnx::GraphProto& graph = model.graph();
  ModelInfo info;
  info.path = path;
  info.graph_name = graph.name();
  info.producer = model.producer_name();
  if (!model.producer_version().empty()) info.producer += " " + model.producer_version();
  info.ir_version = model.ir_version();
  for (const auto& opset : model.opset_import()) {
    info.opsets.emplace_back(opset.domain() == "ai.onnx" ? "" : opset.domain(), opset.version());
  }
  const auto inputs = caller_inputs(graph);
  for (const auto* input : inputs) info.inputs.push_back(io_info(*input));
  for (const auto& output : graph.output()) info.outputs.push_back(io_info(output));
  for (const auto& node : graph.node()) {
    ++info.op_histogram[node.op_type()];
    if (node.op_type() != "Constant") continue;
    ++info.constant_node_count;
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_t()) info.constant_node_bytes += initializer_bytes(attribute.t());
    }
  }
  info.node_count = graph.node_size();
  info.initializer_count = graph.initializer_size();
  for (const auto& initializer : graph.initializer()) {
    info.initializer_bytes += initializer_bytes(initializer);
  }
  collect_symbolic_dims(&info);
  ShapeSuggestion suggestion = suggest_input_shapes(inputs, path);
  info.suggested_shapes = std::move(suggestion.shapes);
  info.suggested_shapes_source = std::move(suggestion.source);
  return info;
}

}  // namespace onepool
