// KServe v2 (Open Inference Protocol) JSON codec: infer requests in, infer responses and
// model / server metadata out. Pure functions over nlohmann::json; no HTTP, no Session.
//
// Errors are Status values (never exceptions) whose messages name the tensor and say expected
// vs actual ("input 'x': expected datatype FP32, got INT64").
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "onepool/model.h"
#include "planner/core/graph.h"
#include "tools/onepool/serve_slots.h"

namespace onepool::serve {

/// KServe datatype name: "FP32", "INT64", "BOOL", ...; "" for dtypes KServe cannot name.
std::string kserve_dtype_name(DType dtype);
/// Parses a KServe datatype name; kUndefined when unknown.
DType dtype_from_kserve(std::string_view name);
/// Triton model-config name: "TYPE_FP32", "TYPE_INT64", ...
std::string triton_dtype_name(DType dtype);

/// One output the client asked for.
struct RequestedOutput {
  std::string name;
  int index = -1;       ///< index into ServedModel::outputs
  bool binary = false;  ///< send as binary tensor data (Triton extension)
};

/// A decoded infer request: inputs in ServedModel::inputs order, ready to run.
struct InferRequest {
  nlohmann::json id;                     ///< echoed when present (null otherwise)
  std::vector<HostTensor> inputs;        ///< one per model input, model order
  std::vector<RequestedOutput> outputs;  ///< the outputs to return, in response order
};

/// Decodes a request. `header` is the JSON part; `binary` the bytes after it (inputs with
/// parameters.binary_data_size take their data from there, in order). Checks names, presence,
/// datatype, shape (exact, or inside the profile's range) and data length against `model`.
Expected<InferRequest> decode_infer_request(const ServedModel& model, std::string_view header,
                                            std::string_view binary);

/// An encoded response: JSON text, then the binary outputs (if any) appended.
struct EncodedResponse {
  std::string body;
  size_t json_bytes = 0;  ///< length of the JSON part (the Inference-Header-Content-Length)
  bool has_binary = false;
};

/// Encodes {model_name, id, outputs[...]}; `outputs` are in ServedModel::outputs order.
EncodedResponse encode_infer_response(const std::string& model_name, const ServedModel& model,
                                      const InferRequest& request,
                                      const std::vector<HostTensor>& outputs);

/// GET /v2: {name, version, extensions}.
nlohmann::json server_metadata();
/// GET /v2/models/{m}: {name, versions, platform, inputs, outputs}.
/// Axes that vary (shape ranges) show as -1.
nlohmann::json model_metadata(const std::string& model_name, const ServedModel& model);
/// GET /v2/models/{m}/config: Triton-style model configuration.
nlohmann::json model_config(const std::string& model_name, const ServedModel& model,
                            size_t sessions, const Device& device);

}  // namespace onepool::serve
