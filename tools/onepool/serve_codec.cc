// Infer request decoding and response encoding (KServe v2 JSON + Triton binary tensors).
#include "tools/onepool/serve_codec.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "tools/onepool/serve_binary.h"

namespace onepool::serve {

namespace {

using Json = nlohmann::json;

// Nested "data" arrays deeper than this are rejected rather than recursed into.
constexpr int kMaxDataDepth = 2 * Shape::kMaxRank;

std::string quoted_names(const std::vector<ServedTensor>& tensors) {
  std::string names;
  for (const ServedTensor& tensor : tensors) {
    names += (names.empty() ? "'" : ", '") + tensor.info.name + "'";
  }
  return names;
}

// Converts one JSON scalar to T, or says why it cannot.
template <class T>
Status json_scalar(const Json& value, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) return Status(StatusCode::kInvalidArgument, "expected true or false");
    out = value.get<bool>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) return Status(StatusCode::kInvalidArgument, "expected a number");
    out = static_cast<T>(value.get<double>());
  } else {
    if (!value.is_number_integer())
      return Status(StatusCode::kInvalidArgument, "expected an integer");
    const bool fits =
        value.is_number_unsigned()
            ? value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : value.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                  value.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max());
    if (!fits) return Status(StatusCode::kInvalidArgument, "out of range for the datatype");
    out = value.is_number_unsigned() ? static_cast<T>(value.get<uint64_t>())
                                     : static_cast<T>(value.get<int64_t>());
  }
  return Status::ok();
}

// Writes the leaves of `node` (flat or nested arrays) into out[next...]; counts every leaf so
// the caller can report how many values arrived.
template <class T>
Status write_leaves(const Json& node, const std::string& name, T* out, size_t capacity,
                    size_t& next, int depth) {
  if (node.is_array()) {
    if (depth >= kMaxDataDepth) {
      return make_status(StatusCode::kInvalidArgument, "input '", name,
                         "': 'data' nests deeper than ", kMaxDataDepth, " levels");
    }
    for (const Json& child : node) {
      ONEPOOL_RETURN_IF_ERROR(write_leaves(child, name, out, capacity, next, depth + 1));
    }
    return Status::ok();
  }
  if (next < capacity) {
    T value{};
    Status status = json_scalar(node, value);
    if (!status.is_ok()) {
      return make_status(StatusCode::kInvalidArgument, "input '", name, "': element ", next, " is ",
                         node.dump(), ": ", status.message());
    }
    out[next] = value;
  }
  ++next;
  return Status::ok();
}

template <class T>
Status fill_typed(const Json& data, const std::string& name, HostTensor& tensor) {
  const size_t count = static_cast<size_t>(tensor.shape.element_count());
  size_t next = 0;
  ONEPOOL_RETURN_IF_ERROR(write_leaves(data, name, tensor.as_mutable<T>(), count, next, 0));
  if (next != count) {
    return make_status(StatusCode::kInvalidArgument, "input '", name, "': expected ", count,
                       " values for shape ", tensor.shape.to_string(), ", got ", next);
  }
  return Status::ok();
}

Status fill_from_json(const Json& data, const std::string& name, HostTensor& tensor) {
  switch (tensor.dtype) {
    case DType::kFloat32:
      return fill_typed<float>(data, name, tensor);
    case DType::kFloat64:
      return fill_typed<double>(data, name, tensor);
    case DType::kInt8:
      return fill_typed<int8_t>(data, name, tensor);
    case DType::kInt16:
      return fill_typed<int16_t>(data, name, tensor);
    case DType::kInt32:
      return fill_typed<int32_t>(data, name, tensor);
    case DType::kInt64:
      return fill_typed<int64_t>(data, name, tensor);
    case DType::kUInt8:
      return fill_typed<uint8_t>(data, name, tensor);
    case DType::kUInt16:
      return fill_typed<uint16_t>(data, name, tensor);
    case DType::kUInt32:
      return fill_typed<uint32_t>(data, name, tensor);
    case DType::kUInt64:
      return fill_typed<uint64_t>(data, name, tensor);
    case DType::kBool:
      return fill_typed<bool>(data, name, tensor);
    default:
      return make_status(StatusCode::kInvalidArgument, "input '", name, "': datatype ",
                         kserve_dtype_name(tensor.dtype), " must be sent as binary data");
  }
}

// The string field `key` of one element of "inputs"; `name` is "" until the name is known.
Expected<std::string> string_field(const Json& input, const char* key, const std::string& name) {
  const std::string where = name.empty() ? "an input" : str_cat("input '", name, "'");
  if (!input.is_object()) {
    return make_status(StatusCode::kInvalidArgument, "inputs: expected objects, got ",
                       input.type_name());
  }
  if (!input.contains(key)) {
    return make_status(StatusCode::kInvalidArgument, where, ": missing '", key, "'");
  }
  if (!input.at(key).is_string()) {
    return make_status(StatusCode::kInvalidArgument, where, ": '", key, "' must be a string, got ",
                       input.at(key).type_name());
  }
  return input.at(key).get<std::string>();
}

Expected<Shape> parse_shape(const Json& input, const std::string& name) {
  if (!input.contains("shape")) {
    return make_status(StatusCode::kInvalidArgument, "input '", name, "': missing 'shape'");
  }
  const Json& dims = input.at("shape");
  if (!dims.is_array()) {
    return make_status(StatusCode::kInvalidArgument, "input '", name,
                       "': 'shape' must be an array");
  }
  // A rank beyond Shape's limit is the client's mistake (400), not a server fault.
  if (dims.size() > static_cast<size_t>(Shape::kMaxRank)) {
    return make_status(StatusCode::kInvalidArgument, "input '", name, "': rank ", dims.size(),
                       " exceeds the maximum rank ", Shape::kMaxRank);
  }
  std::vector<int64_t> values;
  for (const Json& dim : dims) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
      return make_status(StatusCode::kInvalidArgument, "input '", name, "': shape dim ", dim.dump(),
                         " is not a non-negative integer");
    }
    values.push_back(dim.get<int64_t>());
  }
  Expected<Shape> shape = Shape::from_dims(values);
  if (!shape) return shape.status().with_context(str_cat("input '", name, "'"));
  return shape;
}

// Fills one input's data from 'data' or from the binary tail.
Status fill_input(const Json& input, const TensorInfo& info, HostTensor& tensor, BinaryTail& tail) {
  const Json* parameters = input.contains("parameters") ? &input.at("parameters") : nullptr;
  if (parameters != nullptr && parameters->contains("binary_data_size")) {
    const size_t size = parameters->at("binary_data_size").get<size_t>();
    if (size != tensor.data.size()) {
      return make_status(StatusCode::kInvalidArgument, "input '", info.name, "': binary_data_size ",
                         size, " bytes, expected ", tensor.data.size(), " (",
                         tensor.shape.to_string(), " x ", kserve_dtype_name(info.dtype), ")");
    }
    ONEPOOL_ASSIGN_OR_RETURN(std::string_view bytes, tail.take(info.name, size));
    if (size != 0) std::memcpy(tensor.data.data(), bytes.data(), size);
    return Status::ok();
  }
  if (!input.contains("data")) {
    return make_status(StatusCode::kInvalidArgument, "input '", info.name,
                       "': missing 'data' (or parameters.binary_data_size)");
  }
  return fill_from_json(input.at("data"), info.name, tensor);
}

// Decodes one element of "inputs" into tensors[index of its name].
Status decode_input(const Json& input, const ServedModel& model, std::vector<HostTensor>& tensors,
                    std::vector<bool>& seen, BinaryTail& tail) {
  ONEPOOL_ASSIGN_OR_RETURN(const std::string name, string_field(input, "name", ""));
  const int index = model.input_index(name);
  if (index < 0) {
    return make_status(StatusCode::kInvalidArgument, "unknown input '", name,
                       "'; the model's inputs are ", quoted_names(model.inputs));
  }
  const auto slot = static_cast<size_t>(index);
  if (seen[slot])
    return make_status(StatusCode::kInvalidArgument, "input '", name, "' given twice");
  seen[slot] = true;
  const TensorInfo& info = model.inputs[slot].info;
  ONEPOOL_ASSIGN_OR_RETURN(const std::string datatype, string_field(input, "datatype", name));
  if (dtype_from_kserve(datatype) != info.dtype) {
    return make_status(StatusCode::kInvalidArgument, "input '", name, "': expected datatype ",
                       kserve_dtype_name(info.dtype), ", got ", datatype);
  }
  ONEPOOL_ASSIGN_OR_RETURN(Shape shape, parse_shape(input, name));
  ONEPOOL_RETURN_IF_ERROR(model.check_input_shape(slot, shape));
  HostTensor& tensor = tensors[slot];
  tensor.dtype = info.dtype;
  tensor.shape = shape;
  ONEPOOL_ASSIGN_OR_RETURN(size_t bytes, tensor_bytes(shape, info.dtype));
  tensor.data.resize(bytes);
  return fill_input(input, info, tensor, tail);
}

bool wants_binary(const Json& object, const char* key) {
  if (!object.contains("parameters")) return false;
  const Json& parameters = object.at("parameters");
  return parameters.contains(key) && parameters.at(key).get<bool>();
}

// Outputs: all (in model order) unless the request lists some. JSON has no FP16 / BF16 form,
// so those always go binary.
Status decode_outputs(const Json& request, const ServedModel& model,
                      std::vector<RequestedOutput>& out) {
  const bool default_binary = wants_binary(request, "binary_data_output");
  auto needs_binary = [&](int index) {
    const DType dtype = model.outputs[static_cast<size_t>(index)].info.dtype;
    return dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  };
  if (!request.contains("outputs")) {
    for (size_t i = 0; i < model.outputs.size(); ++i) {
      const int index = static_cast<int>(i);
      out.push_back({model.outputs[i].info.name, index, default_binary || needs_binary(index)});
    }
    return Status::ok();
  }
  for (const Json& item : request.at("outputs")) {
    const std::string name = item.at("name").get<std::string>();
    const int index = model.output_index(name);
    if (index < 0) {
      return make_status(StatusCode::kInvalidArgument, "unknown output '", name,
                         "'; the model's outputs are ", quoted_names(model.outputs));
    }
    const bool binary = item.contains("parameters") && item.at("parameters").contains("binary_data")
                            ? wants_binary(item, "binary_data")
                            : default_binary;
    out.push_back({name, index, binary || needs_binary(index)});
  }
  return Status::ok();
}

Status decode_into(const ServedModel& model, const Json& request, std::string_view binary,
                   InferRequest& result) {
  if (!request.is_object()) {
    return Status(StatusCode::kInvalidArgument, "the request body must be a JSON object");
  }
  if (!request.contains("inputs") || !request.at("inputs").is_array()) {
    return Status(StatusCode::kInvalidArgument, "the request needs an 'inputs' array");
  }
  if (request.contains("id")) result.id = request.at("id");
  result.inputs.resize(model.inputs.size());
  std::vector<bool> seen(model.inputs.size(), false);
  BinaryTail tail(binary);
  for (const Json& input : request.at("inputs")) {
    ONEPOOL_RETURN_IF_ERROR(decode_input(input, model, result.inputs, seen, tail));
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) {
      return make_status(StatusCode::kInvalidArgument, "missing input '", model.inputs[i].info.name,
                         "'; the model's inputs are ", quoted_names(model.inputs));
    }
  }
  ONEPOOL_RETURN_IF_ERROR(tail.check_all_used());
  return decode_outputs(request, model, result.outputs);
}

template <class T>
Json flat_json(const HostTensor& tensor) {
  Json::array_t values;
  const auto count = static_cast<size_t>(tensor.shape.element_count());
  values.reserve(count);
  const T* data = tensor.as<T>();
  for (size_t i = 0; i < count; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      values.emplace_back(static_cast<double>(data[i]));
    } else {
      values.emplace_back(data[i]);
    }
  }
  return values;
}

Json data_json(const HostTensor& tensor) {
  switch (tensor.dtype) {
    case DType::kFloat32:
      return flat_json<float>(tensor);
    case DType::kFloat64:
      return flat_json<double>(tensor);
    case DType::kInt8:
      return flat_json<int8_t>(tensor);
    case DType::kInt16:
      return flat_json<int16_t>(tensor);
    case DType::kInt32:
      return flat_json<int32_t>(tensor);
    case DType::kInt64:
      return flat_json<int64_t>(tensor);
    case DType::kUInt8:
      return flat_json<uint8_t>(tensor);
    case DType::kUInt16:
      return flat_json<uint16_t>(tensor);
    case DType::kUInt32:
      return flat_json<uint32_t>(tensor);
    case DType::kUInt64:
      return flat_json<uint64_t>(tensor);
    case DType::kBool:
      return flat_json<bool>(tensor);
    default:
      return Json::array();  // unreachable: decode_outputs sends these as binary
  }
}

}  // namespace

Expected<InferRequest> decode_infer_request(const ServedModel& model, std::string_view header,
                                            std::string_view binary) {
  InferRequest result;
  try {
    const Json request = Json::parse(header);
    ONEPOOL_RETURN_IF_ERROR(decode_into(model, request, binary, result));
  } catch (const Json::parse_error& error) {
    return make_status(StatusCode::kInvalidArgument, "malformed JSON: ", error.what());
  } catch (const Json::exception& error) {
    // A missing key or a wrong JSON type (at(), get<>()): still the client's mistake.
    return make_status(StatusCode::kInvalidArgument, "malformed request: ", error.what());
  }
  return result;
}

EncodedResponse encode_infer_response(const std::string& model_name, const ServedModel& model,
                                      const InferRequest& request,
                                      const std::vector<HostTensor>& outputs) {
  Json response = {{"model_name", model_name}, {"model_version", "1"}};
  if (!request.id.is_null()) response["id"] = request.id;
  Json list = Json::array();
  std::string binary;
  bool has_binary = false;
  for (const RequestedOutput& wanted : request.outputs) {
    const HostTensor& tensor = outputs[static_cast<size_t>(wanted.index)];
    const TensorInfo& info = model.outputs[static_cast<size_t>(wanted.index)].info;
    Json item = {{"name", info.name},
                 {"datatype", kserve_dtype_name(info.dtype)},
                 {"shape", Json(std::vector<int64_t>(tensor.shape.begin(), tensor.shape.end()))}};
    has_binary = has_binary || wanted.binary;
    if (wanted.binary) {
      item["parameters"] = {{"binary_data_size", tensor.data.size()}};
      binary.append(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
    } else {
      item["data"] = data_json(tensor);
    }
    list.push_back(std::move(item));
  }
  response["outputs"] = std::move(list);
  EncodedResponse encoded;
  encoded.body = response.dump(-1, ' ', false, Json::error_handler_t::replace);
  encoded.json_bytes = encoded.body.size();
  encoded.has_binary = has_binary;
  encoded.body += binary;
  return encoded;
}

}  // namespace onepool::serve
