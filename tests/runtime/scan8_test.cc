// Scan-8 (opset 8: a batch axis 0 on every input and output, the scan axis 1): import splits it
// into one Scan per batch row (planner/import/import_scan_batch.h), and the run gives each row its
// own states and scan outputs; scan input directions are honoured; sequence_lens is refused
// clearly.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/if_model_builder.h"

using namespace onepool;
using namespace if_models;  // NOLINT(build/namespaces): the test helpers

namespace {

// sum_out = sum_in + next; scan_out = sum_out * 2 (so the two outputs differ).
onnx::GraphProto running_sum_body() {
  onnx::GraphProto body = branch("scan_body");
  add_input(&body, "sum_in", {2});
  add_input(&body, "next", {2});
  add_float_initializer(&body, "two", {}, {2.0f});
  add_node(&body, "Add", {"sum_in", "next"}, {"sum_out"});
  add_node(&body, "Mul", {"sum_out", "two"}, {"scan_out"});
  add_output(&body, "sum_out", {2});
  add_output(&body, "scan_out", {2});
  return body;
}

// Scan-8 over x [2, 3, 2] (batch 2, 3 steps) with states initial [2, 2] (a constant);
// `reverse` scans x backward; `lens` adds a sequence_lens input.
onnx::ModelProto scan8_model(bool reverse, bool lens) {
  onnx::ModelProto model = new_model();
  model.mutable_opset_import(0)->set_version(8);
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {2, 3, 2});
  add_float_initializer(graph, "initial", {2, 2}, {1, 2, 10, 20});
  if (lens) {
    auto* tensor = graph->add_initializer();
    tensor->set_name(std::string("lens"));
    tensor->set_data_type(onnx::TensorProto::INT32);
    tensor->add_dims(2);
    tensor->add_int32_data(3);
    tensor->add_int32_data(2);
  }
  add_output(graph, "y", {2, 2});
  add_output(graph, "z", {2, 3, 2});
  auto* scan = add_node(graph, "Scan", {lens ? "lens" : "", "initial", "x"}, {"y", "z"}, "scan8");
  auto* body = scan->add_attribute();
  body->set_name(std::string("body"));
  body->set_type(onnx::AttributeProto::GRAPH);
  *body->mutable_g() = running_sum_body();
  auto* scans = scan->add_attribute();
  scans->set_name(std::string("num_scan_inputs"));
  scans->set_type(onnx::AttributeProto::INT);
  scans->set_i(1);
  if (reverse) {
    auto* directions = scan->add_attribute();
    directions->set_name(std::string("directions"));
    directions->set_type(onnx::AttributeProto::INTS);
    directions->add_ints(1);
  }
  return model;
}

}  // namespace

TEST_CASE("Scan-8: each batch row scans with its own state, forward and reverse") {
  // x[b, t, :] = (b * 3 + t + 1) * {1, -1}
  const std::vector<float> x = {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6};
  SUBCASE("forward") {
    auto graph = import_model(scan8_model(false, false));
    REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
    const std::vector<std::vector<float>> out = run_graph(std::move(*graph), x);
    // Row 0 from {1, 2}: sums {2,1} {4,-1} {7,-4}; row 1 from {10, 20}: {14,16} {19,11} {25,5}.
    CHECK(out[0] == std::vector<float>{7, -4, 25, 5});
    CHECK(out[1] == std::vector<float>{4, 2, 8, -2, 14, -8, 28, 32, 38, 22, 50, 10});
  }
  SUBCASE("reverse") {
    auto graph = import_model(scan8_model(true, false));
    REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
    const std::vector<std::vector<float>> out = run_graph(std::move(*graph), x);
    // Row 0 takes t = 2, 1, 0: {4,-1} {6,-3} {7,-4}; row 1: {16,14} {21,9} {25,5}.
    CHECK(out[0] == std::vector<float>{7, -4, 25, 5});
    CHECK(out[1] == std::vector<float>{8, -2, 12, -6, 14, -8, 32, 28, 42, 18, 50, 10});
  }
}

TEST_CASE("Scan-8 with sequence_lens is refused with a clear error") {
  auto graph = import_model(scan8_model(false, true));
  REQUIRE_FALSE(graph.has_value());
  CHECK(graph.status().code() == StatusCode::kUnsupported);
  CHECK(contains(graph.status(), "node 'scan8' (Scan-8): sequence_lens"));
}
