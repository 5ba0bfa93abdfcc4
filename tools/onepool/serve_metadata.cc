// Datatype names and the metadata / config documents of the KServe codec (serve_codec.h).
#include <array>
#include <utility>

#include "onepool/version.h"
#include "tools/onepool/serve_codec.h"

namespace onepool::serve {

namespace {

constexpr std::array<std::pair<DType, const char*>, 13> kKServeNames = {{
    {DType::kFloat32, "FP32"},
    {DType::kFloat64, "FP64"},
    {DType::kFloat16, "FP16"},
    {DType::kBFloat16, "BF16"},
    {DType::kInt8, "INT8"},
    {DType::kInt16, "INT16"},
    {DType::kInt32, "INT32"},
    {DType::kInt64, "INT64"},
    {DType::kUInt8, "UINT8"},
    {DType::kUInt16, "UINT16"},
    {DType::kUInt32, "UINT32"},
    {DType::kUInt64, "UINT64"},
    {DType::kBool, "BOOL"},
}};

nlohmann::json tensor_metadata(const std::vector<ServedTensor>& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const ServedTensor& tensor : tensors) {
    list.push_back({{"name", tensor.info.name},
                    {"datatype", kserve_dtype_name(tensor.info.dtype)},
                    {"shape", tensor.dims}});
  }
  return list;
}

nlohmann::json tensor_config(const std::vector<ServedTensor>& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const ServedTensor& tensor : tensors) {
    list.push_back({{"name", tensor.info.name},
                    {"data_type", triton_dtype_name(tensor.info.dtype)},
                    {"dims", tensor.dims}});
  }
  return list;
}

}  // namespace

std::string kserve_dtype_name(DType dtype) {
  for (const auto& [known, name] : kKServeNames) {
    if (known == dtype) return name;
  }
  return "";
}

DType dtype_from_kserve(std::string_view name) {
  for (const auto& [dtype, known] : kKServeNames) {
    if (name == known) return dtype;
  }
  return DType::kUndefined;
}

std::string triton_dtype_name(DType dtype) {
  const std::string name = kserve_dtype_name(dtype);
  return name.empty() ? "TYPE_INVALID" : "TYPE_" + name;
}

nlohmann::json server_metadata() {
  return {{"name", "onepool"},
          {"version", ONEPOOL_VERSION_STRING},
          {"extensions", {"binary_tensor_data", "model_configuration", "statistics", "metrics"}}};
}

nlohmann::json model_metadata(const std::string& model_name, const ServedModel& model) {
  return {{"name", model_name},
          {"versions", {"1"}},
          {"platform", "onnx"},
          {"inputs", tensor_metadata(model.inputs)},
          {"outputs", tensor_metadata(model.outputs)}};
}

nlohmann::json model_config(const std::string& model_name, const ServedModel& model,
                            size_t sessions, const Device& device) {
  const char* kind = device.kind == DeviceKind::kCuda ? "KIND_GPU" : "KIND_CPU";
  return {{"name", model_name},
          {"platform", "onnx"},
          {"backend", "onepool"},
          {"max_batch_size", 0},
          {"input", tensor_config(model.inputs)},
          {"output", tensor_config(model.outputs)},
          {"instance_group", {{{"count", sessions}, {"kind", kind}}}}};
}

}  // namespace onepool::serve
