// Loop on the CPU: the body a nested plan reused by every iteration. Scan outputs with a trip
// count known at load (a constant or a bound graph input), carried values (swapped through views
// too), while loops on a runtime condition, and clear errors for a loop that stops before its
// scan length, a carried value that changes shape, and scan outputs without a known M.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "common/if_model_builder.h"

namespace onepool {

using namespace if_models;  // NOLINT(build/namespaces): the test helpers

namespace {

void add_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void add_int64_initializer(onnx::GraphProto* graph, const std::string& name, int64_t value) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_int64_data(value);
}

// A Loop node with `body` as its graph attribute.
void add_loop(onnx::GraphProto* graph, const Names& inputs, const Names& outputs,
              const onnx::GraphProto& body) {
  auto* node = add_node(graph, "Loop", inputs, outputs, "loop");
  auto* attribute = node->add_attribute();
  attribute->set_name(std::string("body"));
  attribute->set_type(onnx::AttributeProto::GRAPH);
  *attribute->mutable_g() = body;
}

// Body inputs (i, cond, carried float[2] ...) and its condition passed through.
onnx::GraphProto loop_body(const Names& carried) {
  onnx::GraphProto body = branch("body");
  add_input(&body, "i", {}, onnx::TensorProto::INT64);
  add_input(&body, "cond_in", {}, onnx::TensorProto::BOOL);
  for (const std::string& name : carried) add_input(&body, name, {2});
  add_node(&body, "Identity", {"cond_in"}, {"cond_out"});
  set_type(body.add_output(), "cond_out", onnx::TensorProto::BOOL, {});
  return body;
}

struct Feed {
  std::vector<float> floats;
  bool flag = true;
  int64_t count = 0;
};

// Loads `model` and runs it once; feeds float inputs (x) from `feed.floats`, bool inputs from
// `feed.flag`, int64 inputs from `feed.count`; returns the float outputs, or the run's error.
Expected<std::vector<std::vector<float>>> run_loop_model(const onnx::ModelProto& model, Feed feed,
                                                         const ImportOptions& options = {}) {
  ONEPOOL_ASSIGN_OR_RETURN(Graph graph, import_model(model, options));
  std::vector<Shape> shapes;
  for (ValueId id : graph.outputs) shapes.push_back(graph.values[id].shape);
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const Model> loaded,
                           Model::from_graph(std::move(graph), LoadOptions{}));
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                           Session::create(loaded, SessionOptions{}));
  std::vector<TensorView> inputs;
  for (const TensorInfo& info : loaded->inputs()) {
    void* data = info.dtype == DType::kBool    ? static_cast<void*>(&feed.flag)
                 : info.dtype == DType::kInt64 ? static_cast<void*>(&feed.count)
                                               : static_cast<void*>(feed.floats.data());
    inputs.push_back(TensorView{data, info.dtype, info.shape, Device{}});
  }
  std::vector<std::vector<float>> outputs;
  for (const Shape& shape : shapes) outputs.emplace_back(shape.element_count());
  std::vector<TensorView> views;
  for (size_t i = 0; i < outputs.size(); ++i) {
    views.push_back(TensorView{outputs[i].data(), DType::kFloat32, shapes[i], Device{}});
  }
  ONEPOOL_RETURN_IF_ERROR(session->run(inputs, views));
  return outputs;
}

// acc = acc + x for M iterations (M a constant or the graph input "m"); every acc scanned.
onnx::ModelProto accumulate_model(bool constant_trip) {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2});
  if (constant_trip) {
    add_int64_initializer(graph, "m", 3);
  } else {
    add_input(graph, "m", {}, onnx::TensorProto::INT64);
  }
  add_float_initializer(graph, "zeros", {2}, {0, 0});
  add_output(graph, "acc_final", {2});
  add_output(graph, "acc_all", {3, 2});
  onnx::GraphProto body = loop_body({"acc"});
  add_node(&body, "Add", {"acc", "x"}, {"acc_next"});
  add_node(&body, "Identity", {"acc_next"}, {"acc_row"});
  add_output(&body, "acc_next", {2});
  add_output(&body, "acc_row", {2});
  add_loop(graph, {"m", "", "zeros"}, {"acc_final", "acc_all"}, body);
  return model;
}

// What a run of a model with bounded scan outputs gave: each output's actual shape and values.
struct BoundedRun {
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> values;
};

// Runs `model` (imported with `bounds`) with x = `x` and the int64 input m = `trip`.
Expected<BoundedRun> run_bounded(const onnx::ModelProto& model,
                                 const std::map<std::string, int64_t>& bounds, std::vector<float> x,
                                 int64_t trip) {
  ImportOptions options;
  options.bounds = bounds;
  ONEPOOL_ASSIGN_OR_RETURN(Graph graph, import_model(model, options));
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const Model> loaded,
                           Model::from_graph(std::move(graph), LoadOptions{}));
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                           Session::create(loaded, SessionOptions{}));
  std::vector<TensorView> inputs;
  for (const TensorInfo& info : loaded->inputs()) {
    void* data =
        info.dtype == DType::kInt64 ? static_cast<void*>(&trip) : static_cast<void*>(x.data());
    inputs.push_back(TensorView{data, info.dtype, info.shape, Device{}});
  }
  BoundedRun result;
  std::vector<TensorView> views;
  result.values.resize(loaded->outputs().size());
  for (size_t i = 0; i < loaded->outputs().size(); ++i) {
    const Shape& planned = loaded->outputs()[i].shape;
    result.values[i].resize(static_cast<size_t>(planned.element_count()));
    views.push_back(TensorView{result.values[i].data(), DType::kFloat32, planned, Device{}});
  }
  ONEPOOL_RETURN_IF_ERROR(session->run(inputs, views));
  for (size_t i = 0; i < views.size(); ++i) {
    result.shapes.push_back(session->output_shape(i));
    result.values[i].resize(static_cast<size_t>(result.shapes[i].element_count()));
  }
  return result;
}

// The accumulate model whose body stops after two iterations (cond = i < 1).
onnx::ModelProto stops_after_two(bool constant_trip) {
  onnx::ModelProto model = accumulate_model(constant_trip);
  auto* body = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  body->mutable_node(0)->set_op_type(std::string("Less"));
  body->mutable_node(0)->clear_input();
  body->mutable_node(0)->add_input(std::string("i"));
  body->mutable_node(0)->add_input(std::string("one"));
  add_int64_initializer(body, "one", 1);
  return model;
}

}  // namespace

TEST_CASE("Loop: a constant trip count with a scan output") {
  auto outputs = run_loop_model(accumulate_model(true), Feed{{1, -2}});
  REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
  CHECK((*outputs)[0] == std::vector<float>{3, -6});
  CHECK((*outputs)[1] == std::vector<float>{1, -2, 2, -4, 3, -6});
}

// M a graph input: a shape input (it fixes the scan length), bound at load.
TEST_CASE("Loop: a graph input M is bound at load, else a clear error") {
  const Status missing = import_model(accumulate_model(false)).status();
  CHECK(contains(missing, "--values m:"));
  ImportOptions options;
  options.shape_input_values["m"] = std::vector<int64_t>{3};
  auto outputs = run_loop_model(accumulate_model(false), Feed{{1, 1}}, options);
  REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
  CHECK((*outputs)[1] == std::vector<float>{1, 1, 2, 2, 3, 3});
}

// The body swaps two carried values through views of its inputs (Identity): three iterations
// leave them swapped.
TEST_CASE("Loop: carried values swapped by the body") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2});
  add_int64_initializer(graph, "m", 3);
  add_float_initializer(graph, "b0", {2}, {7, 8});
  add_output(graph, "a_final", {2});
  add_output(graph, "b_final", {2});
  onnx::GraphProto body = loop_body({"a", "b"});
  add_node(&body, "Identity", {"b"}, {"a_next"});
  add_node(&body, "Identity", {"a"}, {"b_next"});
  add_output(&body, "a_next", {2});
  add_output(&body, "b_next", {2});
  add_loop(graph, {"m", "", "x", "b0"}, {"a_final", "b_final"}, body);
  auto outputs = run_loop_model(model, Feed{{1, 2}});
  REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
  CHECK((*outputs)[0] == std::vector<float>{7, 8});
  CHECK((*outputs)[1] == std::vector<float>{1, 2});
}

// No M, a runtime cond: doubles x until the body's condition (sum < 100) turns false.
TEST_CASE("Loop: a while loop on runtime conditions") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2});
  add_input(graph, "go", {}, onnx::TensorProto::BOOL);
  add_output(graph, "y", {2});
  onnx::GraphProto body = branch("body");
  add_input(&body, "i", {}, onnx::TensorProto::INT64);
  add_input(&body, "cond_in", {}, onnx::TensorProto::BOOL);
  add_input(&body, "v", {2});
  add_node(&body, "Add", {"v", "v"}, {"v_next"});
  add_node(&body, "ReduceSum", {"v_next"}, {"total"});
  add_float_initializer(&body, "limit", {}, {100});
  add_node(&body, "Less", {"total", "limit"}, {"more"});
  set_type(body.add_output(), "more", onnx::TensorProto::BOOL, {});
  add_output(&body, "v_next", {2});
  add_int_attribute(body.mutable_node(1), "keepdims", 0);
  add_loop(graph, {"", "go", "x"}, {"y"}, body);
  auto doubled = run_loop_model(model, Feed{{1, 2}, true});
  REQUIRE_MESSAGE(doubled.has_value(), doubled.status().to_string());
  CHECK((*doubled)[0] == std::vector<float>{64, 128});  // 3 -> 6 ... 96 -> 192 stops
  auto untouched = run_loop_model(model, Feed{{1, 2}, false});
  REQUIRE_MESSAGE(untouched.has_value(), untouched.status().to_string());
  CHECK((*untouched)[0] == std::vector<float>{1, 2});
}

// Scan outputs planned for M = 3 rows; the body's condition stops after 2: a clear error.
TEST_CASE("Loop: stopping before the planned scan length is a clear error") {
  const auto result = run_loop_model(stops_after_two(true), Feed{{1, 1}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kOutOfRange);
  CHECK(contains(result.status(),
                 "node 'loop' (Loop): scan output 0 is planned for 3 "
                 "iterations (M) but the loop ran 2"));
}

TEST_CASE("Loop: a carried value that changes shape is not supported, said so") {
  onnx::ModelProto model = accumulate_model(true);
  auto* body = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  body->mutable_node(1)->set_op_type(std::string("Concat"));  // acc_next = Concat(acc, x)
  add_int_attribute(body->mutable_node(1), "axis", 0);
  const Status status = import_model(model).status();
  CHECK(status.code() == StatusCode::kUnsupported);
  CHECK(contains(status,
                 "carried value 0 ('acc') enters as float32 [2] and leaves an iteration "
                 "as float32 [4]"));
}

// M a runtime graph input, the scan output bounded at 5 rows: M stays an input (no --values), each
// run returns M rows, M = 0 none, and M = 6 fails naming the tensor, the bound and the count.
TEST_CASE("Loop: --bound plans scan outputs for a runtime M and returns the rows produced") {
  const onnx::ModelProto model = accumulate_model(false);
  const std::map<std::string, int64_t> bounds = {{"acc_all", 5}};
  auto three = run_bounded(model, bounds, {1, 2}, 3);
  REQUIRE_MESSAGE(three.has_value(), three.status().to_string());
  CHECK(three->shapes[0] == Shape{2});
  CHECK(three->values[0] == std::vector<float>{3, 6});
  CHECK(three->shapes[1] == Shape{3, 2});
  CHECK(three->values[1] == std::vector<float>{1, 2, 2, 4, 3, 6});
  auto five = run_bounded(model, bounds, {1, 1}, 5);
  REQUIRE_MESSAGE(five.has_value(), five.status().to_string());
  CHECK(five->shapes[1] == Shape{5, 2});
  CHECK(five->values[1].back() == 5);
  auto none = run_bounded(model, bounds, {1, 1}, 0);
  REQUIRE_MESSAGE(none.has_value(), none.status().to_string());
  CHECK(none->shapes[1] == Shape{0, 2});
  CHECK(none->values[0] == std::vector<float>{0, 0});
  auto six = run_bounded(model, bounds, {1, 1}, 6);
  REQUIRE_FALSE(six.has_value());
  CHECK(six.status().code() == StatusCode::kOutOfRange);
  CHECK(contains(six.status(),
                 "scan output 'acc_all' has room for 5 iterations (--bound acc_all=5) but the "
                 "loop ran 6"));
  // The planned output says why its shape is a bound.
  ImportOptions options;
  options.bounds = bounds;
  auto graph = import_model(model, options);
  REQUIRE(graph.has_value());
  const Value& scanned = graph->values[static_cast<size_t>(graph->outputs[1])];
  CHECK(scanned.shape == Shape{5, 2});
  CHECK(scanned.bound.find("at most 5 iterations of Loop 'loop' (--bound acc_all=5)") !=
        std::string::npos);
}

// A constant M = 3 and a body that stops after two iterations: with a bound the early stop is
// the scan output's actual length.
TEST_CASE("Loop: --bound lets a loop with a known M stop early") {
  auto stopped = run_bounded(stops_after_two(true), {{"acc_all", 3}}, {1, 1}, 0);
  REQUIRE_MESSAGE(stopped.has_value(), stopped.status().to_string());
  CHECK(stopped->shapes[1] == Shape{2, 2});
  CHECK(stopped->values[1] == std::vector<float>{1, 1, 2, 2});
  CHECK(stopped->values[0] == std::vector<float>{2, 2});
}

TEST_CASE("Loop: --bound errors name what is wrong") {
  const Status unbound = import_model(accumulate_model(false)).status();
  CHECK(contains(unbound, "(or give its scan outputs a --bound: M is then fed at run time)"));
  ImportOptions not_a_scan;
  not_a_scan.bounds = {{"acc_all", 4}, {"acc_final", 4}};
  CHECK(
      contains(import_model(accumulate_model(false), not_a_scan).status(),
               "--bound names 'acc_final', which is not an output whose length a --bound can fix"));
  ImportOptions negative;
  negative.bounds = {{"acc_all", -1}};
  CHECK(contains(import_model(accumulate_model(false), negative).status(),
                 "--bound acc_all=-1: a bound is a count (0 or more)"));
}

}  // namespace onepool
