// The CPU kernel interface: a kernel is prepared once per node at Session creation (attributes
// parsed, shapes and strides precomputed, workspace declared) and then run many times.
//
// Contract for Kernel::run: no heap allocation, no exception, no global state. Inputs and outputs
// are views into the pool or the weights region; shapes equal the static shapes seen at prepare
// time. Any scratch memory comes from `workspace` (declared by the factory, planned in the pool).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "planner/graph.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {

/// What a kernel factory may look at: the node, its values' dtypes and static shapes, and the
/// data of inputs that are weights (Reshape's shape, Pad's pads, Resize's scales, ...).
class NodeContext {
 public:
  NodeContext(const Graph& graph, const Node& node) : graph_(graph), node_(node) {}

  const Node& node() const { return node_; }
  const Graph& graph() const { return graph_; }
  size_t input_count() const { return node_.inputs.size(); }
  size_t output_count() const { return node_.outputs.size(); }
  /// True when input i exists (not omitted and i < input_count()).
  bool has_input(size_t i) const { return node_.input(i) != kNoValue; }
  bool has_output(size_t i) const {
    return i < node_.outputs.size() && node_.outputs[i] != kNoValue;
  }
  /// Input i's value; only valid when has_input(i).
  const Value& input(size_t i) const { return graph_.values[static_cast<size_t>(node_.inputs[i])]; }
  const Value& output(size_t i) const {
    return graph_.values[static_cast<size_t>(node_.outputs[i])];
  }
  /// Input i's data when it is a weight (constant), else nullptr.
  const HostTensor* constant_input(size_t i) const {
    if (!has_input(i)) return nullptr;
    const Value& value = input(i);
    return value.kind == ValueKind::kWeight ? &graph_.weight(node_.inputs[i]) : nullptr;
  }
  /// "node 'n' (Op): " + message, as kInvalidModel / kUnsupported.
  template <class... Args>
  Status error(StatusCode code, const Args&... args) const {
    return make_status(code, describe_node(node_), ": ", args...);
  }

 private:
  const Graph& graph_;
  const Node& node_;
};

/// What a kernel sees at run time. Omitted optional inputs have data == nullptr.
struct RunContext {
  std::span<const TensorView> inputs;
  std::span<const TensorView> outputs;
  std::byte* workspace = nullptr;
  size_t workspace_bytes = 0;
  ThreadPool* threads = nullptr;  // never null at run time
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Computes the outputs. Must not allocate.
  virtual Status run(const RunContext& context) = 0;
};

/// A prepared kernel and the scratch bytes it needs at run time.
struct PreparedKernel {
  std::unique_ptr<Kernel> kernel;
  size_t workspace_bytes = 0;
  /// Input index the kernel may overwrite with its output 0 (same bytes), or -1. The planner
  /// uses it only when that input dies at this step and is not a graph input or output.
  int in_place_input = -1;
  /// Output 0 may share input 0's bytes even while input 0 lives on (Reshape and friends):
  /// run() skips its copy when the two coincide.
  bool output_is_view = false;
  /// Concat: run() skips every input whose data already sits at its slice of the output.
  bool concat_in_place = false;
};

/// Prepares a kernel for a node, or explains why the node is unsupported (kUnsupported, naming
/// the op, node and dtype) or malformed (kInvalidModel).
using KernelFactory = Expected<PreparedKernel> (*)(const NodeContext& node);

}  // namespace onepool::cpu
