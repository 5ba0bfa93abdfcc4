// Host helpers shared by the constant-folding evaluators: tensor creation under an element limit,
// element stores, broadcasting, and NodeProto attribute access. Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/status.h"
#include "planner/graph.h"

namespace onepool {

/// What an evaluator gets: the node, the model's default-domain opset, its inputs (null for an
/// omitted optional input) and the largest output it may materialize.
struct FoldContext {
  const onnx::NodeProto* node = nullptr;
  int64_t opset = 0;
  std::vector<const HostTensor*> inputs;
  int64_t max_elements = 0;

  const HostTensor* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
};

using FoldResult = Expected<std::vector<HostTensor>>;

/// kUnsupported: "this evaluator does not handle it" (the node stays). Not an error to report.
Status fold_unsupported(const FoldContext& context, const std::string& why);
/// kInvalidModel naming the node: the model itself is wrong (out-of-range index, bad shape).
Status fold_invalid(const FoldContext& context, const std::string& why);

/// A zero-filled tensor; kResourceExhausted when it has more than max_elements elements.
Expected<HostTensor> new_tensor(DType dtype, const Shape& shape, int64_t max_elements);
/// True for float32/float64 (the dtypes host arithmetic does in double).
bool is_float_dtype(DType dtype);
/// True for dtypes host arithmetic handles (numbers and bool; not float16/bfloat16).
bool is_arith_dtype(DType dtype);
void store_int(HostTensor& tensor, int64_t i, int64_t value);
void store_float(HostTensor& tensor, int64_t i, double value);
/// Copies element `from` of `source` to element `to` of `target` (same dtype).
void copy_element(const HostTensor& source, int64_t from, HostTensor& target, int64_t to);
/// The 1-D int tensor's values (a shape, axes, starts...).
std::vector<int64_t> int_values(const HostTensor& tensor);

/// Numpy (multidirectional) broadcast of two shapes; kInvalidModel when incompatible.
Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b);
/// The flat index into `in` read for flat output index `flat` of `out` (in broadcasts to out).
int64_t broadcast_source(const Shape& out, const Shape& in, int64_t flat);
/// Normalizes a possibly negative axis against `rank`; -1 when out of range.
int normalize_axis(int64_t axis, int rank);

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);
int64_t attribute_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
/// The ints attribute, or nullptr-equivalent: `found` says whether it exists.
std::vector<int64_t> attribute_ints(const onnx::NodeProto& node, const std::string& name,
                                    bool* found);

}  // namespace onepool
