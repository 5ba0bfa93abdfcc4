// Reading and parsing a serialized ModelProto.
#include "planner/import/import_model_file.h"

#include <climits>
#include <filesystem>
#include <fstream>

namespace onepool {

Expected<std::string> read_file_bytes(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return make_status(StatusCode::kNotFound, "'", path, "' is a directory, not a file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_status(StatusCode::kNotFound, "cannot open '", path, "': no such file");
  // One read of the known size: a stringstream would copy a 100 MB model several times.
  const auto size = std::filesystem::file_size(path, error);
  if (error) return make_status(StatusCode::kNotFound, "cannot read the size of '", path, "'");
  std::string content(static_cast<size_t>(size), '\0');
  file.read(content.data(), static_cast<std::streamsize>(size));
  if (!file) return make_status(StatusCode::kNotFound, "reading '", path, "' failed");
  return content;
}

Status parse_model_bytes(std::string_view bytes, const std::string& source,
                         onnx::ModelProto* model) {
  const std::string prefix = str_cat(source, " is not a valid ONNX model: ");
  if (bytes.empty()) return make_status(StatusCode::kInvalidModel, prefix, "it is empty");
  if (bytes.size() >= static_cast<size_t>(INT_MAX)) {
    return make_status(StatusCode::kUnsupported, prefix, "it is ", bytes.size(),
                       " bytes; protobuf models are limited to 2 GiB (use external data)");
  }
  if (!model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return make_status(StatusCode::kInvalidModel, prefix,
                       "protobuf parsing failed (garbage or truncated file)");
  }
  // Random bytes sometimes parse as a message of unknown fields: require what every model has.
  if (!model->has_ir_version() || !model->has_graph()) {
    return make_status(StatusCode::kInvalidModel, prefix,
                       "it has no ir_version or no graph (garbage or truncated file)");
  }
  return Status::ok();
}

std::string folder_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace onepool
