// ONNX → Graph. The only module that sees protobuf.
//
// Steps: read the file (and external-data files beside it; a path that leaves the model's
// folder is rejected), run the ONNX checker, bind symbolic input dims from the user's shapes and
// dims, run ONNX shape inference, turn Constant nodes and initializers into weights, and fold
// constant subgraphs (the Shape → Gather → Concat → Reshape chains exporters emit) until every
// value has a known dtype and a static shape. Errors list every tensor that stays unknown.
#pragma once

#include <string>
#include <string_view>

#include "onepool/status.h"
#include "planner/core/graph.h"
#include "planner/import/import_options.h"

namespace onepool {

/// Loads `path` (external data is resolved relative to its folder).
Expected<Graph> import_onnx_file(const std::string& path, const ImportOptions& options);
/// Loads a serialized ModelProto; external data is resolved relative to `model_dir`
/// (empty: external data is rejected).
Expected<Graph> import_onnx_bytes(std::string_view bytes, const std::string& model_dir,
                                  const ImportOptions& options);

}  // namespace onepool
