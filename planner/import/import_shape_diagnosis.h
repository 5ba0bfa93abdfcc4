// Why a node's output has no valid shape when the node itself is at fault. ONNX shape inference
// leaves a dim unknown (or computes a negative one) for a window larger than its padded input,
// negative Tile repeats, a negative ConstantOfShape dim or pads that remove more than an axis
// holds; without this the user read "unknown dim at axis 2". Internal to import.
#pragma once

#include <string>

#include "planner/core/graph.h"

namespace onepool {

/// What makes `node`'s output shape invalid, from its attributes and from the static shapes and
/// constant values of its inputs: "kernel_shape[0] = 8 spans 8 elements but axis 2 of input 'x'
/// holds 4 (with pads 0 + 0)". Empty when the node's inputs are unknown or nothing is wrong
/// with them, so the caller keeps its generic message.
std::string diagnose_invalid_output_shape(const Graph& graph, const Node& node);

}  // namespace onepool
