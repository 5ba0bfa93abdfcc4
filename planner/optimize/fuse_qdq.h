// QDQ int8 fusion: DequantizeLinear → Conv / MatMul [→ Relu] → QuantizeLinear becomes
// QLinearConv / QLinearMatMul where that is exact (conditions in fuse_qdq.cc). Part of level all.
#pragma once

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// Runs the QDQ fusion alone on `graph` (edges need not be current) and returns how many
/// patterns it rewrote; dead values and weights are dropped (compact_graph) when it rewrote any.
/// Model::from_graph calls it before weight folding, which would turn DequantizeLinear of an
/// int8 weight into a float weight and hide the pattern; optimize_graph runs the same pass at
/// level all for callers that fold nothing. Errors only for out-of-range ids (kInternal); the
/// graph is then unchanged. Not thread-safe on one graph.
Expected<int> fuse_qdq_operators(Graph& graph);

}  // namespace onepool
