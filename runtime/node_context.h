// What a kernel factory of any backend may look at when it prepares a node: the node, its
// values' dtypes and static shapes, and the host data of inputs that are weights (Reshape's
// shape, Pad's pads, Resize's scales, ...). Backends add their own knobs by deriving.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "onepool/session.h"
#include "onepool/status.h"
#include "planner/core/graph.h"
#include "runtime/packed_weight_cache.h"

namespace onepool {

class NodeContext {
 public:
  /// `threads`: the CPU threads the kernel will run on (sizes per-thread scratch; 1 elsewhere).
  /// `cpu_isa`: the widest instruction set the CPU kernel may use (checked against the CPU).
  NodeContext(const Graph& graph, const Node& node, int threads = 1, CpuIsa cpu_isa = CpuIsa::kAuto)
      : graph_(graph), node_(node), threads_(threads < 1 ? 1 : threads), cpu_isa_(cpu_isa) {}

  const Node& node() const { return node_; }
  int threads() const { return threads_; }
  CpuIsa cpu_isa() const { return cpu_isa_; }
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
  /// Output i's value; only valid when has_output(i).
  const Value& output(size_t i) const {
    return graph_.values[static_cast<size_t>(node_.outputs[i])];
  }
  /// Input i's host data when it is a weight (constant), else nullptr.
  const HostTensor* constant_input(size_t i) const {
    if (!has_input(i)) return nullptr;
    const Value& value = input(i);
    return value.kind == ValueKind::kWeight ? &graph_.weight(node_.inputs[i]) : nullptr;
  }
  /// Lets the kernel share weights it repacks with the Model's other Sessions (only for a node
  /// of the Model's own graph; see runtime/packed_weight_cache.h).
  void share_packed_weights(PackedWeightCache* cache) { packed_weights_ = cache; }
  /// Weight input `i` repacked by `pack` into the layout (`layout`, `isa`, `parameter`) names:
  /// the copy another Session of the Model already made when there is one, else a new one.
  std::shared_ptr<const std::vector<float>> packed_weight(
      size_t i, PackedLayout layout, uint8_t isa, int64_t parameter,
      const PackedWeightCache::Factory& pack) const {
    if (packed_weights_ == nullptr) return pack();
    return packed_weights_->get_or_create(PackedWeightKey{node_.inputs[i], layout, isa, parameter},
                                          pack);
  }
  /// "node 'n' (Op): " + message, as kInvalidModel / kUnsupported.
  template <class... Args>
  Status error(StatusCode code, const Args&... args) const {
    return make_status(code, describe_node(node_), ": ", args...);
  }

 private:
  const Graph& graph_;
  const Node& node_;
  int threads_ = 1;
  CpuIsa cpu_isa_ = CpuIsa::kAuto;
  PackedWeightCache* packed_weights_ = nullptr;
};

}  // namespace onepool
