// A node alone in a graph of its own, with every float16 / bfloat16 value retyped float32 and
// every half weight widened to float32: what a backend's float32 kernel factory is shown when it
// runs a half-type node in float32 (runtime/cpu/half_compute.h, runtime/cuda/half_compute.h).
#pragma once

#include <utility>
#include <vector>

#include "planner/graph.h"

namespace onepool {

/// True for float16 and bfloat16.
bool is_half_dtype(DType dtype);

/// True when an input or output of `node` is float16 or bfloat16.
bool node_touches_half_types(const Graph& graph, const Node& node);

class Float32Shadow {
 public:
  Float32Shadow(const Graph& graph, const Node& node);
  Float32Shadow(const Float32Shadow&) = delete;
  Float32Shadow& operator=(const Float32Shadow&) = delete;

  const Graph& graph() const { return graph_; }
  /// The node, its value ids remapped into graph().
  const Node& node() const { return graph_.nodes.front(); }

 private:
  ValueId retyped(const Graph& source, ValueId id);

  Graph graph_;
  std::vector<std::pair<ValueId, ValueId>> mapped_;  // source id -> shadow id
};

/// The float32 copy of a float16 / bfloat16 host tensor.
HostTensor widen_to_float32(const HostTensor& half);

}  // namespace onepool
