// Graph IR: the model as dense integer ids, static shapes, and weights held on the host.
//
// import is the only code that sees protobuf; it produces a Graph whose nodes are in a valid
// execution order (the model's own topological order), every value has a known dtype and static
// shape, and every constant (initializers, Constant nodes, folded shape subgraphs) is a weight.
// A Graph is plain data: copyable, no pointers between elements, ids index the vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

using ValueId = int32_t;
using NodeId = int32_t;
constexpr ValueId kNoValue = -1;  // a missing optional input ("" in ONNX)
constexpr NodeId kNoNode = -1;

/// A tensor held on the host: weights, attribute tensors, and constant-folding results.
struct HostTensor {
  DType dtype = DType::kUndefined;
  Shape shape;
  std::vector<std::byte> data;  // little-endian, row-major, exactly bytes(shape, dtype) long

  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(data.data());
  }
  template <class T>
  T* as_mutable() {
    return reinterpret_cast<T*>(data.data());
  }
  int64_t element_count() const { return shape.element_count(); }
  /// Reads element i of an integer or float tensor as int64 (casts floats). For shape math.
  int64_t int_at(int64_t i) const;
  /// Reads element i as double (float16 and bfloat16 widened exactly; other types 0).
  double float_at(int64_t i) const;
};

/// One attribute of a node. Graph-valued attributes (If/Loop bodies) are kept as kGraph with no
/// content: kernels that need them are unsupported and say so.
struct Attribute {
  enum class Kind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  HostTensor tensor;
};

/// A node's attributes by name, in model order.
class AttributeMap {
 public:
  void set(std::string name, Attribute value);
  const Attribute* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }

  int64_t get_int(const std::string& name, int64_t fallback) const;
  float get_float(const std::string& name, float fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> get_floats(const std::string& name, std::vector<float> fallback = {}) const;
  const std::vector<std::pair<std::string, Attribute>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, Attribute>> entries_;
};

enum class ValueKind : uint8_t {
  kActivation,  // produced by a node; planned in the pool
  kGraphInput,  // fed by the caller; planned in the pool (live from step 0)
  kWeight,      // initializer, Constant, or folded constant; lives in the weights region
};

struct Value {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  ValueKind kind = ValueKind::kActivation;
  bool is_graph_output = false;
  NodeId producer = kNoNode;      // kNoNode for graph inputs and weights
  std::vector<NodeId> consumers;  // nodes reading it, in execution order, one entry per node
  int32_t weight_index = -1;      // index into Graph::weights when kind == kWeight
  /// For graph inputs: the dims as the model declares them ("batch", "" or a number), for
  /// messages and `inspect`. Empty for other values.
  std::vector<std::string> declared_dims;
  /// Non-empty when `shape` is only an upper bound of the shape a run produces (an output of
  /// NonZero, Compress, Unique or NonMaxSuppression, or a value computed from one): why the bound
  /// holds ("NonZero of 'x': at most numel(x) = 6 elements"). The plan reserves the bound; a run
  /// reports the actual shape.
  std::string bound;

  /// Unaligned byte size (element count × dtype size). Import guarantees it does not overflow.
  size_t bytes() const;
};

struct Graph;

struct Node {
  std::string name;              // never empty: import names unnamed nodes "<op>_<index>"
  std::string op_type;           // "Conv"
  std::string domain;            // "" for the default ONNX domain
  std::vector<ValueId> inputs;   // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;  // kNoValue for an omitted optional output
  AttributeMap attributes;
  /// An If with a runtime condition: {then_branch, else_branch}, each a Graph of its own whose
  /// graph inputs are the outer values the branches read: this node's inputs after the
  /// condition, in the same order.
  /// Empty for every other node.
  std::vector<std::shared_ptr<const Graph>> subgraphs;

  /// The value id of input i, or kNoValue when absent.
  ValueId input(size_t i) const { return i < inputs.size() ? inputs[i] : kNoValue; }
};

/// A graph input bound to constant values at import (a shape input: LoadOptions::
/// shape_input_values). It is no longer a graph input: import made it a constant, which folding
/// may have consumed; the binding is kept so a Session can check ONNX-style feeds against it.
struct BoundShapeInput {
  std::string name;
  HostTensor value;           // dtype as declared; shape as declared, or [N] / [] from the values
  size_t model_position = 0;  // index among the model file's graph inputs (initializers aside)
  std::string needed_by;      // "node 'ReduceSum_0' (ReduceSum) input 1 (axes)"
};

struct Graph {
  std::string name;
  int64_t opset = 0;  // default-domain opset version
  std::vector<Value> values;
  std::vector<Node> nodes;       // execution order
  std::vector<ValueId> inputs;   // graph inputs fed by the caller (not initializers)
  std::vector<ValueId> outputs;  // graph outputs, in model order
  std::vector<HostTensor> weights;
  /// Shape inputs bound at import, in model order (not in `inputs`).
  std::vector<BoundShapeInput> shape_inputs;
  /// What import accepted but a user should hear about (a model newer than the ONNX library).
  std::vector<std::string> import_warnings;

  /// Id of the value named `name`, or kNoValue.
  ValueId find_value(const std::string& name) const;
  /// Adds a value and returns its id.
  ValueId add_value(Value value);
  /// The weight behind value `id` (which must be kind kWeight).
  const HostTensor& weight(ValueId id) const;
  /// Recomputes every Value's producer and consumers from the nodes.
  void rebuild_edges();
  /// Total bytes of all weights (unaligned).
  size_t weight_bytes() const;
};

/// "node 'conv_1' (Conv)": the prefix every node-level error message starts with.
std::string describe_node(const Node& node);

}  // namespace onepool
