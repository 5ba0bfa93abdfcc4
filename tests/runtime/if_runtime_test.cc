// If with a runtime condition on the CPU: each branch a nested plan inside the If's workspace.
// The condition picks the branch on every run of one Session; branches read outer values and
// main-graph weights, return outer values and constants, nest runtime Ifs; branches that disagree
// on an output's dtype or shape are clear errors.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/if_model_builder.h"

namespace onepool {

using namespace if_models;  // NOLINT(build/namespaces): the test helpers

namespace {

// One Session over `model` (inputs: cond bool [], x float [6]); run() feeds both and returns
// each float output.
class IfRunner {
 public:
  explicit IfRunner(const onnx::ModelProto& model, int threads = 1) {
    auto graph = import_model(model);
    REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
    for (ValueId id : graph->outputs) shapes_.push_back(graph->values[id].shape);
    auto loaded = Model::from_graph(std::move(graph).value(), LoadOptions{});
    REQUIRE_MESSAGE(loaded.has_value(), loaded.status().to_string());
    model_ = *loaded;
    SessionOptions options;
    options.threads = threads;
    auto session = Session::create(model_, options);
    REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
    session_ = std::move(session).value();
  }

  std::vector<std::vector<float>> run(bool condition, std::vector<float> x) {
    bool cond = condition;
    std::vector<TensorView> inputs;
    for (const TensorInfo& info : model_->inputs()) {
      if (info.name == "cond") {
        inputs.push_back(TensorView{&cond, DType::kBool, Shape{}, Device{}});
      } else {
        inputs.push_back(TensorView{x.data(), DType::kFloat32, Shape{6}, Device{}});
      }
    }
    std::vector<std::vector<float>> outputs;
    for (const Shape& shape : shapes_) outputs.emplace_back(shape.element_count());
    std::vector<TensorView> views;
    for (size_t i = 0; i < outputs.size(); ++i) {
      views.push_back(TensorView{outputs[i].data(), DType::kFloat32, shapes_[i], Device{}});
    }
    const Status status = session_->run(inputs, views);
    REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    return outputs;
  }

  const Plan& plan() const { return session_->plan(); }

 private:
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Session> session_;
  std::vector<Shape> shapes_;
};

onnx::ModelProto runtime_chain_model() {
  onnx::ModelProto model = two_chain_model(true);
  model.mutable_graph()->clear_initializer();
  add_input(model.mutable_graph(), "cond", {}, onnx::TensorProto::BOOL);
  return model;
}

const std::vector<float> kX = {-2, -1, 0, 1, 2, 3};
const std::vector<float> kThen = {2, 1, 0, 0, 0, 0};  // Relu(Neg(x))
const std::vector<float> kElse = {0, 0, 0, 2, 4, 6};  // Abs(x) + x

}  // namespace

// cond fed by the caller: one Session alternates between the branches (both live in the same
// region of the pool), at 1 and 3 threads.
TEST_CASE("runtime If: the condition picks the branch on every run") {
  for (int threads : {1, 3}) {
    IfRunner runner(runtime_chain_model(), threads);
    CHECK(runner.run(true, kX)[0] == kThen);
    CHECK(runner.run(false, kX)[0] == kElse);
    CHECK(runner.run(true, kX)[0] == kThen);
    CHECK(runner.run(false, {3, 2, 1, 0, -1, -2})[0] == std::vector<float>{6, 4, 2, 0, 0, 0});
  }
}

// The Session's plan lists both branch plans with their tensors, each inside the If's workspace
// record; they survive the JSON round trip, and verify() rejects one larger than the region and
// a branch whose own tensors collide.
TEST_CASE("runtime If: the plan lists both branch plans inside the If's workspace") {
  IfRunner runner(runtime_chain_model());
  const Plan& plan = runner.plan();
  REQUIRE(plan.nested.size() == 2);
  CHECK(plan.nested[0].node == "choose");
  CHECK(plan.nested[0].body == "then_branch");
  CHECK(plan.nested[1].body == "else_branch");
  CHECK(plan.nested[0].pool_bytes > 0);
  CHECK(plan.nested[0].tensor_count >= 2);
  CHECK(plan.verify().is_ok());
  auto loaded = Plan::from_json(plan.to_json());
  REQUIRE_MESSAGE(loaded.has_value(), loaded.status().to_string());
  REQUIRE(loaded->nested.size() == 2);
  CHECK(loaded->nested[1].pool_bytes == plan.nested[1].pool_bytes);
  CHECK(loaded->nested[1].lower_bound_bytes == plan.nested[1].lower_bound_bytes);
  for (size_t n = 0; n < plan.nested.size(); ++n) {
    const NestedPlan& nested = plan.nested[n];
    REQUIRE(nested.tensors.size() == nested.tensor_count);
    REQUIRE(loaded->nested[n].tensors.size() == nested.tensors.size());
    for (size_t i = 0; i < nested.tensors.size(); ++i) {
      CHECK(loaded->nested[n].tensors[i].name == nested.tensors[i].name);
      CHECK(loaded->nested[n].tensors[i].offset == nested.tensors[i].offset);
      CHECK(loaded->nested[n].tensors[i].bytes == nested.tensors[i].bytes);
      CHECK(nested.tensors[i].offset + nested.tensors[i].bytes <= nested.pool_bytes);
    }
  }
  REQUIRE(plan.region_of(plan.nested[0]) != nullptr);
  CHECK(plan.region_of(plan.nested[0])->name == "choose:workspace");
  Plan oversized = plan;
  oversized.nested[1].pool_bytes = plan.pool_bytes + 1;
  CHECK(contains(oversized.verify(), "nested plan choose/else_branch needs"));
  // Two owning tensors of the then branch moved onto one address while both are live.
  Plan colliding = plan;
  std::vector<PlannedTensor>& tensors = colliding.nested[0].tensors;
  bool moved = false;
  for (size_t i = 0; i < tensors.size() && !moved; ++i) {
    for (size_t j = i + 1; j < tensors.size() && !moved; ++j) {
      PlannedTensor& a = tensors[i];
      PlannedTensor& b = tensors[j];
      const bool owners = a.alias_of < 0 && b.alias_of < 0 && a.bytes > 0 && b.bytes > 0;
      if (owners && a.first <= b.last && b.first <= a.last) {
        b.offset = a.offset;
        moved = true;
      }
    }
  }
  REQUIRE(moved);
  CHECK(contains(colliding.verify(), "nested plan choose/then_branch: "));
  Plan miscounted = plan;
  miscounted.nested[0].tensor_count += 1;
  CHECK(contains(miscounted.verify(), "lists "));
}

// cond = ReduceSum(x) > 0, computed in the graph: x sums to 3 (then), -x to -3 (else).
TEST_CASE("runtime If: a condition computed from the input's values") {
  onnx::ModelProto model = two_chain_model(true);
  auto* graph = model.mutable_graph();
  graph->clear_initializer();
  add_float_initializer(graph, "zero", {}, {0.0f});
  onnx::NodeProto if_node = graph->node(0);
  graph->clear_node();
  auto* sum = add_node(graph, "ReduceSum", {"x"}, {"x_sum"});
  auto* keepdims = sum->add_attribute();
  keepdims->set_name(std::string("keepdims"));
  keepdims->set_type(onnx::AttributeProto::INT);
  keepdims->set_i(0);
  add_node(graph, "Greater", {"x_sum", "zero"}, {"cond"});
  *graph->add_node() = if_node;
  IfRunner runner(model);
  CHECK(runner.run(true, kX)[0] == kThen);
  CHECK(runner.run(true, {2, 1, 0, -1, -2, -3})[0] == std::vector<float>{4, 2, 0, 0, 0, 0});
}

// Outputs: then = (x itself, a branch constant, x * w); else = (Neg(x), x * w, a main-graph
// weight). w is a main-graph initializer read inside both branches; a branch output may be an
// outer value or a constant.
TEST_CASE("runtime If: outer values, constants and main-graph weights as branch outputs") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "cond", {}, onnx::TensorProto::BOOL);
  add_input(graph, "x", {6});
  add_float_initializer(graph, "w", {6}, {1, 2, 3, 4, 5, 6});
  for (const char* name : {"y0", "y1", "y2"}) add_output(graph, name, {6});
  onnx::GraphProto then_branch = branch("then");
  add_float_initializer(&then_branch, "ones", {6}, {1, 1, 1, 1, 1, 1});
  add_node(&then_branch, "Mul", {"x", "w"}, {"then_scaled"});
  add_output(&then_branch, "x", {6});
  add_output(&then_branch, "ones", {6});
  add_output(&then_branch, "then_scaled", {6});
  onnx::GraphProto else_branch = branch("else");
  add_node(&else_branch, "Neg", {"x"}, {"else_negated"});
  add_node(&else_branch, "Mul", {"x", "w"}, {"else_scaled"});
  add_output(&else_branch, "else_negated", {6});
  add_output(&else_branch, "else_scaled", {6});
  add_output(&else_branch, "w", {6});
  add_if(graph, "choose", "cond", {"y0", "y1", "y2"}, then_branch, else_branch);
  IfRunner runner(model);
  const auto then_out = runner.run(true, kX);
  CHECK(then_out[0] == kX);
  CHECK(then_out[1] == std::vector<float>{1, 1, 1, 1, 1, 1});
  CHECK(then_out[2] == std::vector<float>{-2, -2, 0, 4, 10, 18});
  const auto else_out = runner.run(false, kX);
  CHECK(else_out[0] == std::vector<float>{2, 1, 0, -1, -2, -3});
  CHECK(else_out[1] == std::vector<float>{-2, -2, 0, 4, 10, 18});
  CHECK(else_out[2] == std::vector<float>{1, 2, 3, 4, 5, 6});
}

// The then branch holds a second runtime If on ReduceMax(x) > 2 (Relu or Sigmoid of Neg(x)),
// which reads a value of the outer branch (negated) and the graph input x.
TEST_CASE("runtime If: a runtime If nested in a branch") {
  onnx::ModelProto model = runtime_chain_model();
  auto* graph = model.mutable_graph();
  onnx::GraphProto inner_then = branch("inner_then");
  add_node(&inner_then, "Relu", {"negated"}, {"inner_relu"});
  add_output(&inner_then, "inner_relu", {6});
  onnx::GraphProto inner_else = branch("inner_else");
  add_node(&inner_else, "Add", {"negated", "x"}, {"inner_zero"});
  add_output(&inner_else, "inner_zero", {6});
  onnx::GraphProto outer_then = branch("outer_then");
  add_node(&outer_then, "Neg", {"x"}, {"negated"});
  auto* max = add_node(&outer_then, "ReduceMax", {"x"}, {"x_max"});
  auto* keepdims = max->add_attribute();
  keepdims->set_name(std::string("keepdims"));
  keepdims->set_type(onnx::AttributeProto::INT);
  keepdims->set_i(0);
  add_float_initializer(&outer_then, "two", {}, {2.0f});
  add_node(&outer_then, "Greater", {"x_max", "two"}, {"peaked"});
  add_if(&outer_then, "inner", "peaked", {"outer_out"}, inner_then, inner_else);
  add_output(&outer_then, "outer_out", {6});
  onnx::GraphProto outer_else = branch("outer_else");
  add_node(&outer_else, "Abs", {"x"}, {"magnitude"});
  add_output(&outer_else, "magnitude", {6});
  graph->clear_node();
  add_if(graph, "outer", "cond", {"y"}, outer_then, outer_else);
  IfRunner runner(model);
  CHECK(runner.run(true, kX)[0] == kThen);           // max 3 > 2: Relu(-x)
  CHECK(runner.run(true, {1, 0, -1, 2, 1, 0})[0] ==  // max 2: -x + x
        std::vector<float>{0, 0, 0, 0, 0, 0});
  CHECK(runner.run(false, kX)[0] == std::vector<float>{2, 1, 0, 1, 2, 3});
}

// Branches that disagree on an output: a different dtype is an invalid model, a different shape
// is not supported yet; both name the node, the output and what each branch yields.
TEST_CASE("runtime If: branches that disagree on an output are clear errors") {
  onnx::ModelProto dtypes = runtime_chain_model();
  auto* cast = dtypes.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  auto* to = add_node(cast, "Cast", {"else_out"}, {"else_int"})->add_attribute();
  to->set_name(std::string("to"));
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::INT64);
  cast->mutable_output(0)->set_name(std::string("else_int"));
  cast->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  const Status dtype_status = import_model(dtypes).status();
  CHECK(dtype_status.code() == StatusCode::kInvalidModel);
  CHECK(contains(dtype_status,
                 "node 'choose' (If): output 0 ('y'): then_branch yields float32 "
                 "[6], else_branch int64 [6]"));

  onnx::ModelProto shapes = runtime_chain_model();
  auto* reshape_branch = shapes.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  onnx::TensorProto shape;
  shape.set_name(std::string("three_by_two"));
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(2);
  shape.add_int64_data(3);
  shape.add_int64_data(2);
  *reshape_branch->add_initializer() = shape;
  add_node(reshape_branch, "Reshape", {"else_out", "three_by_two"}, {"else_matrix"});
  reshape_branch->mutable_output(0)->set_name(std::string("else_matrix"));
  reshape_branch->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  const Status shape_status = import_model(shapes).status();
  CHECK(shape_status.code() == StatusCode::kUnsupported);
  CHECK(contains(shape_status, "then_branch yields float32 [6], else_branch float32 [3,2]"));
  CHECK(contains(shape_status, "different ranks is not supported"));
}

// A condition that is not one bool is an invalid model naming it.
TEST_CASE("runtime If: a condition that is not one bool") {
  onnx::ModelProto model = two_chain_model(true);
  model.mutable_graph()->clear_initializer();
  add_input(model.mutable_graph(), "cond", {2}, onnx::TensorProto::BOOL);
  const Status status = import_model(model).status();
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status,
                 "node 'choose' (If): condition 'cond' must be a bool tensor of one "
                 "element, got bool [2]"));
}

}  // namespace onepool
