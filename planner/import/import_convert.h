// ModelProto (bound, inferred, folded) → Graph. Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// Input name → dims as declared before binding ("batch", "?", "3").
using DeclaredDims = std::unordered_map<std::string, std::vector<std::string>>;

/// Builds the Graph: dense ids, nodes in model order (unnamed ones named "<op>_<index>"),
/// initializers as weights (their protos' data is released as it is copied), attributes
/// converted (graph-valued ones kept as Kind::kGraph without content; tensor lists, sparse
/// tensors and type protos dropped), omitted optional inputs/outputs as kNoValue. Every non-weight
/// value must have a supported dtype and static shape; otherwise ONE kUnsupported error lists each
/// such tensor with its producer and why, followed by `strict_error` when not empty.
Expected<Graph> convert_to_graph(onnx::ModelProto* model, const DeclaredDims& declared,
                                 const std::string& strict_error);

}  // namespace onepool
