// If nodes whose condition is known at load: import replaces each with its chosen branch, so the
// Graph has no If and the model runs on kernels the runtime already has. A runtime condition and
// a malformed constant condition are clear errors.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/if_model_builder.h"

namespace onepool {

using namespace if_models;  // NOLINT(build/namespaces): the test helpers

// cond = true: the Graph is Neg → Relu (no If, no Abs/Add); x = [-2,-1,0,1,2,3] gives
// y = [2,1,0,0,0,0]. cond = false: Abs → Add, y = [0,0,0,2,4,6].
TEST_CASE("inline If: a constant condition selects its branch") {
  const std::vector<float> x = {-2, -1, 0, 1, 2, 3};
  auto then_graph = import_model(two_chain_model(true));
  REQUIRE_MESSAGE(then_graph.has_value(), then_graph.status().to_string());
  CHECK(op_types(*then_graph) == Names{"Neg", "Relu"});
  CHECK(then_graph->values[then_graph->outputs.at(0)].name == "y");
  CHECK(then_graph->values[then_graph->outputs.at(0)].shape == Shape{6});
  CHECK(run_graph(std::move(then_graph).value(), x)[0] == std::vector<float>{2, 1, 0, 0, 0, 0});

  auto else_graph = import_model(two_chain_model(false));
  REQUIRE_MESSAGE(else_graph.has_value(), else_graph.status().to_string());
  CHECK(op_types(*else_graph) == Names{"Abs", "Add"});
  CHECK(run_graph(std::move(else_graph).value(), x)[0] == std::vector<float>{0, 0, 0, 2, 4, 6});

  // Without folding the initializer condition is still constant, so the If is still inlined.
  ImportOptions no_fold;
  no_fold.fold_constants = false;
  auto unfolded = import_model(two_chain_model(true), no_fold);
  REQUIRE_MESSAGE(unfolded.has_value(), unfolded.status().to_string());
  CHECK(op_types(*unfolded) == Names{"Neg", "Relu"});
}

// The small MLP head: h = Relu(x · W1); If(Shape(x)[1] == 4) then y = h · W2 + b2 else y = h · W3.
// x is a static float[1,4], so the condition folds to true at load and the If is inlined with
// the Shape/Gather/Equal chain gone. x = [1,2,3,4], W1 = [[1,0],[0,1],[1,0],[0,-1]] gives
// h = Relu([4,-2]) = [4,0]; W2 = [[1,2],[3,4]], b2 = [0.5,-0.5] gives y = [4.5, 7.5].
TEST_CASE("inline If: a condition computed at load from Shape of a static input") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {1, 4});
  add_output(graph, "y", {1, 2});
  add_float_initializer(graph, "W1", {4, 2}, {1, 0, 0, 1, 1, 0, 0, -1});
  add_float_initializer(graph, "W2", {2, 2}, {1, 2, 3, 4});
  add_float_initializer(graph, "W3", {2, 2}, {-1, -1, -1, -1});
  add_float_initializer(graph, "b2", {2}, {0.5f, -0.5f});
  onnx::TensorProto one;
  one.set_name("one");
  one.set_data_type(onnx::TensorProto::INT64);
  one.add_int64_data(1);
  *graph->add_initializer() = one;
  onnx::TensorProto four = one;
  four.set_name("four");
  four.set_int64_data(0, 4);
  *graph->add_initializer() = four;
  add_node(graph, "MatMul", {"x", "W1"}, {"xw"});
  add_node(graph, "Relu", {"xw"}, {"h"});
  add_node(graph, "Shape", {"x"}, {"x_shape"});
  add_node(graph, "Gather", {"x_shape", "one"}, {"features"});
  add_node(graph, "Equal", {"features", "four"}, {"is_four"});
  onnx::GraphProto then_branch = branch("head");
  add_node(&then_branch, "MatMul", {"h", "W2"}, {"hw"});
  add_node(&then_branch, "Add", {"hw", "b2"}, {"head_out"});
  add_output(&then_branch, "head_out", {1, 2});
  onnx::GraphProto else_branch = branch("fallback");
  add_node(&else_branch, "MatMul", {"h", "W3"}, {"fallback_out"});
  add_output(&else_branch, "fallback_out", {1, 2});
  add_if(graph, "head_if", "is_four", {"y"}, then_branch, else_branch);

  auto imported = import_model(model);
  REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
  CHECK(op_types(*imported) == Names{"MatMul", "Relu", "MatMul", "Add"});
  CHECK(imported->values[imported->outputs.at(0)].shape == Shape{1, 2});
  CHECK(run_graph(std::move(imported).value(), {1, 2, 3, 4})[0] == std::vector<float>{4.5f, 7.5f});
}

namespace {

// Two If outputs. then: y1 = h * w + c (h = Relu(x) from the outer scope, w a branch initializer,
// c a Constant node), y2 = w (the initializer itself is the output). else: y1 = h, y2 = x (both
// outer-scope values, so each needs an Identity).
onnx::ModelProto scope_model(bool condition) {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {3});
  add_output(graph, "y1", {3});
  add_output(graph, "y2", {3});
  add_bool_initializer(graph, "cond", {1}, {condition ? 1 : 0});
  add_node(graph, "Relu", {"x"}, {"h"});
  onnx::GraphProto then_branch = branch("then");
  add_float_initializer(&then_branch, "w", {3}, {1, 2, 3});
  auto* constant = add_node(&then_branch, "Constant", {}, {"c"});
  auto* value = constant->add_attribute();
  value->set_name(std::string("value"));
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = float_tensor("", {3}, {10, 20, 30});
  add_node(&then_branch, "Mul", {"h", "w"}, {"hw"});
  add_node(&then_branch, "Add", {"hw", "c"}, {"sum"});
  add_output(&then_branch, "sum", {3});
  add_output(&then_branch, "w", {3});
  onnx::GraphProto else_branch = branch("else");
  add_output(&else_branch, "h", {3});
  add_output(&else_branch, "x", {3});
  add_if(graph, "scoped", "cond", {"y1", "y2"}, then_branch, else_branch);
  return model;
}

}  // namespace

// x = [-1,2,3], h = Relu(x) = [0,2,3]. then: y1 = [0,4,9] + [10,20,30] = [10,24,39],
// y2 = w = [1,2,3]; the branch's w and c become renamed main-graph weights. else: y1 = h =
// [0,2,3], y2 = x = [-1,2,3], each through an Identity.
TEST_CASE("inline If: outer-scope reads, branch initializers and Constant nodes") {
  const std::vector<float> x = {-1, 2, 3};
  auto then_graph = import_model(scope_model(true));
  REQUIRE_MESSAGE(then_graph.has_value(), then_graph.status().to_string());
  CHECK(!has_op(*then_graph, "If"));
  CHECK(!has_op(*then_graph, "Constant"));
  CHECK(has_op(*then_graph, "Mul"));
  CHECK(then_graph->find_value("scoped/w") != kNoValue);
  CHECK(then_graph->find_value("w") == kNoValue);
  auto then_out = run_graph(std::move(then_graph).value(), x);
  CHECK(then_out[0] == std::vector<float>{10, 24, 39});
  CHECK(then_out[1] == std::vector<float>{1, 2, 3});

  auto else_graph = import_model(scope_model(false));
  REQUIRE_MESSAGE(else_graph.has_value(), else_graph.status().to_string());
  CHECK(op_types(*else_graph) == Names{"Relu", "Identity", "Identity"});
  auto else_out = run_graph(std::move(else_graph).value(), x);
  CHECK(else_out[0] == std::vector<float>{0, 2, 3});
  CHECK(else_out[1] == std::vector<float>{-1, 2, 3});
}

// The branch defines "t" and "If_main/t", names the main graph also defines after the If (ONNX
// allows that: they are not in scope where the If is), and a node named like a main-graph node.
// Each branch name gets a fresh one: "t" → "If_main/t_1" since "If_main/t" is taken.
// x = [1,2]: branch t = x + x = [2,4], If_main/t = t * t = [4,16] → y; then the main graph's
// t = Neg(y) = [-4,-16], If_main/t = Relu(t) = [0,0], z = y + If_main/t → [4,16].
TEST_CASE("inline If: branch names that collide with main-graph names are renamed") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2});
  add_output(graph, "z", {2});
  add_bool_initializer(graph, "cond", {}, {1});
  onnx::GraphProto then_branch = branch("then");
  add_node(&then_branch, "Add", {"x", "x"}, {"t"}, "n1");
  add_node(&then_branch, "Mul", {"t", "t"}, {"If_main/t"}, "n2");
  add_output(&then_branch, "If_main/t", {2});
  onnx::GraphProto else_branch = branch("else");
  add_output(&else_branch, "x", {2});
  add_if(graph, "If_main", "cond", {"y"}, then_branch, else_branch);
  add_node(graph, "Neg", {"y"}, {"t"}, "n1");
  add_node(graph, "Relu", {"t"}, {"If_main/t"}, "n2");
  add_node(graph, "Add", {"y", "If_main/t"}, {"z"}, "n3");

  auto imported = import_model(model);
  REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
  CHECK(op_types(*imported) == Names{"Add", "Mul", "Neg", "Relu", "Add"});
  CHECK(imported->find_value("If_main/t_1") != kNoValue);
  CHECK(imported->nodes.at(0).name == "If_main/n1");
  CHECK(run_graph(std::move(imported).value(), {1, 2})[0] == std::vector<float>{4, 16});
}

// An If inside the chosen branch, whose condition is a Constant node of the outer branch: the
// outer If is inlined in one round, the inner one in the next. x = [1,-2]: inner then = Neg(x) =
// [-1,2], outer output y = Relu(inner) = [0,2].
TEST_CASE("inline If: an If nested in the chosen branch is inlined too") {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2});
  add_output(graph, "y", {2});
  add_bool_initializer(graph, "cond", {}, {1});
  onnx::GraphProto inner_then = branch("inner_then");
  add_node(&inner_then, "Neg", {"x"}, {"negated"});
  add_output(&inner_then, "negated", {2});
  onnx::GraphProto inner_else = branch("inner_else");
  add_node(&inner_else, "Abs", {"x"}, {"magnitude"});
  add_output(&inner_else, "magnitude", {2});
  onnx::GraphProto outer_then = branch("outer_then");
  auto* constant = add_node(&outer_then, "Constant", {}, {"inner_cond"});
  auto* value = constant->add_attribute();
  value->set_name(std::string("value"));
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  value->mutable_t()->add_int32_data(1);
  add_if(&outer_then, "inner", "inner_cond", {"inner_out"}, inner_then, inner_else);
  add_node(&outer_then, "Relu", {"inner_out"}, {"outer_out"});
  add_output(&outer_then, "outer_out", {2});
  onnx::GraphProto outer_else = branch("outer_else");
  add_output(&outer_else, "x", {2});
  add_if(graph, "outer", "cond", {"y"}, outer_then, outer_else);

  auto imported = import_model(model);
  REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
  CHECK(op_types(*imported) == Names{"Neg", "Relu"});
  CHECK(imported->nodes.at(0).name == "outer/inner/Neg_0");
  CHECK(run_graph(std::move(imported).value(), {1, -2})[0] == std::vector<float>{0, 2});
}

// A condition fed by the caller, or computed from the input's values, cannot be chosen at load:
// the If stays, with its two branches as Graphs whose inputs are the outer values they read
// (tests/runtime/if_runtime_test.cc runs them).
TEST_CASE("inline If: a runtime condition keeps the If with its branches") {
  onnx::ModelProto model = two_chain_model(true);
  model.mutable_graph()->clear_initializer();
  add_input(model.mutable_graph(), "cond", {}, onnx::TensorProto::BOOL);
  auto imported = import_model(model);
  REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
  REQUIRE(op_types(*imported) == Names{"If"});
  const Node& node = imported->nodes.at(0);
  CHECK(node.domain.empty());
  REQUIRE(node.subgraphs.size() == 2);
  // Inputs: the condition, then x (read by both branches).
  REQUIRE(node.inputs.size() == 2);
  CHECK(imported->values[node.inputs[1]].name == "x");
  CHECK(imported->values[node.outputs.at(0)].shape == Shape{6});
  CHECK(op_types(*node.subgraphs[0]) == Names{"Neg", "Relu"});
  CHECK(op_types(*node.subgraphs[1]) == Names{"Abs", "Add"});
  CHECK(node.subgraphs[0]->values[node.subgraphs[0]->inputs.at(0)].name == "x");
}

// A constant condition that is not one bool: kInvalidModel naming the node, the tensor and what
// it is ("float32 []", "bool [2]").
TEST_CASE("inline If: a constant condition that is not one bool is an invalid model") {
  onnx::ModelProto float_condition = two_chain_model(true);
  float_condition.mutable_graph()->clear_initializer();
  add_float_initializer(float_condition.mutable_graph(), "cond", {}, {1.0f});
  const Status float_status = import_model(float_condition).status();
  CHECK(float_status.code() == StatusCode::kInvalidModel);
  CHECK(contains(float_status,
                 "node 'choose' (If): condition 'cond' must be a bool tensor of "
                 "one element, got float"));

  onnx::ModelProto pair_condition = two_chain_model(true);
  pair_condition.mutable_graph()->clear_initializer();
  add_bool_initializer(pair_condition.mutable_graph(), "cond", {2}, {1, 0});
  const Status pair_status = import_model(pair_condition).status();
  CHECK(pair_status.code() == StatusCode::kInvalidModel);
  CHECK(contains(pair_status, "node 'choose' (If)"));
  CHECK(contains(pair_status, "bool [2]"));
}

}  // namespace onepool
