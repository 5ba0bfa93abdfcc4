// Node order: exporters do not always list nodes in a valid execution order (a Cast of a graph
// input listed after the Conv that reads it). Import sorts them first. Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"

namespace onepool {

/// Reorders the graph's nodes into a topological order that keeps the model's own order wherever
/// it is already valid (Kahn's algorithm, always taking the ready node listed first). A node with
/// a subgraph (If, Loop, Scan) depends on the outer-scope values its body reads. Fails with
/// kInvalidModel on a real cycle, naming every node on it, or on an input nothing produces.
Status sort_nodes_topologically(onnx::GraphProto* graph);

}  // namespace onepool
