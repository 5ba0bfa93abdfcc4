// Weight folding: weight-only nodes computed once at load with the CPU kernels.
#include "runtime/cpu/weight_folding.h"

#include <utility>
#include <vector>

#include "planner/optimize/optimize.h"
#include "runtime/cpu/host_evaluation.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {
namespace {

// Outputs may exceed the inputs by this much (a Shape of a weight, a small Range) and still fold.
constexpr size_t kGrowthSlackBytes = 64 * 1024;

// True when every present input is a weight (and there is at least one) and no output is a
// graph output; `input_bytes` receives the inputs' total bytes.
bool reads_only_weights(const Graph& graph, const Node& node, size_t& input_bytes) {
  input_bytes = 0;
  int present = 0;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) continue;
    const Value& value = graph.values[static_cast<size_t>(id)];
    if (value.kind != ValueKind::kWeight) return false;
    input_bytes += value.bytes();
    ++present;
  }
  for (ValueId id : node.outputs) {
    if (id != kNoValue && graph.values[static_cast<size_t>(id)].is_graph_output) return false;
  }
  return present > 0;
}

size_t output_bytes(const Graph& graph, const Node& node) {
  size_t total = 0;
  for (ValueId id : node.outputs) {
    if (id != kNoValue) total += graph.values[static_cast<size_t>(id)].bytes();
  }
  return total;
}

// The outputs of a folded node become weights holding `results`.
void adopt_as_weights(Graph& graph, const Node& node, std::vector<HostTensor>& results) {
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    Value& value = graph.values[static_cast<size_t>(node.outputs[i])];
    value.kind = ValueKind::kWeight;
    value.weight_index = static_cast<int32_t>(graph.weights.size());
    graph.weights.push_back(std::move(results[i]));
  }
}

}  // namespace

WeightFoldReport fold_weight_only_nodes(Graph& graph) {
  const KernelRegistry registry = KernelRegistry::with_all_kernels();
  ThreadPool threads(1);
  Graph& folded = graph;
  WeightFoldReport report;
  std::vector<bool> keep(folded.nodes.size(), true);
  for (size_t n = 0; n < folded.nodes.size(); ++n) {
    const Node& node = folded.nodes[n];
    size_t input_bytes = 0;
    if (!reads_only_weights(folded, node, input_bytes)) continue;
    const size_t bytes = output_bytes(folded, node);
    if (bytes > input_bytes + kGrowthSlackBytes) continue;
    // A node the host does not evaluate, or whose kernel fails on its weights, is left to the
    // Session, which reports it with its message.
    Expected<std::vector<HostTensor>> results =
        evaluate_node_on_host(folded, node, registry, threads);
    if (!results) continue;
    adopt_as_weights(folded, node, *results);
    keep[n] = false;
    ++report.folded_nodes;
    report.folded_output_bytes += bytes;
  }
  if (report.folded_nodes == 0) return report;
  std::vector<Node> kept;
  for (size_t n = 0; n < folded.nodes.size(); ++n) {
    if (keep[n]) kept.push_back(std::move(folded.nodes[n]));
  }
  folded.nodes = std::move(kept);
  compact_graph(folded);  // rebuilds the edges; drops weights nothing reads
  return report;
}

}  // namespace onepool::cpu
