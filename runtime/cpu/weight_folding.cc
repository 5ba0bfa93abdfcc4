// Weight folding: weight-only nodes computed once at load with the CPU kernels.
#include "runtime/cpu/weight_folding.h"

#include <string_view>
#include <utility>
#include <vector>

#include "planner/optimize/optimize.h"
#include "runtime/cpu/half_compute.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {
namespace {

// Outputs may exceed the inputs by this much (a Shape of a weight, a small Range) and still fold.
constexpr size_t kGrowthSlackBytes = 64 * 1024;

bool is_random_op(std::string_view op) {
  return op.starts_with("Random") || op == "Bernoulli" || op == "Multinomial";
}

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

TensorView view_of(HostTensor& tensor) {
  return TensorView{tensor.data.data(), tensor.dtype, tensor.shape, Device{}};
}

// Runs the prepared kernel of `node` on its weights; returns one tensor per output (empty
// tensors for omitted outputs).
Expected<std::vector<HostTensor>> evaluate(Graph& graph, const Node& node,
                                           const PreparedKernel& prepared, ThreadPool& threads) {
  std::vector<TensorView> inputs;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      inputs.emplace_back();
      continue;
    }
    const Value& value = graph.values[static_cast<size_t>(id)];
    inputs.push_back(view_of(graph.weights[static_cast<size_t>(value.weight_index)]));
  }
  std::vector<HostTensor> results(node.outputs.size());
  std::vector<TensorView> outputs;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) {
      outputs.emplace_back();
      continue;
    }
    const Value& value = graph.values[static_cast<size_t>(node.outputs[i])];
    results[i].dtype = value.dtype;
    results[i].shape = value.shape;
    results[i].data.assign(value.bytes(), std::byte{0});
    outputs.push_back(view_of(results[i]));
  }
  std::vector<std::byte> workspace(prepared.workspace_bytes);
  RunContext context;
  context.inputs = inputs;
  context.outputs = outputs;
  context.workspace = workspace.data();
  context.workspace_bytes = workspace.size();
  context.threads = &threads;
  ONEPOOL_RETURN_IF_ERROR(prepared.kernel->run(context).with_context(describe_node(node)));
  return results;
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
    if (is_random_op(node.op_type) || !reads_only_weights(folded, node, input_bytes)) continue;
    const size_t bytes = output_bytes(folded, node);
    if (bytes > input_bytes + kGrowthSlackBytes) continue;
    const KernelFactory factory = registry.find(node.op_type);
    if (factory == nullptr) continue;
    Expected<PreparedKernel> prepared = prepare_cpu_kernel(factory, folded, node);
    if (!prepared) continue;  // the Session reports unsupported nodes; folding only skips them
    Expected<std::vector<HostTensor>> results = evaluate(folded, node, *prepared, threads);
    if (!results) continue;  // left to run (and fail with its message) in the Session
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
