// External data: `location` relative to the model's folder, optional `offset` and `length`.
#include "planner/import/import_external_data.h"

#include <charconv>
#include <filesystem>
#include <fstream>

#include "planner/import/import_tensor.h"

namespace onepool {

namespace {

struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

Expected<int64_t> parse_non_negative(const std::string& text, const std::string& what) {
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return make_status(StatusCode::kInvalidModel, "external data ", what, " '", text,
                       "' is not a non-negative integer");
  }
  return value;
}

Expected<ExternalRef> parse_external_ref(const onnx::TensorProto& tensor) {
  ExternalRef ref;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") ref.location = entry.value();
    if (entry.key() == "offset") {
      ONEPOOL_ASSIGN_OR_RETURN(ref.offset, parse_non_negative(entry.value(), "offset"));
    }
    if (entry.key() == "length") {
      ONEPOOL_ASSIGN_OR_RETURN(ref.length, parse_non_negative(entry.value(), "length"));
    }
  }
  if (ref.location.empty()) {
    return make_status(StatusCode::kInvalidModel, "external data has no 'location'");
  }
  return ref;
}

// Joins `location` to `model_dir`, refusing anything that could leave the folder.
Expected<std::filesystem::path> safe_join(const std::string& model_dir,
                                          const std::string& location) {
  const std::filesystem::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    return make_status(StatusCode::kInvalidModel, "external data location '", location,
                       "' is absolute; it must be relative to the model's folder");
  }
  const std::filesystem::path normal = relative.lexically_normal();
  if (normal.empty() || *normal.begin() == ".." || normal == ".") {
    return make_status(StatusCode::kInvalidModel, "external data location '", location,
                       "' leaves the model's folder");
  }
  return std::filesystem::path(model_dir) / normal;
}

Status read_range(const std::filesystem::path& file_path, const ExternalRef& ref,
                  size_t expected_bytes, std::string* out) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file_path, error)) {
    return make_status(StatusCode::kNotFound, "external data file '", ref.location,
                       "' does not exist");
  }
  const auto file_size = static_cast<int64_t>(std::filesystem::file_size(file_path, error));
  if (error || ref.offset > file_size) {
    return make_status(StatusCode::kInvalidModel, "external data offset ", ref.offset,
                       " is beyond the end of '", ref.location, "' (", file_size, " bytes)");
  }
  const int64_t length = ref.length < 0 ? file_size - ref.offset : ref.length;
  if (length > file_size - ref.offset) {
    return make_status(StatusCode::kInvalidModel, "external data range [", ref.offset, ", ",
                       ref.offset, "+", length, ") is beyond the end of '", ref.location, "' (",
                       file_size, " bytes)");
  }
  if (static_cast<size_t>(length) != expected_bytes) {
    return make_status(StatusCode::kInvalidModel, "external data length ", length,
                       " bytes differs from the ", expected_bytes,
                       " bytes its shape and dtype need");
  }
  std::ifstream file(file_path, std::ios::binary);
  out->resize(expected_bytes);
  file.seekg(ref.offset);
  file.read(out->data(), static_cast<std::streamsize>(expected_bytes));
  if (!file) {
    return make_status(StatusCode::kNotFound, "reading external data file '", ref.location,
                       "' failed");
  }
  return Status::ok();
}

Status resolve_tensor(onnx::TensorProto* tensor, const std::string& model_dir) {
  ONEPOOL_ASSIGN_OR_RETURN(ExternalRef ref, parse_external_ref(*tensor));
  if (model_dir.empty()) {
    return make_status(StatusCode::kInvalidModel, "its data is in the external file '",
                       ref.location,
                       "', which a model loaded from memory cannot read (there is no model "
                       "folder to find it in): load the model from its file instead");
  }
  ONEPOOL_ASSIGN_OR_RETURN(std::filesystem::path file_path, safe_join(model_dir, ref.location));
  const DType dtype = dtype_from_onnx(tensor->data_type());
  if (dtype == DType::kUndefined) {
    return make_status(StatusCode::kUnsupported, "dtype ", onnx_dtype_name(tensor->data_type()),
                       " is not supported");
  }
  ONEPOOL_ASSIGN_OR_RETURN(Shape shape, Shape::from_dims(std::vector<int64_t>(
                                            tensor->dims().begin(), tensor->dims().end())));
  ONEPOOL_ASSIGN_OR_RETURN(size_t expected_bytes, tensor_bytes(shape, dtype));
  std::string data;
  ONEPOOL_RETURN_IF_ERROR(read_range(file_path, ref, expected_bytes, &data));
  tensor->clear_external_data();
  tensor->set_data_location(onnx::TensorProto::DEFAULT);
  tensor->set_raw_data(std::move(data));
  return Status::ok();
}

Status resolve_if_external(onnx::TensorProto* tensor, const std::string& model_dir) {
  if (tensor->data_location() != onnx::TensorProto::EXTERNAL) return Status::ok();
  Status status = resolve_tensor(tensor, model_dir);
  return status.with_context(str_cat("tensor '", tensor->name(), "'"));
}

}  // namespace

Status resolve_external_data(onnx::ModelProto* model, const std::string& model_dir) {
  onnx::GraphProto* graph = model->mutable_graph();
  for (auto& initializer : *graph->mutable_initializer()) {
    ONEPOOL_RETURN_IF_ERROR(resolve_if_external(&initializer, model_dir));
  }
  for (auto& node : *graph->mutable_node()) {
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_t()) {
        ONEPOOL_RETURN_IF_ERROR(resolve_if_external(attribute.mutable_t(), model_dir));
      }
    }
  }
  return Status::ok();
}

}  // namespace onepool
