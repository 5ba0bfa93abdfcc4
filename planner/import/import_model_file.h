// Reading and parsing a serialized ModelProto. Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

#include "onepool/status.h"

namespace onepool {

/// Reads a whole file into a string. kNotFound when it cannot be opened.
Expected<std::string> read_file_bytes(const std::string& path);
/// Parses `bytes` into `model`. `source` names the origin in errors ("'m.onnx'", "the buffer"):
/// an empty buffer, bytes protobuf rejects, or a message without a graph or ir_version is
/// "<source> is not a valid ONNX model: ..." (kInvalidModel).
Status parse_model_bytes(std::string_view bytes, const std::string& source,
                         onnx::ModelProto* model);
/// The folder that holds `path` ("." for a bare file name).
std::string folder_of(const std::string& path);

}  // namespace onepool
