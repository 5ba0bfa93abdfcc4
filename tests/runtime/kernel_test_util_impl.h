#pragma once

#include <cstdlib>
#include <memory>

namespace onepool::testing {

// A graph of one node: non-constant inputs are graph inputs, constants weights, outputs graph
// outputs.
inline Graph single_node_graph(const std::string& op_type,
                               const std::vector<std::optional<TestInput>>& inputs,
                               const std::vector<OutputSpec>& outputs,
                               const AttributeMap& attributes) {
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
  return graph;
}

// Runs a prepared kernel once with a workspace of the size it declared. A data-dependent
// kernel's actual output shapes go to `actual_shapes` (when given; else the views' shapes).
/// Runs `prepared` once with a workspace of `workspace_bytes` (at least the kernel's
/// workspace_bytes; a plan may grant up to workspace_preferred_bytes).
inline Status run_prepared_in(cpu::PreparedKernel& prepared, const std::vector<TensorView>& inputs,
                              const std::vector<TensorView>& outputs, int threads,
                              size_t workspace_bytes, std::vector<Shape>* actual_shapes = nullptr) {
  std::vector<std::byte> workspace(workspace_bytes + 1);
  cpu::ThreadPool pool(threads);
  std::vector<Shape> shapes;
  for (const TensorView& view : outputs) shapes.push_back(view.shape);
  cpu::RunContext context;
  context.inputs = inputs;
  context.outputs = outputs;
  context.workspace = workspace.data();
  context.workspace_bytes = workspace_bytes;
  context.threads = &pool;
  if (prepared.data_dependent_outputs) context.output_shapes = shapes.data();
  Status status = prepared.kernel->run(context);
  if (actual_shapes != nullptr) *actual_shapes = shapes;
  return status;
}

inline Status run_prepared(cpu::PreparedKernel& prepared, const std::vector<TensorView>& inputs,
                           const std::vector<TensorView>& outputs, int threads,
                           std::vector<Shape>* actual_shapes = nullptr) {
  return run_prepared_in(prepared, inputs, outputs, threads, prepared.workspace_bytes,
                         actual_shapes);
}

inline Expected<std::vector<HostTensor>> run_single_node(
    const std::string& op_type, const std::vector<std::optional<TestInput>>& inputs,
    const std::vector<OutputSpec>& outputs, const AttributeMap& attributes, int threads) {
  const Graph graph = single_node_graph(op_type, inputs, outputs, attributes);
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  const cpu::KernelFactory factory = registry.find(op_type);
  if (factory == nullptr) {
    return make_status(StatusCode::kUnsupported, "no CPU kernel for ", op_type);
  }
  // As the CPU backend prepares a node: half-type nodes go through the float32 adapter.
  ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared,
                           cpu::prepare_cpu_kernel(factory, graph, graph.nodes[0]));

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
  std::vector<Shape> actual_shapes;
  ONEPOOL_RETURN_IF_ERROR(run_prepared(prepared, ordered, output_views, threads, &actual_shapes));
  // A data-dependent output: its actual elements, contiguous from the start of the bound.
  for (size_t i = 0; i < results.size(); ++i) {
    if (actual_shapes[i] == results[i].shape) continue;
    ONEPOOL_ASSIGN_OR_RETURN(size_t bytes, tensor_bytes(actual_shapes[i], results[i].dtype));
    results[i].shape = actual_shapes[i];
    results[i].data.resize(bytes);
  }
  return results;
}

inline Expected<InPlaceResult> run_single_node_in_place(
    const std::string& op_type, const std::vector<std::optional<TestInput>>& inputs,
    const OutputSpec& output, const AttributeMap& attributes, int threads) {
  const Graph graph = single_node_graph(op_type, inputs, {output}, attributes);
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  const cpu::KernelFactory factory = registry.find(op_type);
  if (factory == nullptr) {
    return make_status(StatusCode::kUnsupported, "no CPU kernel for ", op_type);
  }
  ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared,
                           cpu::prepare_cpu_kernel(factory, graph, graph.nodes[0]));
  // One buffer: input 0 at its start, room for the output; the other inputs apart.
  const HostTensor& first = inputs[0]->tensor;
  ONEPOOL_ASSIGN_OR_RETURN(size_t output_bytes, tensor_bytes(output.shape, output.dtype));
  std::vector<std::byte> shared(std::max(first.data.size(), output_bytes), std::byte{0xCD});
  std::copy(first.data.begin(), first.data.end(), shared.begin());
  std::vector<HostTensor> others;
  others.reserve(inputs.size());
  std::vector<TensorView> views = {{shared.data(), first.dtype, first.shape, Device{}}};
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      views.emplace_back();
      continue;
    }
    others.push_back(inputs[i]->tensor);
    views.push_back({others.back().data.data(), others.back().dtype, others.back().shape, {}});
  }
  const std::vector<TensorView> outputs = {{shared.data(), output.dtype, output.shape, {}}};
  ONEPOOL_RETURN_IF_ERROR(run_prepared(prepared, views, outputs, threads));
  InPlaceResult result;
  result.output.dtype = output.dtype;
  result.output.shape = output.shape;
  result.output.data.assign(shared.begin(),
                            shared.begin() + static_cast<std::ptrdiff_t>(output_bytes));
  result.in_place_inputs = prepared.in_place_inputs;
  result.in_place_grows = prepared.in_place_grows;
  return result;
}

}  // namespace onepool::testing
