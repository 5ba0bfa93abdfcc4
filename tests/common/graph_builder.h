// Builds small Graphs by hand for tests: values, weights, nodes; finish() rebuilds the edges.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "planner/core/graph.h"

namespace onepool::testing {

inline Attribute float_attr(float value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kFloat;
  attribute.f = value;
  return attribute;
}

inline Attribute ints_attr(std::vector<int64_t> values) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kInts;
  attribute.ints = std::move(values);
  return attribute;
}

// Builds a Graph value by value and node by node; finish() rebuilds the edges.
class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset = 13) { graph_.opset = opset; }

  ValueId input(const std::string& name, Shape shape) {
    const ValueId id = value(name, shape);
    graph_.values[static_cast<size_t>(id)].kind = ValueKind::kGraphInput;
    graph_.inputs.push_back(id);
    return id;
  }
  ValueId input(const std::string& name, Shape shape, DType dtype) {
    const ValueId id = input(name, shape);
    graph_.values[static_cast<size_t>(id)].dtype = dtype;
    return id;
  }
  ValueId value(const std::string& name, Shape shape, DType dtype = DType::kFloat32) {
    Value value;
    value.name = name;
    value.dtype = dtype;
    value.shape = shape;
    return graph_.add_value(value);
  }
  ValueId weight(const std::string& name, Shape shape, const std::vector<float>& data) {
    return typed_weight(name, shape, DType::kFloat32, data.data(), data.size() * sizeof(float));
  }
  /// A float16 or bfloat16 weight of `bits` (one 16-bit pattern per element).
  ValueId half_weight(const std::string& name, Shape shape, DType dtype,
                      const std::vector<uint16_t>& bits) {
    return typed_weight(name, shape, dtype, bits.data(), bits.size() * sizeof(uint16_t));
  }
  ValueId int64_weight(const std::string& name, Shape shape, const std::vector<int64_t>& data) {
    return typed_weight(name, shape, DType::kInt64, data.data(), data.size() * sizeof(int64_t));
  }
  void output(ValueId id) {
    graph_.values[static_cast<size_t>(id)].is_graph_output = true;
    graph_.outputs.push_back(id);
  }
  Node& node(const std::string& op, std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
    Node node;
    node.name = op + "_" + std::to_string(graph_.nodes.size());
    node.op_type = op;
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    graph_.nodes.push_back(node);
    return graph_.nodes.back();
  }
  Graph finish() {
    graph_.rebuild_edges();
    return graph_;
  }

 private:
  ValueId typed_weight(const std::string& name, Shape shape, DType dtype, const void* data,
                       size_t bytes) {
    const ValueId id = value(name, shape);
    Value& value = graph_.values[static_cast<size_t>(id)];
    value.kind = ValueKind::kWeight;
    value.dtype = dtype;
    value.weight_index = static_cast<int32_t>(graph_.weights.size());
    HostTensor tensor;
    tensor.dtype = dtype;
    tensor.shape = shape;
    tensor.data.resize(bytes);
    std::memcpy(tensor.data.data(), data, bytes);
    graph_.weights.push_back(tensor);
    return id;
  }

  Graph graph_;
};

inline std::vector<float> weight_values(const Graph& graph, ValueId id) {
  const HostTensor& tensor = graph.weight(id);
  std::vector<float> values(tensor.data.size() / sizeof(float));
  std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

inline const Value& value_named(const Graph& graph, const std::string& name) {
  const ValueId id = graph.find_value(name);
  REQUIRE(id != kNoValue);
  return graph.values[static_cast<size_t>(id)];
}

inline std::string name_of(const Graph& graph, ValueId id) {
  return graph.values[static_cast<size_t>(id)].name;
}

}  // namespace onepool::testing
