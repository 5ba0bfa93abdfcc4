// Plan::to_json streams its document (no DOM of the whole plan) in exactly the layout nlohmann
// gives the same document: re-dumping the parsed output reproduces it byte for byte, for every
// kind of tensor (owner, alias, workspace, bounded, external), nested plans, provenance, names
// that need escaping and invalid UTF-8.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "onepool/plan.h"

using namespace onepool;

namespace {

std::string canonical(const std::string& json) {
  return nlohmann::json::parse(json).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

PlannedTensor tensor(int32_t id, const std::string& name, Shape shape, size_t bytes,
                     size_t offset) {
  PlannedTensor t;
  t.id = id;
  t.name = name;
  t.producer_op = "Conv";
  t.dtype = DType::kFloat32;
  t.shape = shape;
  t.bytes = bytes;
  t.offset = offset;
  t.first = id;
  t.last = id + 2;
  return t;
}

NestedPlan nested_plan(const std::string& body, size_t pool, size_t lower_bound, size_t count) {
  NestedPlan nested;
  nested.node = "If_25";
  nested.body = body;
  nested.pool_bytes = pool;
  nested.lower_bound_bytes = lower_bound;
  nested.tensor_count = count;
  nested.algorithm = "auto";
  return nested;
}

Plan every_kind_of_tensor() {
  Plan plan;
  plan.pool_bytes = 4096;
  plan.lower_bound_bytes = 3072;
  plan.naive_bytes = 8192;
  plan.plain_lower_bound_bytes = 3584;
  plan.plain_pool_bytes = 4096;
  plan.algorithm = "portfolio";
  plan.optimal = false;
  plan.planning_ms = 0.123456789;
  plan.verified = true;
  plan.steps = {{"conv \"1\"", "Conv"}, {"relu\\2", "Relu"}};
  plan.tensors.push_back(tensor(3, "conv_out", Shape{1, 8, 4, 4}, 512, 0));
  PlannedTensor alias = tensor(4, "view\t\x01", Shape{8, 16}, 0, 0);
  alias.alias_of = 3;
  alias.alias_offset = 256;
  plan.tensors.push_back(alias);
  PlannedTensor workspace = tensor(-1, "conv:workspace", Shape{}, 1024, 1024);
  workspace.dtype = DType::kUndefined;
  workspace.workspace_node = 0;
  plan.tensors.push_back(workspace);
  PlannedTensor bounded = tensor(5, "nonzero", Shape{2, 6}, 256, 2048);
  bounded.bound = "NonZero of 'x' [2,3]: at most 6 elements \xe2\x89\xa4 6";
  plan.tensors.push_back(bounded);
  PlannedTensor external = tensor(6, "caf\xc3\xa9 \xff", Shape{}, 0, 0);
  external.external = true;
  plan.tensors.push_back(external);
  plan.nested.push_back(nested_plan("then_branch", 2048, 1536, 12));
  plan.nested.push_back(nested_plan("else_branch", 512, 512, 2));
  plan.nested.back().tensors = {tensor(0, "branch_in", Shape{4}, 256, 0),
                                tensor(1, "branch \"out\"", Shape{2, 2}, 256, 256)};
  plan.provenance.model_path = "m.onnx";
  plan.provenance.model_hash = "fnv1a64:0123456789abcdef";
  plan.provenance.input_shapes = "x:1x3x8x8";
  plan.provenance.device = "cpu";
  plan.provenance.algorithm = "auto";
  plan.provenance.alignment = 256;
  plan.provenance.aliasing = "on";
  plan.provenance.schedule = "model";
  plan.provenance.optimize = "all";
  plan.provenance.workspaces = "fit";
  plan.provenance.external = "caf\xc3\xa9";
  plan.provenance.onepool_version = "0.1.0";
  return plan;
}

}  // namespace

TEST_CASE("the streamed plan JSON is nlohmann's own layout, byte for byte") {
  const std::string json = every_kind_of_tensor().to_json();
  CHECK(json == canonical(json));
  CHECK(json.find("\"view\\t\\u0001\"") != std::string::npos);        // escaped as nlohmann does
  CHECK(json.find("caf\xc3\xa9 \xef\xbf\xbd") != std::string::npos);  // invalid byte replaced
  auto back = Plan::from_json(json);
  REQUIRE_MESSAGE(back.has_value(), back.status().to_string());
  CHECK(back->tensors.size() == 5);
  CHECK(back->tensors[1].alias_offset == 256);
  CHECK(back->tensors[3].bound == every_kind_of_tensor().tensors[3].bound);
  CHECK(back->tensors[4].external);
  CHECK(back->planning_ms == 0.123456789);
  REQUIRE(back->nested.size() == 2);
  CHECK(back->nested[0].tensors.empty());
  REQUIRE(back->nested[1].tensors.size() == 2);
  CHECK(back->nested[1].tensors[1].name == "branch \"out\"");
  CHECK(back->nested[1].tensors[1].offset == 256);
  CHECK(back->provenance.external == "caf\xc3\xa9");
}

TEST_CASE("an empty plan streams as nlohmann writes it") {
  Plan plan;
  plan.algorithm = "auto";
  const std::string json = plan.to_json();
  CHECK(json == canonical(json));
  CHECK(json.find("\"steps\": []") != std::string::npos);
  CHECK(json.find("\"tensors\": []") != std::string::npos);
}
