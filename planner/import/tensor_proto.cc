// Reading and writing serialized TensorProto files (the ONNX backend-test .pb layout).
#include "planner/import/tensor_proto.h"

#include <fstream>
#include <sstream>

#include "planner/import/import_tensor.h"

namespace onepool {

Expected<std::pair<std::string, HostTensor>> read_tensor_proto_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_status(StatusCode::kNotFound, "cannot open tensor file '", path, "'");
  std::ostringstream content;
  content << file.rdbuf();
  onnx::TensorProto proto;
  if (!proto.ParseFromString(content.str())) {
    return make_status(StatusCode::kInvalidArgument, "'", path,
                       "' is not a valid serialized ONNX TensorProto");
  }
  auto tensor = host_tensor_from_proto(proto);
  if (!tensor) return tensor.status().with_context(str_cat("reading '", path, "'"));
  return std::make_pair(proto.name(), std::move(tensor).value());
}

Status write_tensor_proto_file(const std::string& path, const std::string& name,
                               const HostTensor& tensor) {
  onnx::TensorProto proto;
  host_tensor_to_proto(tensor, name, &proto);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return make_status(StatusCode::kNotFound, "cannot create tensor file '", path, "'");
  if (!proto.SerializeToOstream(&file)) {
    return make_status(StatusCode::kInternal, "writing tensor file '", path, "' failed");
  }
  return Status::ok();
}

}  // namespace onepool
