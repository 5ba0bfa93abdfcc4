// ONNX → Graph. The only module that sees protobuf.
//
// Steps: read the file (and external-data files beside it; a path that leaves the model's
// folder is rejected), run the ONNX checker, bind symbolic input dims from the user's shapes and
// dims, run ONNX shape inference, turn Constant nodes and initializers into weights, and fold
// constant subgraphs (the Shape → Gather → Concat → Reshape chains exporters emit) until every
// value has a known dtype and a static shape. Errors list every tensor that stays unknown.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onepool/model.h"  // ShapeInputValues
#include "onepool/status.h"
#include "planner/graph.h"

namespace onepool {

struct ImportOptions {
  /// --shapes: full shapes of graph inputs by name.
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
  /// --dim: values of symbolic dims by name ("batch" = 8).
  std::vector<std::pair<std::string, int64_t>> dims;
  /// --values: the values of shape inputs by name (see planner/import_shape_inputs.h).
  std::map<std::string, ShapeInputValues> shape_input_values;
  /// --bound: upper bounds of data-dependent lengths by tensor name (LoadOptions::bounds).
  std::map<std::string, int64_t> bounds;
  /// Run onnx::checker::check_model.
  bool run_checker = true;
  /// Fold constant subgraphs into weights.
  bool fold_constants = true;
};

/// Loads `path` (external data is resolved relative to its folder).
Expected<Graph> import_onnx_file(const std::string& path, const ImportOptions& options);
/// Loads a serialized ModelProto; external data is resolved relative to `model_dir`
/// (empty: external data is rejected).
Expected<Graph> import_onnx_bytes(std::string_view bytes, const std::string& model_dir,
                                  const ImportOptions& options);

}  // namespace onepool
