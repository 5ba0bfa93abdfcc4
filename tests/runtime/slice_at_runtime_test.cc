// Slices at run-time positions: starts and ends computed at run time (a graph input, a Loop's
// iteration number) a proven distance apart (ends = starts + c) are planned at that length
// without --values; each run reads the positions (allocating nothing), and one that clamps the
// slice shorter than planned fails, naming the node and both lengths. Positions without such a
// proof (another source, a step other than 1) still need --values.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/allocation_counter.h"
#include "common/if_model_builder.h"

namespace onepool {

using namespace if_models;  // NOLINT(build/namespaces): the test helpers

namespace {

// y = x[:, i : i + 2] for x [2, 6] and the graph input i [1], through Add(i, 2); `step` (when
// not 0) as a constant steps input, `ends_from` replaces the Add's constant by another input.
onnx::ModelProto column_pair_model(int64_t step = 0, const std::string& ends_from = "") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2, 6});
  add_input(graph, "i", {1}, onnx::TensorProto::INT64);
  add_int64s_initializer(graph, "two", {2}, true);
  add_int64s_initializer(graph, "axes", {1});
  add_output(graph, "y", {2, 2});
  // Declared by symbols: import computes the length itself.
  for (auto& dim : *graph->mutable_output(0)
                        ->mutable_type()
                        ->mutable_tensor_type()
                        ->mutable_shape()
                        ->mutable_dim()) {
    dim.set_dim_param("n");
  }
  if (!ends_from.empty()) add_input(graph, ends_from, {1}, onnx::TensorProto::INT64);
  add_node(graph, "Add", {"i", ends_from.empty() ? "two" : ends_from}, {"end"});
  Names inputs = {"x", "i", "end", "axes"};
  if (step != 0) {
    add_int64s_initializer(graph, "steps", {step});
    inputs.push_back("steps");
  }
  add_node(graph, "Slice", inputs, {"y"}, "pair");
  return model;
}

struct SliceRun {
  Shape shape;
  std::vector<float> values;
};

// Imports and runs `model` with x = 0 .. 11 and the int64 input i = `position`.
Expected<SliceRun> run_with_position(const onnx::ModelProto& model, int64_t position) {
  ONEPOOL_ASSIGN_OR_RETURN(Graph graph, import_model(model));
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const Model> loaded,
                           Model::from_graph(std::move(graph), LoadOptions{}));
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                           Session::create(loaded, SessionOptions{}));
  std::vector<float> x(12);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k);
  std::vector<TensorView> inputs;
  for (const TensorInfo& info : loaded->inputs()) {
    void* data =
        info.dtype == DType::kInt64 ? static_cast<void*>(&position) : static_cast<void*>(x.data());
    inputs.push_back(TensorView{data, info.dtype, info.shape, Device{}});
  }
  SliceRun result;
  result.shape = loaded->outputs()[0].shape;
  result.values.resize(static_cast<size_t>(result.shape.element_count()));
  std::vector<TensorView> outputs = {
      TensorView{result.values.data(), DType::kFloat32, result.shape, Device{}}};
  ONEPOOL_RETURN_IF_ERROR(session->run(inputs, outputs));
  return result;
}

// acc = acc + x[i : i + 1] over the body's iteration number i (x a body constant [5]), every acc
// scanned: ONNX's test_loop11 with M a constant `trips`.
onnx::ModelProto running_sum_model(int64_t trips) {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_float_initializer(graph, "acc0", {1}, {-2});
  add_int64s_initializer(graph, "m", {trips}, true);
  add_output(graph, "acc_final", {1});
  add_output(graph, "acc_all", {trips, 1});
  onnx::GraphProto body = branch("body");
  add_input(&body, "iteration", {}, onnx::TensorProto::INT64);
  add_input(&body, "cond_in", {}, onnx::TensorProto::BOOL);
  add_input(&body, "acc", {1});
  add_node(&body, "Identity", {"cond_in"}, {"cond_out"});
  add_float_initializer(&body, "x", {5}, {1, 2, 3, 4, 5});
  add_int64s_initializer(&body, "one", {1}, true);
  add_int64s_initializer(&body, "axis0", {0});
  add_node(&body, "Add", {"iteration", "one"}, {"end"});
  add_node(&body, "Unsqueeze", {"iteration", "axis0"}, {"start_1d"});
  add_node(&body, "Unsqueeze", {"end", "axis0"}, {"end_1d"});
  add_node(&body, "Slice", {"x", "start_1d", "end_1d"}, {"picked"}, "pick");
  add_node(&body, "Add", {"acc", "picked"}, {"acc_next"});
  add_node(&body, "Identity", {"acc_next"}, {"acc_row"});
  set_type(body.add_output(), "cond_out", onnx::TensorProto::BOOL, {});
  add_output(&body, "acc_next", {1});
  add_output(&body, "acc_row", {1});
  auto* loop = add_node(graph, "Loop", {"m", "", "acc0"}, {"acc_final", "acc_all"}, "loop");
  auto* attribute = loop->add_attribute();
  attribute->set_name(std::string("body"));
  attribute->set_type(onnx::AttributeProto::GRAPH);
  *attribute->mutable_g() = body;
  return model;
}

// The running-sum model's Session and output buffers.
struct RunningSum {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Session> session;
  std::vector<std::vector<float>> outputs;
  std::vector<TensorView> views;
};

Expected<RunningSum> prepare_running_sum(int64_t trips) {
  RunningSum prepared;
  ONEPOOL_ASSIGN_OR_RETURN(Graph graph, import_model(running_sum_model(trips)));
  ONEPOOL_ASSIGN_OR_RETURN(prepared.model, Model::from_graph(std::move(graph), LoadOptions{}));
  ONEPOOL_ASSIGN_OR_RETURN(prepared.session, Session::create(prepared.model, SessionOptions{}));
  for (const TensorInfo& info : prepared.model->outputs()) {
    prepared.outputs.emplace_back(static_cast<size_t>(info.shape.element_count()));
  }
  for (size_t k = 0; k < prepared.outputs.size(); ++k) {
    prepared.views.push_back(TensorView{prepared.outputs[k].data(), DType::kFloat32,
                                        prepared.model->outputs()[k].shape, Device{}});
  }
  return prepared;
}

Expected<std::vector<std::vector<float>>> run_running_sum(int64_t trips) {
  ONEPOOL_ASSIGN_OR_RETURN(RunningSum prepared, prepare_running_sum(trips));
  ONEPOOL_RETURN_IF_ERROR(prepared.session->run({}, prepared.views));
  return prepared.outputs;
}

}  // namespace

TEST_CASE("Slice: run-time positions a proven distance apart are planned without --values") {
  auto middle = run_with_position(column_pair_model(), 1);
  REQUIRE_MESSAGE(middle.has_value(), middle.status().to_string());
  CHECK(middle->shape == Shape({2, 2}));
  CHECK(middle->values == std::vector<float>{1, 2, 7, 8});
  // Negative positions count from the end: [-3, -1) is [3, 5).
  auto from_end = run_with_position(column_pair_model(), -3);
  REQUIRE_MESSAGE(from_end.has_value(), from_end.status().to_string());
  CHECK(from_end->values == std::vector<float>{3, 4, 9, 10});
  auto last_pair = run_with_position(column_pair_model(), 4);
  REQUIRE_MESSAGE(last_pair.has_value(), last_pair.status().to_string());
  CHECK(last_pair->values == std::vector<float>{4, 5, 10, 11});
}

TEST_CASE("Slice: a position that clamps the slice shorter than planned fails the run") {
  for (int64_t position : {5, 6, -1, -8}) {
    CAPTURE(position);
    auto clamped = run_with_position(column_pair_model(), position);
    REQUIRE_FALSE(clamped.has_value());
    CHECK(clamped.status().code() == StatusCode::kOutOfRange);
    CHECK(contains(clamped.status(), "'pair'"));
    CHECK(
        contains(clamped.status(), "of the 6 elements of axis 1, but the output is planned for 2"));
  }
}

TEST_CASE("Slice: positions without a proven distance still need --values") {
  // ends from another input: ends - starts is unknown.
  const Status other_source = import_model(column_pair_model(0, "j")).status();
  CHECK(contains(other_source, "--values"));
  // A step of 2: the length is not ends - starts.
  const Status stepped = import_model(column_pair_model(2)).status();
  CHECK(contains(stepped, "--values"));
  ImportOptions options;
  options.shape_input_values["i"] = std::vector<int64_t>{1};
  auto bound = import_model(column_pair_model(2), options);
  REQUIRE_MESSAGE(bound.has_value(), bound.status().to_string());
}

TEST_CASE("Loop: a body slices by its iteration number (ONNX test_loop11)") {
  auto outputs = run_running_sum(5);
  REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
  CHECK((*outputs)[0] == std::vector<float>{13});
  CHECK((*outputs)[1] == std::vector<float>{-1, 1, 4, 8, 13});
  // A sixth iteration slices x[5:6], empty: the run fails, naming the node inside the body.
  auto past_end = run_running_sum(6);
  REQUIRE_FALSE(past_end.has_value());
  CHECK(contains(past_end.status(), "'pick'"));
  CHECK(contains(past_end.status(), "select 0 of the 5 elements of axis 0"));
}

TEST_CASE("Slice at run-time positions allocates nothing per run (inside a Loop body)") {
  auto prepared = prepare_running_sum(5);
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  REQUIRE(prepared->session->run({}, prepared->views).is_ok());
  g_allocations = 0;
  g_counting = true;
  bool all_ok = true;
  for (int i = 0; i < 10; ++i)
    all_ok = prepared->session->run({}, prepared->views).is_ok() && all_ok;
  g_counting = false;
  CHECK(all_ok);
  CHECK(g_allocations.load() == 0);
  CHECK(prepared->outputs[1] == std::vector<float>{-1, 1, 4, 8, 13});
}

}  // namespace onepool
