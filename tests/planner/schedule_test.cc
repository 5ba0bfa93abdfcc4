// Memory-aware scheduling on hand-built graphs, random DAGs (against brute force), a large random
// graph, and a Session of a reordered graph. The model suites: schedule_models_test.cc.
#include "planner/analysis/schedule.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "onepool/onepool.h"
#include "planner/algo/algorithms.h"
#include "planner/analysis/liveness.h"
#include "planner/core/graph.h"

namespace onepool {
namespace {

constexpr size_t kAlignment = 256;

ValueId add_value(Graph& graph, std::string name, ValueKind kind, int64_t floats) {
  Value value;
  value.name = std::move(name);
  value.dtype = DType::kFloat32;
  value.shape = {1, floats};
  value.kind = kind;
  return graph.add_value(value);
}

void add_node(Graph& graph, std::string name, std::vector<ValueId> inputs,
              std::vector<ValueId> outputs) {
  Node node;
  node.name = std::move(name);
  node.op_type = "Relu";
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  graph.nodes.push_back(std::move(node));
}

// The peak of `order` computed independently: usage records by the liveness rules, then the
// planner's lower bound.
size_t peak_of_order(const Graph& graph, const std::vector<int32_t>& order,
                     const std::vector<size_t>& workspaces = {}) {
  std::vector<int64_t> step(graph.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) step[static_cast<size_t>(order[i])] = int64_t(i);
  const int64_t last_step = std::max<int64_t>(0, int64_t(order.size()) - 1);
  std::vector<UsageRecord> records;
  for (const Value& value : graph.values) {
    if (value.kind == ValueKind::kWeight) continue;
    UsageRecord record;
    record.first = value.producer == kNoNode ? 0 : step[static_cast<size_t>(value.producer)];
    record.last = record.first;
    for (NodeId c : value.consumers) record.last = std::max(record.last, step[size_t(c)]);
    if (value.is_graph_output) record.last = last_step;
    record.bytes = (value.bytes() + kAlignment - 1) / kAlignment * kAlignment;
    records.push_back(record);
  }
  for (size_t n = 0; n < workspaces.size(); ++n) {
    records.push_back({step[n], step[n], workspaces[n]});
  }
  return lower_bound_bytes(records);
}

std::vector<int32_t> model_order(const Graph& graph) {
  std::vector<int32_t> order(graph.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  return order;
}

// The planner's own lower bound of the graph in its current order.
size_t liveness_lower_bound(const Graph& graph, const std::vector<size_t>& workspaces = {}) {
  NodeMemoryNeeds needs;
  needs.workspace_bytes = workspaces;
  auto liveness = compute_liveness(graph, needs, kAlignment);
  REQUIRE_MESSAGE(liveness.has_value(), liveness.status().to_string());
  return lower_bound_bytes(liveness->records);
}

// Every input's producer runs earlier, and the edges agree with the node order.
void check_topological(const Graph& graph) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) {
      if (in == kNoValue) continue;
      const Value& value = graph.values[size_t(in)];
      REQUIRE(value.producer < NodeId(n));
      REQUIRE(std::find(value.consumers.begin(), value.consumers.end(), NodeId(n)) !=
              value.consumers.end());
    }
    for (ValueId out : graph.nodes[n].outputs) {
      if (out != kNoValue) REQUIRE(graph.values[size_t(out)].producer == NodeId(n));
    }
  }
}

std::vector<std::string> node_names(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node& node : graph.nodes) names.push_back(node.name);
  return names;
}

// x (256 B) feeds two branches a1 -> a2 and b1 -> b2 (a1, b1: 4096 B; a2, b2: 256 B) joined by
// cat -> y (512 B). The model order a1 b1 a2 b2 cat keeps a1 and b1 live together: peak
// x + a1 + b1 = 8448 B at b1. Finishing a branch first (a1 a2 b1 b2 cat) peaks at 4608 B.
Graph interleaved_branches() {
  Graph graph;
  const ValueId x = add_value(graph, "x", ValueKind::kGraphInput, 64);
  const ValueId a1 = add_value(graph, "a1", ValueKind::kActivation, 1024);
  const ValueId b1 = add_value(graph, "b1", ValueKind::kActivation, 1024);
  const ValueId a2 = add_value(graph, "a2", ValueKind::kActivation, 64);
  const ValueId b2 = add_value(graph, "b2", ValueKind::kActivation, 64);
  const ValueId y = add_value(graph, "y", ValueKind::kActivation, 128);
  graph.values[size_t(y)].is_graph_output = true;
  graph.inputs = {x};
  graph.outputs = {y};
  add_node(graph, "a1", {x}, {a1});
  add_node(graph, "b1", {x}, {b1});
  add_node(graph, "a2", {a1}, {a2});
  add_node(graph, "b2", {b1}, {b2});
  add_node(graph, "cat", {a2, b2}, {y});
  graph.rebuild_edges();
  return graph;
}

TEST_CASE("interleaved branches: the memory schedule finishes one branch first") {
  Graph graph = interleaved_branches();
  CHECK(liveness_lower_bound(graph) == 8448);
  auto report = schedule_for_memory(graph, kAlignment);
  REQUIRE_MESSAGE(report.has_value(), report.status().to_string());
  CHECK(report->peak_before == 8448);
  CHECK(report->peak_after == 4608);
  CHECK(report->method == "exact");
  check_topological(graph);
  CHECK(liveness_lower_bound(graph) == 4608);
  CHECK(node_names(graph) == std::vector<std::string>{"a1", "a2", "b1", "b2", "cat"});
  MESSAGE(describe_schedule(*report));
}

// A chain x -> r0 -> r1 -> r2 -> y has one valid order: nothing changes, peak 2 × 512 B.
TEST_CASE("a chain keeps its order and its peak") {
  Graph graph;
  ValueId previous = add_value(graph, "x", ValueKind::kGraphInput, 128);
  graph.inputs = {previous};
  for (int i = 0; i < 3; ++i) {
    const ValueId next = add_value(graph, str_cat("v", i), ValueKind::kActivation, 128);
    add_node(graph, str_cat("r", i), {previous}, {next});
    previous = next;
  }
  graph.values[size_t(previous)].is_graph_output = true;
  graph.outputs = {previous};
  graph.rebuild_edges();
  auto report = schedule_for_memory(graph, kAlignment);
  REQUIRE(report.has_value());
  CHECK(report->peak_before == 1024);
  CHECK(report->peak_after == 1024);
  CHECK(report->segments == 3);  // every node of a chain is a cut
  CHECK(node_names(graph) == std::vector<std::string>{"r0", "r1", "r2"});
}

TEST_CASE("errors: unknown method, bad alignment, an order that breaks a dependency") {
  Graph graph = interleaved_branches();
  ScheduleOptions options;
  options.method = "fastest";
  CHECK(schedule_for_memory(graph, kAlignment, options).status().code() ==
        StatusCode::kInvalidArgument);
  CHECK_FALSE(schedule_for_memory(graph, 100).has_value());
  const std::vector<NodeId> backwards = {2, 0, 1, 3, 4};  // a2 before a1
  auto peak = schedule_peak_bytes(graph, backwards, kAlignment);
  REQUIRE_FALSE(peak.has_value());
  CHECK(peak.status().message().find("before its input's producer") != std::string::npos);
  CHECK(node_names(graph) == std::vector<std::string>{"a1", "b1", "a2", "b2", "cat"});
}

// A random DAG: 1-2 graph inputs, `node_count` nodes each reading 1-2 earlier values and writing
// 1-2 values of 256-2048 B; values nobody reads are graph outputs with probability 0.7.
Graph random_dag(std::mt19937& rng, int node_count) {
  Graph graph;
  std::uniform_int_distribution<int> size(1, 8);
  std::vector<ValueId> available;
  const int inputs = 1 + int(rng() % 2);
  for (int i = 0; i < inputs; ++i) {
    available.push_back(add_value(graph, str_cat("in", i), ValueKind::kGraphInput, 64 * size(rng)));
    graph.inputs.push_back(available.back());
  }
  for (int n = 0; n < node_count; ++n) {
    std::vector<ValueId> reads = {available[rng() % available.size()]};
    const ValueId second = available[rng() % available.size()];
    if (rng() % 2 == 0 && second != reads[0]) reads.push_back(second);
    std::vector<ValueId> writes;
    const int outputs = 1 + int(rng() % 4 == 0);
    for (int o = 0; o < outputs; ++o) {
      writes.push_back(
          add_value(graph, str_cat("v", n, "_", o), ValueKind::kActivation, 64 * size(rng)));
      available.push_back(writes.back());
    }
    add_node(graph, str_cat("n", n), reads, writes);
  }
  graph.rebuild_edges();
  for (size_t v = 0; v < graph.values.size(); ++v) {
    Value& value = graph.values[v];
    if (value.consumers.empty() && value.producer != kNoNode && rng() % 10 < 7) {
      value.is_graph_output = true;
      graph.outputs.push_back(ValueId(v));
    }
  }
  return graph;
}

// The lowest peak over every topological order, by enumeration.
size_t brute_force_peak(const Graph& graph, const std::vector<size_t>& workspaces) {
  const size_t count = graph.nodes.size();
  std::vector<int32_t> order;
  std::vector<bool> done(count, false);
  size_t best = SIZE_MAX;
  std::function<void()> extend = [&]() {
    if (order.size() == count) {
      best = std::min(best, peak_of_order(graph, order, workspaces));
      return;
    }
    for (size_t n = 0; n < count; ++n) {
      if (done[n]) continue;
      bool ready = true;
      for (ValueId in : graph.nodes[n].inputs) {
        const NodeId producer = graph.values[size_t(in)].producer;
        if (producer != kNoNode && !done[size_t(producer)]) ready = false;
      }
      if (!ready) continue;
      done[n] = true;
      order.push_back(int32_t(n));
      extend();
      order.pop_back();
      done[n] = false;
    }
  };
  extend();
  return best;
}

// Per node, 0 or 256-2048 B of scratch (every other node), or none at all.
std::vector<size_t> random_workspaces(std::mt19937& rng, const Graph& graph) {
  if (rng() % 2 == 0) return {};
  std::vector<size_t> workspaces(graph.nodes.size());
  for (size_t& bytes : workspaces) bytes = rng() % 2 == 0 ? 0 : 256 * (1 + rng() % 8);
  return workspaces;
}

std::vector<size_t> permuted(const std::vector<size_t>& per_node, const ScheduleReport& report) {
  if (per_node.empty()) return {};
  std::vector<size_t> result;
  for (NodeId old_id : report.order) result.push_back(per_node[size_t(old_id)]);
  return result;
}

// 300 random DAGs of 1-7 nodes, half with workspaces: the exact schedule reaches the brute-force
// optimum, the greedy one lies between it and the model order, and both agree with the planner's
// lower bound.
TEST_CASE("random DAGs: exact equals brute force, greedy never raises the peak") {
  std::mt19937 rng(2024);
  int improved = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Graph original = random_dag(rng, 1 + trial % 7);
    const std::vector<size_t> workspaces = random_workspaces(rng, original);
    CAPTURE(trial);
    const size_t model_peak = liveness_lower_bound(original, workspaces);
    REQUIRE(peak_of_order(original, model_order(original), workspaces) == model_peak);
    const size_t optimum = brute_force_peak(original, workspaces);
    for (const char* method : {"exact", "greedy"}) {
      Graph graph = original;
      ScheduleOptions options;
      options.method = method;
      options.workspace_bytes = workspaces;
      auto report = schedule_for_memory(graph, kAlignment, options);
      REQUIRE_MESSAGE(report.has_value(), report.status().to_string());
      check_topological(graph);
      CHECK(report->peak_before == model_peak);
      CHECK(report->peak_after == liveness_lower_bound(graph, permuted(workspaces, *report)));
      CHECK(report->peak_after >= optimum);
      CHECK(report->peak_after <= model_peak);
      if (std::string(method) == "exact") {
        CHECK(report->method == "exact");
        CHECK(report->peak_after == optimum);
        improved += report->peak_after < model_peak ? 1 : 0;
      }
    }
  }
  MESSAGE("model order beaten on ", improved, " of 300 random DAGs");
  CHECK(improved > 20);
}

// 4000 nodes, wide and deep: the greedy passes (and the search where segments are small) stay
// fast and never raise the peak.
TEST_CASE("a large random graph schedules quickly") {
  std::mt19937 rng(99);
  Graph graph = random_dag(rng, 4000);
  const size_t before = liveness_lower_bound(graph);
  auto report = schedule_for_memory(graph, kAlignment);
  REQUIRE(report.has_value());
  check_topological(graph);
  CHECK(report->peak_before == before);
  CHECK(report->peak_after == liveness_lower_bound(graph));
  CHECK(report->peak_after <= before);
  CHECK(report->ms < 2000.0);
  MESSAGE("4000 random nodes: ", describe_schedule(*report));
}

// The interleaved branches with real kernels: a1 = MatMul(x, up), a2 = MatMul(a1, down), the
// same for b, y = Add(a2, b2); x, a2, b2, y are [1,64] (256 B), a1 and b1 [1,1024] (4096 B).
Graph interleaved_matmuls() {
  Graph graph = interleaved_branches();
  auto weight = [&](const char* name, int64_t rows, int64_t cols) {
    const ValueId id = add_value(graph, name, ValueKind::kWeight, rows * cols);
    Value& value = graph.values[size_t(id)];
    value.shape = {rows, cols};
    value.weight_index = int32_t(graph.weights.size());
    HostTensor tensor{DType::kFloat32, value.shape, {}};
    tensor.data.resize(size_t(rows * cols) * sizeof(float));
    auto* data = tensor.as_mutable<float>();
    for (int64_t i = 0; i < rows * cols; ++i) data[i] = float((i * 7919) % 201 - 100) / 1000.0f;
    graph.weights.push_back(std::move(tensor));
    return id;
  };
  const ValueId up = weight("up", 64, 1024);
  const ValueId down = weight("down", 1024, 64);
  graph.values[size_t(graph.outputs[0])].shape = {1, 64};
  for (const char* branch : {"a", "b"}) {
    for (Node& node : graph.nodes) {
      node.op_type = node.name == "cat" ? "Add" : "MatMul";
      if (node.name == str_cat(branch, "1")) node.inputs.push_back(up);
      if (node.name == str_cat(branch, "2")) node.inputs.push_back(down);
    }
  }
  graph.rebuild_edges();
  return graph;
}

std::vector<float> run_graph(const Graph& graph, const std::string& schedule, size_t& plain_lb) {
  LoadOptions load;
  load.schedule = schedule;
  auto model = Model::from_graph(graph, load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  auto session = Session::create(*model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  plain_lb = (*session)->plan().plain_lower_bound_bytes;
  std::vector<float> x(64), y(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 13) / 13.0f - 0.5f;
  const TensorView input{x.data(), DType::kFloat32, Shape{1, 64}, {}};
  const TensorView output{y.data(), DType::kFloat32, Shape{1, 64}, {}};
  const Status status = (*session)->run({&input, 1}, {&output, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return y;
}

// The Session plans the reordered graph: its plain lower bound drops (8448 B -> 4608 B when no
// kernel needs a workspace), and y is bit for bit the same.
TEST_CASE("a Session of a reordered graph plans less and computes the same") {
  const Graph graph = interleaved_matmuls();
  size_t model_lb = 0, memory_lb = 0;
  const std::vector<float> expected = run_graph(graph, "model", model_lb);
  const std::vector<float> actual = run_graph(graph, "memory", memory_lb);
  CHECK(actual == expected);
  CHECK(memory_lb < model_lb);
  MESSAGE("plain lower bound ", model_lb, " B -> ", memory_lb, " B");
}

}  // namespace
}  // namespace onepool
