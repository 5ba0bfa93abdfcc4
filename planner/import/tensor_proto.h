// Reading ONNX TensorProto files (the backend test layout: test_data_set_N/input_K.pb) into
// HostTensors, without exposing protobuf to callers.
#pragma once

#include <string>
#include <utility>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// Reads a serialized TensorProto file; returns its name (may be empty) and data.
Expected<std::pair<std::string, HostTensor>> read_tensor_proto_file(const std::string& path);
/// Writes `tensor` as a serialized TensorProto named `name`.
Status write_tensor_proto_file(const std::string& path, const std::string& name,
                               const HostTensor& tensor);

}  // namespace onepool
