// Running one node on the host, for import-time constant folding. Import hands a node whose
// inputs are all constants to an evaluator its caller supplies (ImportOptions::fold_evaluator);
// the runtime supplies the CPU backend's kernels (runtime/cpu/host_evaluation.h). So each
// operator's semantics are written once, in its kernel: import has no arithmetic of its own.
#pragma once

#include <functional>
#include <vector>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// Computes the outputs of `graph.nodes.front()`, the graph's only node. Its present inputs are
/// weights (host data in graph.weights); its outputs have static shapes and dtypes. Returns one
/// tensor per output, in order (an empty tensor for an omitted one). kUnsupported: the
/// evaluator does not run this node, which then stays in the model; any other error: the node's
/// constant inputs are invalid for it.
using NodeEvaluator = std::function<Expected<std::vector<HostTensor>>(const Graph& graph)>;

}  // namespace onepool
