// Import as Model::load runs it: constant folding computes on the CPU kernels. The import layer
// has no arithmetic of its own (planner/core/node_evaluator.h), so a test that imports directly
// and expects shape chains folded passes the evaluator the runtime passes.
#pragma once

#include "planner/import/onnx_import.h"
#include "runtime/cpu/host_evaluation.h"

namespace onepool::testing {

inline ImportOptions with_cpu_folding(ImportOptions options = {}) {
  options.fold_evaluator = cpu::evaluate_single_node_graph;
  return options;
}

}  // namespace onepool::testing
