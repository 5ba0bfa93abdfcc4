// Stable topological sort of a GraphProto's nodes.
#include "planner/import/import_topo_sort.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace onepool {

namespace {

using NameSet = std::unordered_set<std::string>;

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (", node.op_type(), ")");
}

// Names a subgraph reads from the scopes around it: consumed inside, defined nowhere inside.
void collect_outer_reads(const onnx::GraphProto& body, NameSet* reads) {
  NameSet defined;
  for (const auto& input : body.input()) defined.insert(input.name());
  for (const auto& initializer : body.initializer()) defined.insert(initializer.name());
  for (const auto& node : body.node()) defined.insert(node.output().begin(), node.output().end());
  NameSet inner_reads;
  for (const auto& node : body.node()) {
    inner_reads.insert(node.input().begin(), node.input().end());
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) collect_outer_reads(attribute.g(), &inner_reads);
      for (const auto& graph : attribute.graphs()) collect_outer_reads(graph, &inner_reads);
    }
  }
  for (const auto& output : body.output()) inner_reads.insert(output.name());
  for (const std::string& name : inner_reads) {
    if (!name.empty() && defined.count(name) == 0) reads->insert(name);
  }
}

// Every name a node reads: its inputs and what its subgraphs read from outside.
std::vector<std::string> node_reads(const onnx::NodeProto& node) {
  NameSet reads(node.input().begin(), node.input().end());
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_g()) collect_outer_reads(attribute.g(), &reads);
    for (const auto& graph : attribute.graphs()) collect_outer_reads(graph, &reads);
  }
  reads.erase("");
  std::vector<std::string> sorted(reads.begin(), reads.end());
  std::sort(sorted.begin(), sorted.end());  // deterministic messages
  return sorted;
}

struct Dependencies {
  std::vector<std::vector<int>> producers_of;  // per node: the nodes it waits for (deduplicated)
  std::vector<std::vector<int>> consumers_of;  // per node: the nodes waiting for it
};

Expected<Dependencies> build_dependencies(const onnx::GraphProto& graph) {
  NameSet sources;
  for (const auto& input : graph.input()) sources.insert(input.name());
  for (const auto& initializer : graph.initializer()) sources.insert(initializer.name());
  std::unordered_map<std::string, int> producer;
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const std::string& output : graph.node(n).output()) {
      if (!output.empty()) producer.emplace(output, n);  // duplicates: check_graph_structure
    }
  }
  Dependencies deps;
  deps.producers_of.resize(static_cast<size_t>(graph.node_size()));
  deps.consumers_of.resize(static_cast<size_t>(graph.node_size()));
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const std::string& name : node_reads(graph.node(n))) {
      if (sources.count(name) != 0) continue;
      const auto it = producer.find(name);
      if (it == producer.end()) {
        return make_status(StatusCode::kInvalidModel, node_label(graph.node(n)), ": input tensor '",
                           name,
                           "' is not a graph input, an initializer, or the output of any node "
                           "(nothing produces it)");
      }
      std::vector<int>& waits = deps.producers_of[static_cast<size_t>(n)];
      if (std::find(waits.begin(), waits.end(), it->second) != waits.end()) continue;
      waits.push_back(it->second);
      deps.consumers_of[static_cast<size_t>(it->second)].push_back(n);
    }
  }
  return deps;
}

// The nodes of one cycle among the unsorted nodes: walk producer edges from an unsorted node
// until a node repeats.
std::vector<int> find_cycle(const Dependencies& deps, const std::vector<bool>& sorted) {
  int start = 0;
  while (sorted[static_cast<size_t>(start)]) ++start;
  std::unordered_map<int, size_t> position;
  std::vector<int> path;
  int node = start;
  while (position.count(node) == 0) {
    position[node] = path.size();
    path.push_back(node);
    for (int producer : deps.producers_of[static_cast<size_t>(node)]) {
      if (!sorted[static_cast<size_t>(producer)]) {
        node = producer;
        break;
      }
    }
  }
  std::vector<int> cycle(path.begin() + static_cast<std::ptrdiff_t>(position[node]), path.end());
  std::reverse(cycle.begin(), cycle.end());  // producer before consumer
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  return cycle;
}

Status cycle_error(const onnx::GraphProto& graph, const std::vector<int>& cycle) {
  std::string names;
  for (int n : cycle) names += str_cat(names.empty() ? "" : " -> ", node_label(graph.node(n)));
  names += str_cat(" -> ", node_label(graph.node(cycle.front())));
  return make_status(StatusCode::kInvalidModel, "the graph has a cycle of ", cycle.size(),
                     " node(s): ", names);
}

}  // namespace

Status sort_nodes_topologically(onnx::GraphProto* graph) {
  ONEPOOL_ASSIGN_OR_RETURN(Dependencies deps, build_dependencies(*graph));
  const size_t count = static_cast<size_t>(graph->node_size());
  std::vector<size_t> waiting(count);
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // lowest index first
  for (size_t n = 0; n < count; ++n) {
    waiting[n] = deps.producers_of[n].size();
    if (waiting[n] == 0) ready.push(static_cast<int>(n));
  }
  std::vector<int> order;
  std::vector<bool> sorted(count, false);
  while (!ready.empty()) {
    const int n = ready.top();
    ready.pop();
    order.push_back(n);
    sorted[static_cast<size_t>(n)] = true;
    for (int consumer : deps.consumers_of[static_cast<size_t>(n)]) {
      if (--waiting[static_cast<size_t>(consumer)] == 0) ready.push(consumer);
    }
  }
  if (order.size() != count) return cycle_error(*graph, find_cycle(deps, sorted));
  bool already_sorted = true;
  for (size_t i = 0; i < count; ++i)
    already_sorted = already_sorted && order[i] == static_cast<int>(i);
  if (already_sorted) return Status::ok();
  std::vector<onnx::NodeProto> nodes(count);
  for (size_t i = 0; i < count; ++i) nodes[i].Swap(graph->mutable_node(order[i]));
  for (size_t i = 0; i < count; ++i) graph->mutable_node(static_cast<int>(i))->Swap(&nodes[i]);
  return Status::ok();
}

}  // namespace onepool
