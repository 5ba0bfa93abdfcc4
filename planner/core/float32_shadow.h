// A node alone in a graph of its own, with every float16 / bfloat16 value retyped float32 and
// every half weight widened to float32: what a backend's float32 kernel factory is shown when it
// runs a half-type node in float32 (runtime/cpu/half_compute.h, runtime/cuda/half_compute.h).
#pragma once

#include <utility>
#include <vector>

#include "planner/core/graph.h"

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

/// How one input or output of a half node reaches its float32 kernel, for a backend's adapter.
struct HalfConversion {
  enum class Kind : uint8_t {
    kPassThrough,  // not a half type, or omitted: the node's own view
    kWeight,       // a half weight (the shadow holds its float32 copy on the host)
    kConverted,    // converted on every run into a float32 buffer at `offset` of the workspace
  };
  Kind kind = Kind::kPassThrough;
  DType half_dtype = DType::kUndefined;
  int64_t count = 0;
  size_t offset = 0;
};

/// One entry per id of `graph`. Half activations, and half weights too when
/// `weights_per_run`, are kConverted, their buffers laid out from `bytes` on (which grows) in
/// multiples of `alignment`.
std::vector<HalfConversion> plan_half_conversions(const Graph& graph,
                                                  const std::vector<ValueId>& ids,
                                                  bool weights_per_run, size_t alignment,
                                                  size_t& bytes);

/// Views of `shadow`'s values `ids` (float32 where the node has a half type) on `device`, with
/// no data yet; with `host_weights`, weights point at the shadow's float32 host copies.
std::vector<TensorView> shadow_views(const Graph& shadow, const std::vector<ValueId>& ids,
                                     Device device, bool host_weights);

}  // namespace onepool
