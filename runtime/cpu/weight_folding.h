// Weight folding: a node whose every input is a weight (Transpose of a weight matrix, a Cast or
// Reshape of a constant, ...) is computed once at load with the CPU kernels, and its outputs
// become weights. The planner then sees no activation that is the same on every run, and run()
// does not repeat the work. ONNX Runtime's constant folding is the anchor.
//
// A node is folded only when the CPU backend has a kernel for it, it is deterministic, none of
// its outputs is a graph output, and its outputs are no larger than its inputs (plus a small
// slack), so folding never inflates the weights (an Expand or Tile of a constant stays a node).
#pragma once

#include <cstddef>

#include "planner/core/graph.h"

namespace onepool::cpu {

struct WeightFoldReport {
  int folded_nodes = 0;
  size_t folded_output_bytes = 0;  // bytes of the weights the folded nodes produced
};

/// Folds every weight-only node of `graph` (in execution order, so chains fold entirely), then
/// drops the weights nothing reads any more. A node whose kernel fails on its weights is left in
/// place (the Session reports it when it runs).
WeightFoldReport fold_weight_only_nodes(Graph& graph);

}  // namespace onepool::cpu
