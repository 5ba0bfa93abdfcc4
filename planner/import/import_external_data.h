// Resolving TensorProto external data (data_location EXTERNAL) into raw_data. Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "onepool/status.h"

namespace onepool {

/// Loads the external data of every initializer and Constant-node tensor of the main graph into
/// raw_data. `location` is resolved relative to `model_dir`; an empty model_dir rejects external
/// data. Errors (naming the tensor and file): an absolute location or one that leaves model_dir
/// after normalization, a missing file, offset/length beyond the file, a length that differs from
/// the bytes the tensor's shape and dtype need.
Status resolve_external_data(onnx::ModelProto* model, const std::string& model_dir);

}  // namespace onepool
