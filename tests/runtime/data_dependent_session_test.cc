// Outputs of data-dependent size through import, plan and Session: bounds proven at import (a
// declared output shape does not override them), the plan marks bounded tensors, a run reports
// each actual shape (Session::output_shape) and writes the tensor densely from the buffer's
// start; Gather, Squeeze and Reshape read bounded tensors at their actual shapes, and any other
// reader (or a layout they cannot follow) is a clear kUnsupported, never a wrong read.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/graph_builder.h"
#include "common/if_model_builder.h"
#include "planner/render/plan_dump.h"

namespace onepool {

using namespace if_models;  // NOLINT(build/namespaces): the test helpers

namespace {

// x float [2,3] → NonZero → `nz`, declared int64 [2,1] (what some example produced).
onnx::ModelProto nonzero_model() {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2, 3});
  add_node(graph, "NonZero", {"x"}, {"nz"}, "nonzero");
  set_type(graph->add_output(), "nz", onnx::TensorProto::INT64, {2, 1});
  return model;
}

std::shared_ptr<const Model> load(const onnx::ModelProto& proto) {
  auto graph = import_model(proto);
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  auto model = Model::from_graph(std::move(graph).value(), LoadOptions{});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

// One run of a one-input, one-int64-output Session; the buffer holds the output's bound.
std::vector<int64_t> run_nonzero(Session& session, std::vector<float> x) {
  const TensorInfo& out = session.model().outputs()[0];
  std::vector<int64_t> buffer(static_cast<size_t>(out.shape.element_count()), -7);
  const TensorView input{x.data(), DType::kFloat32, Shape{2, 3}, Device{}};
  const TensorView output{buffer.data(), DType::kInt64, out.shape, Device{}};
  const Status status = session.run({&input, 1}, {&output, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  buffer.resize(static_cast<size_t>(session.output_shape(0).element_count()));
  return buffer;
}

}  // namespace

TEST_CASE("NonZero: planned at [rank, numel], the actual shape reported per run") {
  auto graph = import_model(nonzero_model());
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  const Value& nz = graph->values[static_cast<size_t>(graph->outputs[0])];
  CHECK(nz.shape == Shape{2, 6});  // the bound, not the declared [2,1]
  CHECK(nz.bound.find("at most 6 nonzero") != std::string::npos);

  auto model = load(nonzero_model());
  CHECK(model->outputs()[0].shape == Shape{2, 6});
  CHECK_FALSE(model->outputs()[0].bound.empty());
  auto session = Session::create(model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  CHECK((*session)->output_shape(0) == Shape{2, 6});  // before any run: the bound

  CHECK(run_nonzero(**session, {1, 0, 2, 0, 0, 3}) == std::vector<int64_t>{0, 0, 1, 0, 2, 2});
  CHECK((*session)->output_shape(0) == Shape{2, 3});
  CHECK(run_nonzero(**session, {0, 0, 0, 0, 0, 0}).empty());
  CHECK((*session)->output_shape(0) == Shape{2, 0});
  CHECK(run_nonzero(**session, {1, 1, 1, 1, 1, 1}).size() == 12);
  CHECK((*session)->output_shape(0) == Shape{2, 6});
  CHECK((*session)->output_view(0).shape == Shape{2, 6});
}

TEST_CASE("The plan marks a bounded tensor: JSON bounded/bound, the table <=[...]") {
  auto model = load(nonzero_model());
  auto session = Session::create(model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  const Plan& plan = (*session)->plan();
  const int32_t index = plan.find_tensor(model->graph().outputs[0]);
  REQUIRE(index >= 0);
  CHECK_FALSE(plan.tensors[static_cast<size_t>(index)].bound.empty());
  const std::string json = plan.to_json();
  CHECK(json.find("\"bounded\"") != std::string::npos);
  CHECK(render_plan_table(plan).find("<=[2,6]") != std::string::npos);
  CHECK(json.find("nonzero elements") != std::string::npos);
  auto reloaded = Plan::from_json(json);
  REQUIRE_MESSAGE(reloaded.has_value(), reloaded.status().to_string());
  CHECK(reloaded->tensors[static_cast<size_t>(index)].bound ==
        plan.tensors[static_cast<size_t>(index)].bound);
}

TEST_CASE("A node that reads a bounded tensor is unsupported, and Shape of one never folds") {
  for (const std::string op : {"Neg", "Shape"}) {
    CAPTURE(op);
    onnx::ModelProto model = new_model();
    auto* graph = model.mutable_graph();
    add_input(graph, "x", {2, 3});
    add_node(graph, "NonZero", {"x"}, {"nz"}, "nonzero");
    add_node(graph, op, {"nz"}, {"after"}, "reader");
    set_type(graph->add_output(), "after", onnx::TensorProto::INT64,
             op == "Shape" ? std::vector<int64_t>{2} : std::vector<int64_t>{2, 6});
    auto imported = import_model(model);
    REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
    CHECK(has_op(*imported, op));  // Shape of [2, <=6] is not the constant [2, 6]
    auto loaded = load(model);
    auto session = Session::create(loaded, SessionOptions{});
    REQUIRE_FALSE(session.has_value());
    CHECK(session.status().code() == StatusCode::kUnsupported);
    CHECK(contains(session.status(), "node 'reader'"));
    CHECK(contains(session.status(), "input 'nz' has a data-dependent shape"));
  }
}

TEST_CASE("NonMaxSuppression: the bound uses the box count when the maximum is a runtime input") {
  onnx::ModelProto model = new_model();
  model.mutable_opset_import(0)->set_version(11);
  auto* graph = model.mutable_graph();
  add_input(graph, "boxes", {1, 5, 4});
  add_input(graph, "scores", {1, 2, 5});
  add_input(graph, "max_boxes", {1}, onnx::TensorProto::INT64);
  add_node(graph, "NonMaxSuppression", {"boxes", "scores", "max_boxes"}, {"selected"}, "nms");
  set_type(graph->add_output(), "selected", onnx::TensorProto::INT64, {3, 3});
  auto imported = import_model(model);
  REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
  const Value& selected = testing::value_named(*imported, "selected");
  CHECK(selected.shape == Shape{10, 3});
  CHECK(selected.bound.find("known only at run time") != std::string::npos);
}

}  // namespace onepool

namespace onepool {

namespace {

// x float [2,3] → NonZero → nz [2, <=6] → `op` (inputs nz and `second`) → `after`.
onnx::ModelProto nonzero_reader_model(const std::string& op, const std::string& second,
                                      const std::vector<int64_t>& after_dims) {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2, 3});
  add_node(graph, "NonZero", {"x"}, {"nz"}, "nonzero");
  add_node(graph, op, {"nz", second}, {"after"}, "reader");
  set_type(graph->add_output(), "after", onnx::TensorProto::INT64, after_dims);
  return model;
}

void add_int64_initializer(onnx::GraphProto* graph, const std::string& name,
                           const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (int64_t value : values) tensor->add_int64_data(value);
}

}  // namespace

// nz's bounded dim is dim 1, so Gather along axis 0 would read rows laid out at the actual width:
// a run where the width is below the bound is a clear error, one at the bound is fine.
TEST_CASE("Gather of data bounded beyond dim 0: an error at run time, never a wrong read") {
  onnx::ModelProto model = nonzero_reader_model("Gather", "row", {1, 6});
  add_int64_initializer(model.mutable_graph(), "row", {1}, {1});
  auto session = Session::create(load(model), SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  std::vector<int64_t> out(6, -1);
  const TensorView input{x.data(), DType::kFloat32, Shape{2, 3}, Device{}};
  const TensorView output{out.data(), DType::kInt64, Shape{1, 6}, Device{}};
  Status status = (*session)->run({&input, 1}, {&output, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  CHECK(out == std::vector<int64_t>{0, 1, 2, 0, 1, 2});  // row 1 of nz: the column indices
  x[4] = 0;
  status = (*session)->run({&input, 1}, {&output, 1});
  CHECK(status.code() == StatusCode::kUnsupported);
  CHECK(contains(status, "smaller than its bound in dim 1"));
}

TEST_CASE("Reshape that merges a bounded tensor's dims is unsupported at Session creation") {
  onnx::ModelProto model = nonzero_reader_model("Reshape", "flat", {12});
  add_int64_initializer(model.mutable_graph(), "flat", {1}, {12});
  auto session = Session::create(load(model), SessionOptions{});
  REQUIRE_FALSE(session.has_value());
  CHECK(session.status().code() == StatusCode::kUnsupported);
  CHECK(contains(session.status(), "merges or splits its dims"));
}

// NonZero of a 1-D x → Squeeze → Gather(x, positions): x's values that are nonzero, in order,
// with the actual length each run.
TEST_CASE("NonZero -> Squeeze -> Gather: the nonzero values, the length per run") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {6});
  add_node(graph, "NonZero", {"x"}, {"nz"}, "nonzero");
  add_int64_initializer(graph, "axes", {1}, {0});
  add_node(graph, "Squeeze", {"nz", "axes"}, {"positions"}, "squeeze");
  add_node(graph, "Gather", {"x", "positions"}, {"values"}, "gather");
  set_type(graph->add_output(), "values", onnx::TensorProto::FLOAT, {6});
  auto session = Session::create(load(model), SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  for (const auto& [x, expected] : std::vector<std::pair<std::vector<float>, std::vector<float>>>{
           {{0, 2, 0, -3, 0, 5}, {2, -3, 5}},
           {{0, 0, 0, 0, 0, 0}, {}},
           {{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}}}) {
    std::vector<float> input_values = x;
    std::vector<float> out(6, -1);
    const TensorView input{input_values.data(), DType::kFloat32, Shape{6}, Device{}};
    const TensorView output{out.data(), DType::kFloat32, Shape{6}, Device{}};
    const Status status = (*session)->run({&input, 1}, {&output, 1});
    REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    CHECK((*session)->output_shape(0) == Shape{static_cast<int64_t>(expected.size())});
    out.resize(expected.size());
    CHECK(out == expected);
  }
}

}  // namespace onepool

namespace onepool {

// x[x != 0] as PyTorch exports it (NonZero -> Transpose -> GatherND), then the same positions
// into a smaller table: an index past its dim is kOutOfRange naming the tuple, never a wild read.
TEST_CASE("NonZero -> Transpose -> GatherND: masked values, and an index past the data") {
  for (const bool small_table : {false, true}) {
    CAPTURE(small_table);
    onnx::ModelProto model = new_model();
    auto* graph = model.mutable_graph();
    add_input(graph, "x", {2, 3});
    add_node(graph, "NonZero", {"x"}, {"nz"}, "nonzero");
    auto* transpose = add_node(graph, "Transpose", {"nz"}, {"positions"}, "transpose");
    auto* perm = transpose->add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    perm->add_ints(1);
    perm->add_ints(0);
    if (small_table) add_float_initializer(graph, "table", {2, 2}, {10, 11, 12, 13});
    add_node(graph, "GatherND", {small_table ? "table" : "x", "positions"}, {"values"}, "gather");
    set_type(graph->add_output(), "values", onnx::TensorProto::FLOAT, {6});
    auto session = Session::create(load(model), SessionOptions{});
    REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
    std::vector<float> x{0, 2, 0, 4, 0, 6};
    std::vector<float> out(6, -1);
    const TensorView input{x.data(), DType::kFloat32, Shape{2, 3}, Device{}};
    const TensorView output{out.data(), DType::kFloat32, Shape{6}, Device{}};
    const Status status = (*session)->run({&input, 1}, {&output, 1});
    if (small_table) {
      CHECK(status.code() == StatusCode::kOutOfRange);  // (1, 2): column 2 of a 2-column table
      CHECK(contains(status, "index 2 of tuple 2 is out of range for data dim 1"));
      continue;
    }
    REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    CHECK((*session)->output_shape(0) == Shape{3});
    out.resize(3);
    CHECK(out == std::vector<float>{2, 4, 6});
  }
}

}  // namespace onepool

namespace onepool {

// cond ? Relu(x) [4] : x's first two elements [2] (a Slice with constant bounds): the If's output
// is planned at [4] and each run reports the taken branch's shape.
TEST_CASE("If whose branches yield different shapes: planned at the larger, actual per run") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "cond", {}, onnx::TensorProto::BOOL);
  add_input(graph, "x", {4});
  onnx::GraphProto then_branch = branch("then");
  add_node(&then_branch, "Relu", {"x"}, {"relu"}, "relu");
  add_output(&then_branch, "relu", {4});
  onnx::GraphProto else_branch = branch("else");
  add_int64_initializer(&else_branch, "starts", {1}, {0});
  add_int64_initializer(&else_branch, "ends", {1}, {2});
  add_node(&else_branch, "Slice", {"x", "starts", "ends"}, {"head"}, "slice");
  add_output(&else_branch, "head", {2});
  add_if(graph, "choose", "cond", {"y"}, then_branch, else_branch);
  add_output(graph, "y", {4});
  auto loaded = load(model);
  CHECK(loaded->outputs()[0].shape == Shape{4});
  CHECK(loaded->outputs()[0].bound.find("at most [4]") != std::string::npos);
  auto session = Session::create(loaded, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<float> x{-1, 2, -3, 4};
  for (const bool take_then : {true, false, true}) {
    CAPTURE(take_then);
    bool cond = take_then;
    std::vector<float> out(4, 9);
    const std::vector<TensorView> inputs{TensorView{&cond, DType::kBool, Shape{}, Device{}},
                                         TensorView{x.data(), DType::kFloat32, Shape{4}, Device{}}};
    const TensorView output{out.data(), DType::kFloat32, Shape{4}, Device{}};
    const Status status = (*session)->run(inputs, {&output, 1});
    REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    if (take_then) {
      CHECK((*session)->output_shape(0) == Shape{4});
      CHECK(out == std::vector<float>{0, 2, 0, 4});
    } else {
      CHECK((*session)->output_shape(0) == Shape{2});
      out.resize(2);
      CHECK(out == std::vector<float>{-1, 2});
    }
  }
}

}  // namespace onepool
