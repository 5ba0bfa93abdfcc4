// build_plan on a hand-built graph, Plan JSON round trip, Plan::verify failure injection.
#include "onepool/plan.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "planner/analysis/build_plan.h"
#include "planner/core/graph.h"

namespace onepool {
namespace {

ValueId add(Graph& graph, const char* name, ValueKind kind, Shape shape) {
  Value value;
  value.name = name;
  value.dtype = DType::kFloat32;
  value.shape = shape;
  value.kind = kind;
  return graph.add_value(value);
}

void add_node(Graph& graph, const char* name, const char* op, std::vector<ValueId> inputs,
              std::vector<ValueId> outputs) {
  Node node;
  node.name = name;
  node.op_type = op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  graph.nodes.push_back(std::move(node));
}

// A chain of 4 nodes: relu0(x) -> a; mul1(a, w) -> b, dead; add2(b, x) -> c; sig3(c) -> y.
// x, a, b, y are float32 [1,8] (32 B -> 256 aligned), dead [1,4], c [2,64] (512 B), w a weight.
Graph chain_graph() {
  Graph graph;
  const ValueId x = add(graph, "x", ValueKind::kGraphInput, {1, 8});
  const ValueId w = add(graph, "w", ValueKind::kWeight, {1, 8});
  graph.values[static_cast<size_t>(w)].weight_index = 0;
  HostTensor weight;
  weight.dtype = DType::kFloat32;
  weight.shape = {1, 8};
  weight.data.resize(32);
  graph.weights.push_back(weight);
  const ValueId a = add(graph, "a", ValueKind::kActivation, {1, 8});
  const ValueId b = add(graph, "b", ValueKind::kActivation, {1, 8});
  const ValueId dead = add(graph, "dead", ValueKind::kActivation, {1, 4});
  const ValueId c = add(graph, "c", ValueKind::kActivation, {2, 64});
  const ValueId y = add(graph, "y", ValueKind::kActivation, {1, 8});
  graph.values[static_cast<size_t>(y)].is_graph_output = true;
  graph.inputs = {x};
  graph.outputs = {y};
  add_node(graph, "relu0", "Relu", {x}, {a});
  add_node(graph, "mul1", "Mul", {a, w}, {b, dead});
  add_node(graph, "add2", "Add", {b, x}, {c});
  add_node(graph, "sig3", "Sigmoid", {c}, {y});
  graph.rebuild_edges();
  return graph;
}

Plan chain_plan() {
  NodeMemoryNeeds needs;
  needs.workspace_bytes = {0, 0, 1000, 0};
  auto plan = build_plan(chain_graph(), PlanOptions{}, needs);
  REQUIRE_MESSAGE(plan.has_value(), plan.status().to_string());
  return *plan;
}

const PlannedTensor& tensor_named(const Plan& plan, const std::string& name) {
  for (const PlannedTensor& tensor : plan.tensors) {
    if (tensor.name == name) return tensor;
  }
  FAIL("no tensor named ", name);
  return plan.tensors.front();
}

void check_same_tensor(const PlannedTensor& a, const PlannedTensor& b) {
  CHECK(a.id == b.id);
  CHECK(a.name == b.name);
  CHECK(a.producer_op == b.producer_op);
  CHECK(a.dtype == b.dtype);
  CHECK(a.shape == b.shape);
  CHECK(a.bytes == b.bytes);
  CHECK(a.offset == b.offset);
  CHECK(a.first == b.first);
  CHECK(a.last == b.last);
  CHECK(a.alias_of == b.alias_of);
  CHECK(a.alias_offset == b.alias_offset);
  CHECK(a.workspace_node == b.workspace_node);
}

}  // namespace

// Lifetimes: x 0-2 (input, read at steps 0 and 2), a 0-1, b 1-2, dead 1-1 (no reader), c 2-3,
// y 3-3 (output to the last step), add2's 1000 B workspace -> 1024 B at step 2. The weight w is
// not planned. Live at step 2: x 256 + b 256 + c 512 + workspace 1024 = 2048 = LB; naive 2816.
// Greedy by size reaches 2048, so the plan is optimal and verified.
TEST_CASE("build_plan on a 4-node chain: lifetimes, workspace, bounds") {
  const Plan plan = chain_plan();
  REQUIRE(plan.steps.size() == 4);
  CHECK(plan.steps[1].node == "mul1");
  CHECK(plan.steps[1].op == "Mul");
  CHECK(plan.tensors.size() == 7);
  const PlannedTensor& x = tensor_named(plan, "x");
  CHECK(x.producer_op == "input");
  CHECK(x.first == 0);
  CHECK(x.last == 2);
  CHECK(x.bytes == 256);
  CHECK(x.dtype == DType::kFloat32);
  CHECK(x.shape == Shape{1, 8});
  CHECK(tensor_named(plan, "a").first == 0);
  CHECK(tensor_named(plan, "a").last == 1);
  CHECK(tensor_named(plan, "a").producer_op == "Relu");
  CHECK(tensor_named(plan, "b").first == 1);
  CHECK(tensor_named(plan, "b").last == 2);
  CHECK(tensor_named(plan, "dead").first == 1);
  CHECK(tensor_named(plan, "dead").last == 1);
  CHECK(tensor_named(plan, "c").bytes == 512);
  CHECK(tensor_named(plan, "c").last == 3);
  CHECK(tensor_named(plan, "y").first == 3);
  CHECK(tensor_named(plan, "y").last == 3);
  const PlannedTensor& workspace = tensor_named(plan, "add2:workspace");
  CHECK(workspace.id == -1);
  CHECK(workspace.workspace_node == 2);
  CHECK(workspace.first == 2);
  CHECK(workspace.last == 2);
  CHECK(workspace.bytes == 1024);
  CHECK(plan.find_tensor(1) == -1);  // w, a weight
  REQUIRE(plan.find_tensor(0) >= 0);
  CHECK(plan.tensors[static_cast<size_t>(plan.find_tensor(0))].name == "x");
  CHECK(plan.lower_bound_bytes == 2048);
  CHECK(plan.naive_bytes == 2816);
  CHECK(plan.pool_bytes == 2048);
  CHECK(plan.plain_lower_bound_bytes == 2048);  // no sharing declared: the plain plan
  CHECK(plan.plain_pool_bytes == 2048);
  CHECK(plan.optimal);
  CHECK(plan.verified);
  CHECK(plan.algorithm == "auto");
  CHECK(plan.alignment == 256);
}

// Workspace growth: relu0 needs 256 B of scratch and prefers 4096; add2 needs 1000 (1024) and
// prefers 8192. The pool is planned with the minimums (LB 2048 at step 2, where x, b, c and
// add2's workspace fill it). At step 0 only x and a (512 B) are live, so relu0's workspace grows
// into the free bytes: more than 256, at most the 1536 left, on the alignment. Step 2 has no room:
// add2 keeps 1024. The pool, the bounds and the other tensors do not change; the plan verifies.
TEST_CASE("build_plan grows workspaces into the free bytes of their steps") {
  NodeMemoryNeeds needs;
  needs.workspace_bytes = {256, 0, 1000, 0};
  needs.workspace_preferred_bytes = {4096, 0, 8192, 0};
  auto grown = build_plan(chain_graph(), PlanOptions{}, needs);
  REQUIRE_MESSAGE(grown.has_value(), grown.status().to_string());
  needs.workspace_preferred_bytes.clear();
  auto fixed = build_plan(chain_graph(), PlanOptions{}, needs);
  REQUIRE_MESSAGE(fixed.has_value(), fixed.status().to_string());
  CHECK(grown->pool_bytes == 2048);
  CHECK(grown->lower_bound_bytes == 2048);
  CHECK(grown->verified);
  const PlannedTensor& relu_scratch = tensor_named(*grown, "relu0:workspace");
  CHECK(relu_scratch.bytes > 256);
  CHECK(relu_scratch.bytes <= 1536);
  CHECK(relu_scratch.bytes % 256 == 0);
  CHECK(relu_scratch.offset + relu_scratch.bytes <= grown->pool_bytes);
  CHECK(tensor_named(*fixed, "relu0:workspace").bytes == 256);
  CHECK(tensor_named(*grown, "add2:workspace").bytes == 1024);
  for (const char* name : {"x", "a", "b", "c", "y"}) {
    check_same_tensor(tensor_named(*grown, name), tensor_named(*fixed, name));
  }
}

// fast_workspaces plans every workspace at its preferred size instead: relu0 4096 B and add2
// 8192 B, so the pool grows past the 2048 of the minimums (step 2 alone holds 8192 + x, b and c).
TEST_CASE("build_plan with fast workspaces plans the preferred sizes") {
  NodeMemoryNeeds needs;
  needs.workspace_bytes = {256, 0, 1000, 0};
  needs.workspace_preferred_bytes = {4096, 0, 8192, 0};
  PlanOptions options;
  options.fast_workspaces = true;
  auto plan = build_plan(chain_graph(), options, needs);
  REQUIRE_MESSAGE(plan.has_value(), plan.status().to_string());
  CHECK(tensor_named(*plan, "relu0:workspace").bytes == 4096);
  CHECK(tensor_named(*plan, "add2:workspace").bytes == 8192);
  CHECK(plan->lower_bound_bytes == 8192 + 256 + 256 + 512);
  CHECK(plan->pool_bytes >= plan->lower_bound_bytes);
  CHECK(plan->verified);
}

// linear, no workspaces: no reuse, pool == naive == 5 x 256 + 512 = 1792, verified, not optimal.
TEST_CASE("build_plan with the linear algorithm") {
  PlanOptions options;
  options.algorithm = "linear";
  auto plan = build_plan(chain_graph(), options);
  REQUIRE(plan.has_value());
  CHECK(plan->pool_bytes == 1792);  // no workspace here: 5 x 256 + 512
  CHECK(plan->pool_bytes == plan->naive_bytes);
  CHECK_FALSE(plan->optimal);
  CHECK(plan->verified);
}

// Alignment 100 is not a power of two; 3 workspace sizes for 4 nodes; an unknown algorithm.
TEST_CASE("build_plan rejects bad options") {
  PlanOptions options;
  options.alignment = 100;
  auto misaligned = build_plan(chain_graph(), options);
  REQUIRE_FALSE(misaligned.has_value());
  CHECK(misaligned.status().message().find("power of two") != std::string::npos);
  NodeMemoryNeeds needs;
  needs.workspace_bytes = {0, 0, 1};
  auto wrong_count = build_plan(chain_graph(), PlanOptions{}, needs);
  REQUIRE_FALSE(wrong_count.has_value());
  CHECK(wrong_count.status().message().find("expected one per node (4), got 3") !=
        std::string::npos);
  options = PlanOptions{};
  options.algorithm = "nope";
  CHECK_FALSE(build_plan(chain_graph(), options).has_value());
}

// to_json -> from_json gives back every field, including an alias (y viewing c at +256) and
// the workspace; serializing again gives the same text.
TEST_CASE("Plan JSON round trip") {
  Plan plan = chain_plan();
  PlannedTensor alias = tensor_named(plan, "y");
  alias.name = "y_view";
  alias.id = 99;
  alias.alias_of = tensor_named(plan, "c").id;
  alias.alias_offset = 256;
  alias.bytes = 0;
  plan.tensors.push_back(alias);
  plan.planning_ms = 0.123456789;
  REQUIRE(plan.verify().is_ok());
  const std::string json = plan.to_json();
  CHECK(json.find("\"schema_version\": 2") != std::string::npos);
  auto parsed = Plan::from_json(json);
  REQUIRE_MESSAGE(parsed.has_value(), parsed.status().to_string());
  CHECK(parsed->pool_bytes == plan.pool_bytes);
  CHECK(parsed->alignment == plan.alignment);
  CHECK(parsed->lower_bound_bytes == plan.lower_bound_bytes);
  CHECK(parsed->naive_bytes == plan.naive_bytes);
  CHECK(parsed->plain_lower_bound_bytes == plan.plain_lower_bound_bytes);
  CHECK(parsed->plain_pool_bytes == plan.plain_pool_bytes);
  CHECK(parsed->algorithm == plan.algorithm);
  CHECK(parsed->optimal == plan.optimal);
  CHECK(parsed->planning_ms == plan.planning_ms);
  CHECK(parsed->verified == plan.verified);
  REQUIRE(parsed->steps.size() == plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    CHECK(parsed->steps[i].node == plan.steps[i].node);
    CHECK(parsed->steps[i].op == plan.steps[i].op);
  }
  REQUIRE(parsed->tensors.size() == plan.tensors.size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    check_same_tensor(parsed->tensors[i], plan.tensors[i]);
  }
  CHECK(parsed->to_json() == json);
}

// Other schema versions, non-JSON text, a missing field, a negative size, an unknown dtype:
// each is an error whose message says what is wrong.
TEST_CASE("Plan::from_json rejects other versions and malformed documents") {
  std::string json = chain_plan().to_json();
  std::string version3 = json;
  version3.replace(version3.find("\"schema_version\": 2"), 19, "\"schema_version\": 3");
  auto wrong_version = Plan::from_json(version3);
  REQUIRE_FALSE(wrong_version.has_value());
  CHECK(wrong_version.status().message().find("expected schema_version 1 or 2, got 3") !=
        std::string::npos);
  CHECK_FALSE(Plan::from_json("this is not json").has_value());
  CHECK_FALSE(Plan::from_json("[1, 2, 3]").has_value());
  auto missing = Plan::from_json("{\"schema_version\": 1}");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.status().message().find("plan JSON") != std::string::npos);
  std::string negative = json;
  negative.replace(negative.find("\"pool_bytes\": 2048"), 18, "\"pool_bytes\": -5");
  auto negative_parsed = Plan::from_json(negative);
  REQUIRE_FALSE(negative_parsed.has_value());
  CHECK(negative_parsed.status().message().find("pool_bytes") != std::string::npos);
  std::string bad_dtype = json;
  bad_dtype.replace(bad_dtype.find("\"float32\""), 9, "\"float99\"");
  CHECK(Plan::from_json(bad_dtype).status().message().find("float99") != std::string::npos);
}

// Failure injection: move a (steps 0-1) onto x (steps 0-2); misalign y by 8 bytes; an alias
// ([1,64] float32 = 256 bytes) at offset 384 reaching past its target c's 512 bytes, then live
// at steps its target does not cover.
TEST_CASE("Plan::verify catches corrupted offsets and bad aliases") {
  const Plan good = chain_plan();
  REQUIRE(good.verify().is_ok());

  Plan overlapping = good;
  for (PlannedTensor& tensor : overlapping.tensors) {
    if (tensor.name == "a") tensor.offset = tensor_named(good, "x").offset;
  }
  const Status collision = overlapping.verify();
  REQUIRE_FALSE(collision.is_ok());
  CHECK(collision.message().find("tensor 'a'") != std::string::npos);
  CHECK(collision.message().find("tensor 'x'") != std::string::npos);

  Plan misaligned = good;
  for (PlannedTensor& tensor : misaligned.tensors) {
    if (tensor.name == "y") tensor.offset += 8;
  }
  const Status alignment = misaligned.verify();
  REQUIRE_FALSE(alignment.is_ok());
  CHECK(alignment.message().find("tensor 'y'") != std::string::npos);

  Plan bad_alias = good;
  PlannedTensor alias = tensor_named(good, "y");
  alias.name = "view";
  alias.id = 42;
  alias.alias_of = tensor_named(good, "c").id;
  alias.alias_offset = 384;
  alias.shape = {1, 64};
  bad_alias.tensors.push_back(alias);
  const Status alias_status = bad_alias.verify();
  REQUIRE_FALSE(alias_status.is_ok());
  CHECK(alias_status.message().find("tensor 'view'") != std::string::npos);
  CHECK(alias_status.message().find("exceed its 512 bytes") != std::string::npos);

  // The same alias inside c's bytes but live from step 0, before c holds its storage (2-3).
  Plan early_alias = good;
  alias.alias_offset = 0;
  alias.first = 0;
  early_alias.tensors.push_back(alias);
  const Status early_status = early_alias.verify();
  REQUIRE_FALSE(early_status.is_ok());
  CHECK(early_status.message().find("only at [2, 3]") != std::string::npos);
}

// Bare records (a --records CSV): sizes are rounded up to the alignment (100 -> 256), names
// kept, producer "record"; the two records share step 1, so pool = LB = 512.
TEST_CASE("build_plan_from_records") {
  const std::vector<UsageRecord> records = {{0, 1, 100}, {1, 2, 200}};
  const std::vector<std::string> names = {"first", "second"};
  auto plan = build_plan_from_records(records, names, PlanOptions{});
  REQUIRE(plan.has_value());
  CHECK(plan->tensors[0].name == "first");
  CHECK(plan->tensors[1].bytes == 256);
  CHECK(plan->tensors[1].producer_op == "record");
  CHECK(plan->pool_bytes == 512);
  CHECK(plan->optimal);
  CHECK(plan->verified);
}

}  // namespace onepool
