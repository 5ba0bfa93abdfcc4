#pragma once

#include <cstdlib>
#include <memory>

namespace onepool::testing {

inline Expected<std::vector<HostTensor>> run_single_node(
    const std::string& op_type, const std::vector<std::optional<TestInput>>& inputs,
    const std::vector<OutputSpec>& outputs, const AttributeMap& attributes, int threads) {
  Graph graph;
  graph.opset = 17;
  Node node;
  node.name = "test_node";
  node.op_type = op_type;
  node.attributes = attributes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    Value value;
    value.name = "input_" + std::to_string(i);
    value.dtype = inputs[i]->tensor.dtype;
    value.shape = inputs[i]->tensor.shape;
    if (inputs[i]->constant) {
      value.kind = ValueKind::kWeight;
      value.weight_index = static_cast<int32_t>(graph.weights.size());
      graph.weights.push_back(inputs[i]->tensor);
    } else {
      value.kind = ValueKind::kGraphInput;
    }
    node.inputs.push_back(graph.add_value(value));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Value value;
    value.name = "output_" + std::to_string(i);
    value.dtype = outputs[i].dtype;
    value.shape = outputs[i].shape;
    value.is_graph_output = true;
    node.outputs.push_back(graph.add_value(value));
  }
  graph.nodes.push_back(node);
  graph.rebuild_edges();

  const auto registry = cpu::KernelRegistry::with_all_kernels();
  const cpu::KernelFactory factory = registry.find(op_type);
  if (factory == nullptr) {
    return make_status(StatusCode::kUnsupported, "no CPU kernel for ", op_type);
  }
  cpu::NodeContext node_context(graph, graph.nodes[0]);
  ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared, factory(node_context));

  // Inputs keep their own storage (copied so the kernel cannot write to the test's data).
  std::vector<HostTensor> input_copies;
  for (const auto& input : inputs) {
    if (input) input_copies.push_back(input->tensor);
  }
  size_t copy_index = 0;
  // Re-order views to match input positions (omitted ones stay empty).
  std::vector<TensorView> ordered(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    HostTensor& copy = input_copies[copy_index++];
    ordered[i] = TensorView{copy.data.data(), copy.dtype, copy.shape, Device{}};
  }

  std::vector<HostTensor> results(outputs.size());
  std::vector<TensorView> output_views;
  for (size_t i = 0; i < outputs.size(); ++i) {
    results[i].dtype = outputs[i].dtype;
    results[i].shape = outputs[i].shape;
    ONEPOOL_ASSIGN_OR_RETURN(size_t bytes, tensor_bytes(outputs[i].shape, outputs[i].dtype));
    results[i].data.assign(bytes, std::byte{0xCD});  // garbage: kernels must write every byte
    output_views.push_back(
        TensorView{results[i].data.data(), outputs[i].dtype, outputs[i].shape, Device{}});
  }
  std::vector<std::byte> workspace(prepared.workspace_bytes + 1);
  cpu::ThreadPool pool(threads);
  cpu::RunContext context;
  context.inputs = ordered;
  context.outputs = output_views;
  context.workspace = workspace.data();
  context.workspace_bytes = prepared.workspace_bytes;
  context.threads = &pool;
  ONEPOOL_RETURN_IF_ERROR(prepared.kernel->run(context));
  return results;
}

}  // namespace onepool::testing
