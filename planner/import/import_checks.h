// Model validation before import proper: OnePool's own structural checks and the ONNX checker.
// Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"

namespace onepool {

/// Checks the main graph's structure in O(nodes + edges): every node input is a graph input, an
/// initializer or the output of an EARLIER node (import sorts the nodes first; else "cycle or
/// dangling input", naming node and tensor), no tensor is produced twice, and every graph output
/// exists. kInvalidModel.
Status check_graph_structure(const onnx::GraphProto& graph);
/// Every opset_import version is at least 1 (kInvalidModel naming the domain).
Status check_opset_versions(const onnx::ModelProto& model);
/// True when the model's ir_version or an ONNX-domain opset is newer than this ONNX library knows
/// (its checker would reject a valid model).
bool model_newer_than_onnx_library(const onnx::ModelProto& model);
/// A warning for such a model, naming each version that is too new; empty when none is.
std::string describe_newer_than_library(const onnx::ModelProto& model);
/// onnx::checker::check_model, with its exceptions turned into kInvalidModel. Skipped (ok) for
/// models newer than the library.
Status run_onnx_checker(const onnx::ModelProto& model);
/// onnx::shape_inference::InferShapes with data propagation. Runs strict first; when that throws,
/// keeps its message in `strict_error` and runs lenient (node errors skipped). kInvalidModel only
/// when the lenient run throws too.
Status run_shape_inference(onnx::ModelProto* model, std::string* strict_error);
/// Strict inference without data propagation, for a model of one node whose inputs are all
/// initializers (constant folding): their values are read directly, and data propagation
/// throws on some empty constants (Concat of a [0] tensor).
Status infer_node_alone(onnx::ModelProto* model);

}  // namespace onepool
