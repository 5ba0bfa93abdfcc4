// Data-dependent output shapes, planned at proven bounds. Internal to import.
//
// NonZero, Compress, Unique and NonMaxSuppression produce as many elements as their input data
// says, so ONNX shape inference leaves one dim unknown. Import replaces it with an upper bound
// proven from static facts and writes it as the output's type (value_info, or the graph output's
// own type, whose declared dims are only what one example produced):
//   NonZero(x)                   [max(rank(x), 1), numel(x)]
//   Compress(x, c[L]) no axis    [min(L, numel(x))]; with axis: dim[axis] → min(L, dim[axis])
//   Unique(x) no axis            Y, indices, counts [numel(x)]; inverse_indices exactly [numel]
//   Unique(x, axis)              Y keeps x's shape, indices/counts [dim]; inverse exactly [dim]
//   NonMaxSuppression(b, s, M)   [batch × classes × min(boxes, M), 3] (M a constant; else boxes)
// and, where the user declared a bound on an output (--bound, LoadOptions::bounds; K, start,
// limit and delta then stay runtime values):
//   TopK(x, K) along axis        values, indices: dim[axis] → min(bound, dim[axis])
//   Range(start, limit, delta)   [bound]
// Shape inference then carries the bounds downstream. `bounds` maps each bounded tensor to why
// its bound holds; values computed from one are bounded too (mark_bounded_values).
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// Tensor name → why its static shape is an upper bound.
using BoundReasons = std::unordered_map<std::string, std::string>;

/// What bound_data_dependent_outputs found so far.
struct DataDependentBounds {
  BoundReasons reasons;
  std::unordered_set<std::string> nodes_done;  // names of the nodes bounded already
  std::map<std::string, int64_t> user;         // --bound entries (LoadOptions::bounds)
  std::set<std::string> user_used;             // the entries that bounded a TopK or Range
};

/// Bounds the outputs of every data-dependent node whose inputs have static shapes and that is
/// not bounded yet; returns how many nodes it bounded (the caller re-runs shape inference when
/// any). Errors: a bound that does not fit in int64 or a malformed node (names node and tensor).
Expected<int> bound_data_dependent_outputs(onnx::GraphProto* graph, DataDependentBounds* bounds);

/// Every tensor computed from a bounded one (nodes in execution order): the names whose Shape
/// and Size must not fold.
std::unordered_set<std::string> runtime_shaped_names(const onnx::GraphProto& graph,
                                                     const BoundReasons& bounds);

/// Sets Value::bound on the bounded tensors and on every value computed from one ("computed
/// from 'nz' (NonZero of 'x': ...)").
void mark_bounded_values(Graph* graph, const BoundReasons& bounds);

}  // namespace onepool
