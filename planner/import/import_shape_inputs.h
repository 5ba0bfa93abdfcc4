// Shape inputs (TensorRT's shape tensors): graph inputs whose VALUE a node needs to know its
// output shape, bound to constants at import so the graph is planned statically. Internal to
// import.
//
// A node reads a shape parameter at a fixed input position (Reshape's shape, Slice's starts,
// ReduceSum's axes, Resize's scales, TopK's K, Range's bounds, the M of a Loop with scan
// outputs: the table in
// shape_parameters()). A graph input is a shape input when its value reaches such a position,
// directly or through other nodes; Shape and Size stop the walk (their outputs depend on shapes
// only). Each shape input needs a value (LoadOptions::shape_input_values, `--values`): the value
// becomes an initializer of the input's declared dtype, and the existing shape inference and
// constant folding do the rest.
// Cost: O(nodes + edges) for the walk (each value is visited once).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onepool/model.h"
#include "onepool/status.h"
#include "planner/core/graph.h"

// Declared, not included: the CLI's conformance runner reads find_shape_inputs_in_file without
// ONNX's generated headers (only import includes those).
namespace onnx {
class ModelProto;
}  // namespace onnx

namespace onepool {

/// One shape-parameter input of an op: its position and its name in the ONNX spec.
struct ShapeParameter {
  int position = 0;
  const char* name = "";
};

/// The shape-parameter inputs of a default-domain op at `opset` (empty for other ops).
std::vector<ShapeParameter> shape_parameters(const std::string& op_type, int64_t opset);

/// Where a shape input's value is needed (the first such node in model order).
struct ShapeInputUse {
  std::string input;          ///< the graph input
  size_t model_position = 0;  ///< its index among the graph inputs that are not initializers
  std::string node;           ///< the node that reads the shape parameter
  std::string op_type;
  int position = 0;       ///< the node's input index
  std::string parameter;  ///< "axes"
  std::string via;        ///< the node that reads the graph input on the way, or empty
  /// "node 'ReduceSum_0' (ReduceSum) input 1 (axes)", plus " through node 'Cast_3'" when indirect.
  std::string describe() const;
};

/// Upper bounds of data-dependent lengths by tensor name (LoadOptions::bounds, `--bound`).
using LengthBounds = std::map<std::string, int64_t>;

/// The shape inputs of `model`'s main graph, in graph-input order. A Loop's M is one when the
/// Loop has a scan output without a `bounds` entry (M then fixes its length).
std::vector<ShapeInputUse> find_shape_inputs(const onnx::ModelProto& model,
                                             const LengthBounds& bounds = {});
/// The same for a model file (parsed, nothing else). Errors: unreadable or invalid file.
Expected<std::vector<ShapeInputUse>> find_shape_inputs_in_file(const std::string& path);

/// Binds `values` (by input name): each shape input becomes an initializer with its values, of
/// the input's declared dtype, shaped as declared (a scalar, [N] when the rank-1 dim is open, one
/// open dim solved from the count). Errors (kInvalidArgument unless noted), each naming the
/// input: a name that is not a shape input (lists the shape inputs), shape inputs left without a
/// value (lists each with the node that reads it and says how to give one), a count that does not
/// fit the declared shape, a value that does not fit the dtype (a fraction for an integer input,
/// out of range), a dtype other than integers, float32 and float64 (kUnsupported).
Expected<std::vector<BoundShapeInput>> bind_shape_inputs(
    onnx::ModelProto* model, const std::map<std::string, ShapeInputValues>& values,
    const LengthBounds& bounds = {});

}  // namespace onepool
