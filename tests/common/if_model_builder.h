// ONNX protos with If nodes for tests: a model, typed inputs and outputs, nodes, initializers,
// branches, and a CPU run of an imported Graph with one float input.
#pragma once

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/cpu_folding.h"
#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/import/onnx_import.h"

namespace onepool::if_models {

using Names = std::vector<std::string>;

inline onnx::ModelProto new_model() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  model.mutable_graph()->set_name("inline_if");
  return model;
}

inline void set_type(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
                     const std::vector<int64_t>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (int64_t dim : dims) shape->add_dim()->set_dim_value(dim);
}

inline void add_input(onnx::GraphProto* graph, const std::string& name,
                      const std::vector<int64_t>& dims,
                      int32_t elem_type = onnx::TensorProto::FLOAT) {
  set_type(graph->add_input(), name, elem_type, dims);
}

inline void add_output(onnx::GraphProto* graph, const std::string& name,
                       const std::vector<int64_t>& dims) {
  set_type(graph->add_output(), name, onnx::TensorProto::FLOAT, dims);
}

inline onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op,
                                 const Names& inputs, const Names& outputs,
                                 const std::string& name = std::string()) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  if (!name.empty()) node->set_name(name);
  for (const auto& input : inputs) node->add_input(input);
  for (const auto& output : outputs) node->add_output(output);
  return node;
}

inline onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<float>& values) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor.add_dims(dim);
  for (float value : values) tensor.add_float_data(value);
  return tensor;
}

inline void add_float_initializer(onnx::GraphProto* graph, const std::string& name,
                                  const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
  *graph->add_initializer() = float_tensor(name, dims, values);
}

// An int64 initializer: a vector of `values`, or a scalar (one value).
inline void add_int64s_initializer(onnx::GraphProto* graph, const std::string& name,
                                   const std::vector<int64_t>& values, bool scalar = false) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values) tensor->add_int64_data(value);
}

// A bool initializer (int32_data holds bools in ONNX).
inline void add_bool_initializer(onnx::GraphProto* graph, const std::string& name,
                                 const std::vector<int64_t>& dims,
                                 const std::vector<int32_t>& values) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::BOOL);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (int32_t value : values) tensor->add_int32_data(value);
}

// An If node reading `condition`, with the two branches as its attributes.
inline onnx::NodeProto* add_if(onnx::GraphProto* graph, const std::string& name,
                               const std::string& condition, const Names& outputs,
                               const onnx::GraphProto& then_branch,
                               const onnx::GraphProto& else_branch) {
  auto* node = add_node(graph, "If", {condition}, outputs, name);
  auto* then_attribute = node->add_attribute();
  then_attribute->set_name(std::string("then_branch"));
  then_attribute->set_type(onnx::AttributeProto::GRAPH);
  *then_attribute->mutable_g() = then_branch;
  auto* else_attribute = node->add_attribute();
  else_attribute->set_name(std::string("else_branch"));
  else_attribute->set_type(onnx::AttributeProto::GRAPH);
  *else_attribute->mutable_g() = else_branch;
  return node;
}

inline onnx::GraphProto branch(const std::string& name) {
  onnx::GraphProto graph;
  graph.set_name(name);
  return graph;
}

inline Expected<Graph> import_model(const onnx::ModelProto& model,
                                    const ImportOptions& options = {}) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return import_onnx_bytes(bytes, "", testing::with_cpu_folding(options));
}

inline Names op_types(const Graph& graph) {
  Names ops;
  for (const auto& node : graph.nodes) ops.push_back(node.op_type);
  return ops;
}

inline bool has_op(const Graph& graph, const std::string& op) {
  const Names ops = op_types(graph);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// Runs `graph` on CPU with one float input and returns each float output (shapes as imported).
inline std::vector<std::vector<float>> run_graph(Graph graph, const std::vector<float>& input) {
  std::vector<Shape> output_shapes;
  for (ValueId id : graph.outputs) output_shapes.push_back(graph.values[id].shape);
  const Shape input_shape = graph.values[graph.inputs.at(0)].shape;
  auto model = Model::from_graph(std::move(graph), LoadOptions{});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  auto session = Session::create(*model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<std::vector<float>> outputs;
  std::vector<TensorView> views;
  for (const Shape& shape : output_shapes) {
    outputs.emplace_back(static_cast<size_t>(shape.element_count()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    views.push_back(TensorView{outputs[i].data(), DType::kFloat32, output_shapes[i], Device{}});
  }
  TensorView in{const_cast<float*>(input.data()), DType::kFloat32, input_shape, Device{}};
  const Status status = (*session)->run({&in, 1}, views);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return outputs;
}

inline bool contains(const Status& status, const std::string& text) {
  const bool found = status.message().find(text) != std::string::npos;
  if (!found) MESSAGE("looking for '", text, "' in: ", status.to_string());
  return found;
}

// y = If(cond) then Relu(Neg(x)) else Add(Abs(x), x); x float[6], cond a bool initializer.
inline onnx::ModelProto two_chain_model(bool condition) {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {6});
  add_output(graph, "y", {6});
  add_bool_initializer(graph, "cond", {}, {condition ? 1 : 0});
  onnx::GraphProto then_branch = branch("then");
  add_node(&then_branch, "Neg", {"x"}, {"negated"});
  add_node(&then_branch, "Relu", {"negated"}, {"then_out"});
  add_output(&then_branch, "then_out", {6});
  onnx::GraphProto else_branch = branch("else");
  add_node(&else_branch, "Abs", {"x"}, {"magnitude"});
  add_node(&else_branch, "Add", {"magnitude", "x"}, {"else_out"});
  add_output(&else_branch, "else_out", {6});
  add_if(graph, "choose", "cond", {"y"}, then_branch, else_branch);
  return model;
}

}  // namespace onepool::if_models
