// Static tensor types read from and written to a GraphProto: the shapes import proves itself
// (bounds of data-dependent outputs, lengths of slices at runtime positions). Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onepool {

using Dims = std::vector<int64_t>;

struct TensorType {
  int32_t elem_type = 0;
  Dims dims;
};

/// The static type of `name` (initializer, graph input, value_info or graph output), if known.
std::optional<TensorType> static_type(const onnx::GraphProto& graph, const std::string& name);

/// Writes `type` as the type of tensor `name`: the graph output's own entry when it is one, else
/// its value_info entry (added when missing).
void set_static_type(onnx::GraphProto* graph, const std::string& name, const TensorType& type);

/// "[2,3]".
std::string dims_text(const Dims& dims);

}  // namespace onepool
