// Shape inputs (planner/import/import_shape_inputs.h): which graph inputs a node needs the value
// of, binding their values at import (the graph then plans statically), and the errors for a
// missing value, a name that is not a shape input, and values that do not fit.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/cpu_folding.h"
#include "planner/import/import_shape_inputs.h"
#include "planner/import/onnx_import.h"

using onepool::testing::with_cpu_folding;

namespace onepool {
namespace {

onnx::ModelProto new_model(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(opset);
  model.mutable_graph()->set_name("shape_inputs");
  return model;
}

// dims: numbers are fixed dims, anything else a symbolic dim name.
void add_io(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
            int32_t elem_type, const std::vector<std::string>& dims) {
  auto* info = list->Add();
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const auto& dim : dims) {
    if (dim.find_first_not_of("0123456789") == std::string::npos) {
      shape->add_dim()->set_dim_value(std::stoll(dim));
    } else {
      shape->add_dim()->set_dim_param(dim);
    }
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(op + "_0");
  for (const auto& input : inputs) node->add_input(input);
  for (const auto& output : outputs) node->add_output(output);
  return node;
}

// data [3,2,2] float, axes [1] int64 (a graph input) → ReduceSum (keepdims) → reduced [3,1,2].
onnx::ModelProto reduce_sum_model() {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_io(graph->mutable_input(), "data", onnx::TensorProto::FLOAT, {"3", "2", "2"});
  add_io(graph->mutable_input(), "axes", onnx::TensorProto::INT64, {"1"});
  add_io(graph->mutable_output(), "reduced", onnx::TensorProto::FLOAT, {"d0", "d1", "d2"});
  add_node(graph, "ReduceSum", {std::string("data"), std::string("axes")},
           {std::string("reduced")});
  return model;
}

// x [2,3] float; limit is a scalar int64 input that reaches Range through a Cast; y [?] float
// is reshaped to Shape(x): Shape stops the walk, so y is not a shape input.
onnx::ModelProto indirect_model() {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_io(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2", "3"});
  add_io(graph->mutable_input(), "limit", onnx::TensorProto::INT32, {});
  add_io(graph->mutable_output(), "r", onnx::TensorProto::INT64, {"n"});
  add_io(graph->mutable_output(), "s", onnx::TensorProto::FLOAT, {"a", "b"});
  add_node(graph, "Cast", {std::string("limit")}, {std::string("limit64")})
      ->add_attribute()
      ->CopyFrom([] {
        onnx::AttributeProto to;
        to.set_name("to");
        to.set_type(onnx::AttributeProto::INT);
        to.set_i(onnx::TensorProto::INT64);
        return to;
      }());
  auto* zero = graph->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  auto* one = graph->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::INT64);
  one->add_int64_data(1);
  add_node(graph, "Range", {std::string("zero"), std::string("limit64"), std::string("one")},
           {std::string("r")});
  add_node(graph, "Shape", {std::string("x")}, {std::string("x_shape")});
  add_node(graph, "Reshape", {std::string("x"), std::string("x_shape")}, {std::string("s")});
  return model;
}

std::string serialized(const onnx::ModelProto& model) {
  std::string bytes;
  REQUIRE(model.SerializeToString(&bytes));
  return bytes;
}

ImportOptions with_values(std::map<std::string, ShapeInputValues> values) {
  ImportOptions options;
  options.shape_input_values = std::move(values);
  return options;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

// The table: Slice reads starts, ends, axes and steps at inputs 1-4; Resize-10 read its scales at
// input 1 (opset 11 moved them to 2, after roi); Relu has none.
TEST_CASE("shape parameters: the per-op table") {
  const auto slice = shape_parameters("Slice", 13);
  REQUIRE(slice.size() == 4);
  CHECK(slice[0].position == 1);
  CHECK(std::string(slice[3].name) == "steps");
  const auto resize10 = shape_parameters("Resize", 10);
  REQUIRE(resize10.size() == 1);
  CHECK(resize10[0].position == 1);
  CHECK(std::string(resize10[0].name) == "scales");
  CHECK(shape_parameters("Resize", 13).size() == 3);
  CHECK(shape_parameters("Relu", 13).empty());
}

// ReduceSum's axes is graph input 1: one shape input, read directly by ReduceSum_0 at input 1.
TEST_CASE("shape inputs: a direct use") {
  const auto uses = find_shape_inputs(reduce_sum_model());
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].input == "axes");
  CHECK(uses[0].model_position == 1);
  CHECK(uses[0].describe() == "node 'ReduceSum_0' (ReduceSum) input 1 (axes)");
}

// limit reaches Range's limit through Cast_0; x reaches Reshape only through Shape, which
// depends on x's shape alone: limit is the only shape input.
TEST_CASE("shape inputs: through other nodes, but not through Shape") {
  const auto uses = find_shape_inputs(indirect_model());
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].input == "limit");
  CHECK(uses[0].model_position == 1);
  CHECK(uses[0].via == "Cast_0");
  CHECK(contains(uses[0].describe(),
                 "node 'Range_0' (Range) input 1 (limit) through node "
                 "'Cast_0'"));
}

// axes bound to [1]: the graph keeps one input (data), plans reduced as [3,1,2] and records the
// binding (int64 [1], graph input 1 in the file).
TEST_CASE("shape inputs: a bound value plans the graph statically") {
  auto graph =
      import_onnx_bytes(serialized(reduce_sum_model()), "",
                        with_cpu_folding(with_values({{"axes", std::vector<int64_t>{1}}})));
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  REQUIRE(graph->inputs.size() == 1);
  CHECK(graph->values[static_cast<size_t>(graph->inputs[0])].name == "data");
  CHECK(graph->values[static_cast<size_t>(graph->outputs[0])].shape == Shape{3, 1, 2});
  REQUIRE(graph->shape_inputs.size() == 1);
  const BoundShapeInput& bound = graph->shape_inputs[0];
  CHECK(bound.name == "axes");
  CHECK(bound.model_position == 1);
  CHECK(bound.value.dtype == DType::kInt64);
  CHECK(bound.value.shape == Shape{1});
  CHECK(bound.value.int_at(0) == 1);
  CHECK(bound.needed_by == "node 'ReduceSum_0' (ReduceSum) input 1 (axes)");
}

// limit = 4 (an int32 scalar, given as an int) folds Cast and Range: r is the constant [0,1,2,3].
TEST_CASE("shape inputs: an indirect shape input folds the chain") {
  auto graph =
      import_onnx_bytes(serialized(indirect_model()), "",
                        with_cpu_folding(with_values({{"limit", std::vector<int64_t>{4}}})));
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  CHECK(graph->values[static_cast<size_t>(graph->outputs[0])].shape == Shape{4});
  REQUIRE(graph->shape_inputs.size() == 1);
  CHECK(graph->shape_inputs[0].value.dtype == DType::kInt32);
  CHECK(graph->shape_inputs[0].value.shape == Shape{});
}

// Without a value the load fails, naming the input, the node and input that read it, and both
// ways to give one (the API field and the CLI flag).
TEST_CASE("shape inputs: a missing value is an error that says how to give it") {
  auto graph = import_onnx_bytes(serialized(reduce_sum_model()), "", with_cpu_folding());
  REQUIRE_FALSE(graph.has_value());
  const std::string message = graph.status().message();
  CHECK(graph.status().code() == StatusCode::kInvalidArgument);
  CHECK(contains(message, "input 'axes': node 'ReduceSum_0' (ReduceSum) input 1 (axes)"));
  CHECK(contains(message, "LoadOptions::shape_input_values"));
  CHECK(contains(message, "--values axes:"));
}

// 'data' is a graph input but no node needs its value; 'nope' is no input at all. Both are
// errors that list the real shape inputs.
TEST_CASE("shape inputs: values for other names are errors") {
  auto data = import_onnx_bytes(serialized(reduce_sum_model()), "",
                                with_cpu_folding(with_values({{"axes", std::vector<int64_t>{1}},
                                                              {"data", std::vector<int64_t>{1}}})));
  REQUIRE_FALSE(data.has_value());
  CHECK(contains(data.status().message(), "'data', which is a graph input whose value no node"));
  CHECK(contains(data.status().message(), "shape inputs: 'axes'"));
  auto nope = import_onnx_bytes(serialized(reduce_sum_model()), "",
                                with_cpu_folding(with_values({{"axes", std::vector<int64_t>{1}},
                                                              {"nope", std::vector<int64_t>{1}}})));
  REQUIRE_FALSE(nope.has_value());
  CHECK(contains(nope.status().message(), "'nope', which is not a graph input"));
}

// axes is declared [1]: two values do not fit; 1.5 is no int64; 1.0 is.
TEST_CASE("shape inputs: values that do not fit the declared shape or dtype") {
  auto count =
      import_onnx_bytes(serialized(reduce_sum_model()), "",
                        with_cpu_folding(with_values({{"axes", std::vector<int64_t>{0, 1}}})));
  REQUIRE_FALSE(count.has_value());
  CHECK(contains(count.status().message(), "shape input 'axes' declares shape [1], got 2 value"));
  auto fraction =
      import_onnx_bytes(serialized(reduce_sum_model()), "",
                        with_cpu_folding(with_values({{"axes", std::vector<double>{1.5}}})));
  REQUIRE_FALSE(fraction.has_value());
  CHECK(contains(fraction.status().message(), "is not a whole number"));
  auto whole =
      import_onnx_bytes(serialized(reduce_sum_model()), "",
                        with_cpu_folding(with_values({{"axes", std::vector<double>{1.0}}})));
  CHECK_MESSAGE(whole.has_value(), whole.status().to_string());
}

// An int32 input takes values within int32 only: 2^31 is out of range.
TEST_CASE("shape inputs: an integer out of the input's dtype range") {
  auto graph = import_onnx_bytes(
      serialized(indirect_model()), "",
      with_cpu_folding(with_values({{"limit", std::vector<int64_t>{int64_t{1} << 31}}})));
  REQUIRE_FALSE(graph.has_value());
  CHECK(contains(graph.status().message(), "does not fit its dtype int32"));
}

// axes declared [n] (an open dim) takes its length from the values: [0, 2] → shape [2], and
// ReduceSum over axes 0 and 2 of [3,2,2] gives [1,2,1].
TEST_CASE("shape inputs: an open dim is sized by the values") {
  onnx::ModelProto model = reduce_sum_model();
  auto* axes = model.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type();
  axes->mutable_shape()->mutable_dim(0)->set_dim_param("n");
  auto graph = import_onnx_bytes(
      serialized(model), "", with_cpu_folding(with_values({{"axes", std::vector<int64_t>{0, 2}}})));
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  CHECK(graph->shape_inputs[0].value.shape == Shape{2});
  CHECK(graph->values[static_cast<size_t>(graph->outputs[0])].shape == Shape{1, 2, 1});
}

}  // namespace onepool
