// Running one node on the host with the CPU kernels, outside any Session.
#include "runtime/cpu/host_evaluation.h"

#include <string_view>
#include <utility>

#include "runtime/cpu/half_compute.h"
#include "runtime/cpu/kernel.h"

namespace onepool::cpu {
namespace {

bool is_random_op(std::string_view op) {
  return op.starts_with("Random") || op == "Bernoulli" || op == "Multinomial";
}

TensorView view_of(const HostTensor& tensor) {
  // Kernels read their inputs through const views; only outputs are written.
  auto* data = const_cast<std::byte*>(tensor.data.data());
  return TensorView{data, tensor.dtype, tensor.shape, Device{}};
}

// Views of the node's inputs, all weights (an omitted one is an empty view).
Expected<std::vector<TensorView>> input_views(const Graph& graph, const Node& node) {
  std::vector<TensorView> inputs;
  for (ValueId id : node.inputs) {
    if (id == kNoValue) {
      inputs.emplace_back();
      continue;
    }
    const Value& value = graph.values[static_cast<size_t>(id)];
    if (value.kind != ValueKind::kWeight) {
      return make_status(StatusCode::kUnsupported, describe_node(node), ": input '", value.name,
                         "' is not a constant");
    }
    inputs.push_back(view_of(graph.weight(id)));
  }
  return inputs;
}

// Zero-filled outputs at the node's static shapes, and views of them.
std::vector<HostTensor> output_tensors(const Graph& graph, const Node& node,
                                       std::vector<TensorView>& views) {
  std::vector<HostTensor> results(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) {
      views.emplace_back();
      continue;
    }
    const Value& value = graph.values[static_cast<size_t>(node.outputs[i])];
    results[i].dtype = value.dtype;
    results[i].shape = value.shape;
    results[i].data.assign(value.bytes(), std::byte{0});
    views.push_back(view_of(results[i]));
  }
  return results;
}

}  // namespace

Expected<std::vector<HostTensor>> evaluate_node_on_host(const Graph& graph, const Node& node,
                                                        const KernelRegistry& registry,
                                                        ThreadPool& threads) {
  const bool default_domain = node.domain.empty() || node.domain == "ai.onnx";
  const KernelFactory factory = default_domain ? registry.find(node.op_type) : nullptr;
  if (factory == nullptr || is_random_op(node.op_type)) {
    return make_status(StatusCode::kUnsupported, describe_node(node),
                       ": not evaluated on the host");
  }
  ONEPOOL_ASSIGN_OR_RETURN(PreparedKernel prepared, prepare_cpu_kernel(factory, graph, node));
  if (prepared.data_dependent_outputs || !prepared.nested_plans.empty()) {
    return make_status(StatusCode::kUnsupported, describe_node(node),
                       ": output shapes known only when it runs");
  }
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<TensorView> inputs, input_views(graph, node));
  std::vector<TensorView> outputs;
  std::vector<HostTensor> results = output_tensors(graph, node, outputs);
  std::vector<std::byte> workspace(prepared.workspace_bytes);
  ONEPOOL_RETURN_IF_ERROR(prepared.kernel->bind(workspace.data(), workspace.size()));
  RunContext context;
  context.inputs = inputs;
  context.outputs = outputs;
  context.workspace = workspace.data();
  context.workspace_bytes = workspace.size();
  context.threads = &threads;
  ONEPOOL_RETURN_IF_ERROR(prepared.kernel->run(context).with_context(describe_node(node)));
  return results;
}

Expected<std::vector<HostTensor>> evaluate_single_node_graph(const Graph& graph) {
  if (graph.nodes.size() != 1) {
    return make_status(StatusCode::kInvalidArgument,
                       "host evaluation takes a graph of one node, "
                       "got ",
                       graph.nodes.size());
  }
  const KernelRegistry registry = KernelRegistry::with_all_kernels();
  ThreadPool threads(1);
  return evaluate_node_on_host(graph, graph.nodes.front(), registry, threads);
}

}  // namespace onepool::cpu
