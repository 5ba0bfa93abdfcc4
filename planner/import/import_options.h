// What a caller sets for an import (LoadOptions carries the same, runtime/model.cc maps it).
// Its own header so the import steps that read it do not include onnx_import.h, which includes
// them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onepool/model.h"  // ShapeInputValues
#include "planner/core/node_evaluator.h"

namespace onepool {

struct ImportOptions {
  /// --shapes: full shapes of graph inputs by name.
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
  /// --dim: values of symbolic dims by name ("batch" = 8).
  std::vector<std::pair<std::string, int64_t>> dims;
  /// --values: the values of shape inputs by name (see planner/import/import_shape_inputs.h).
  std::map<std::string, ShapeInputValues> shape_input_values;
  /// --bound: upper bounds of data-dependent lengths by tensor name (LoadOptions::bounds).
  std::map<std::string, int64_t> bounds;
  /// Run onnx::checker::check_model.
  bool run_checker = true;
  /// Fold constant subgraphs into weights.
  bool fold_constants = true;
  /// Computes a foldable node whose inputs are all constants (the runtime passes the CPU
  /// kernels, runtime/cpu/host_evaluation.h). Empty: only Shape and Size fold, from static
  /// shapes; every other node stays in the graph.
  NodeEvaluator fold_evaluator;
};

}  // namespace onepool
