// Constant folding on the ModelProto, interleaved with ONNX shape inference. Internal to import.
//
// Step 1. Constant nodes (any size) become initializers.
// Step 2. Repeat until a round folds nothing (at most kMaxFoldRounds):
//   run ONNX shape inference (so Reshape/Expand/Resize/ConstantOfShape outputs resolve from
//   now-constant inputs), then walk the nodes in order and evaluate on the host every node of the
//   foldable set whose inputs are all constant (Shape and Size also fold when their input has a
//   static shape). Results within max_elements replace their node with an initializer. Nodes that
//   produce a graph output are kept so the graph still computes them.
// Step 3. Drop initializers that nothing reads.
// Cost: each round is one shape-inference pass plus O(nodes); rounds are bounded by the depth of
// shape computations that depend on inferred shapes (usually 1-3).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_set>

#include "onepool/status.h"
#include "planner/core/node_evaluator.h"

namespace onepool {

struct FoldOptions {
  bool fold = true;              ///< false: only Step 1, one inference pass, and Step 3
  int64_t max_elements = 65536;  ///< the largest folded output materialized
  /// Tensors whose static shape is only an upper bound (downstream of NonZero, Unique, ...):
  /// Shape and Size of them never fold.
  std::unordered_set<std::string> runtime_shaped;
  /// Computes every other foldable node (ImportOptions::fold_evaluator); empty: only Shape and
  /// Size fold.
  NodeEvaluator evaluator;
};

constexpr int kMaxFoldRounds = 32;

/// The tensor a Constant node holds, from whichever value_* attribute it has (named after its
/// output). Errors: not one attribute and one output; string or sparse constants.
Status constant_tensor(const onnx::NodeProto& node, onnx::TensorProto* tensor);

/// Runs the steps above on `model`. `strict_error` receives the last strict shape-inference error
/// (empty when strict inference succeeded) for later messages about unknown shapes. Errors: a
/// Constant node OnePool cannot represent (string, sparse), a foldable node whose constant inputs
/// are invalid for it (names the node), or shape inference throwing in lenient mode.
Status fold_constants(onnx::ModelProto* model, const FoldOptions& options,
                      std::string* strict_error);

}  // namespace onepool
