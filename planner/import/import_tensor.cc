// TensorProto ↔ HostTensor: raw_data and every typed field ONNX stores elements in.
#include "planner/import/import_tensor.h"

#include <cstring>
#include <limits>
#include <vector>

namespace onepool {

namespace {

constexpr DType kSupportedOnnxDTypes[] = {
    DType::kFloat32, DType::kUInt8,  DType::kInt8,     DType::kUInt16,  DType::kInt16,
    DType::kInt32,   DType::kInt64,  DType::kBool,     DType::kFloat16, DType::kFloat64,
    DType::kUInt32,  DType::kUInt64, DType::kBFloat16,
};

// Copies `count` elements of a typed repeated field into `out`, narrowing each to T.
template <class T, class Field>
void copy_narrowed(const Field& field, std::byte* out) {
  for (int i = 0; i < field.size(); ++i) {
    const T value = static_cast<T>(field.Get(i));
    std::memcpy(out + static_cast<size_t>(i) * sizeof(T), &value, sizeof(T));
  }
}

// Returns the number of elements held in the typed field that ONNX uses for `dtype`.
int typed_field_size(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return proto.float_data_size();
    case DType::kFloat64:
      return proto.double_data_size();
    case DType::kInt64:
      return proto.int64_data_size();
    case DType::kUInt32:
    case DType::kUInt64:
      return proto.uint64_data_size();
    default:
      return proto.int32_data_size();
  }
}

void copy_typed_field(const onnx::TensorProto& proto, DType dtype, std::byte* out) {
  switch (dtype) {
    case DType::kFloat32:
      copy_narrowed<float>(proto.float_data(), out);
      return;
    case DType::kFloat64:
      copy_narrowed<double>(proto.double_data(), out);
      return;
    case DType::kInt64:
      copy_narrowed<int64_t>(proto.int64_data(), out);
      return;
    case DType::kUInt32:
      copy_narrowed<uint32_t>(proto.uint64_data(), out);
      return;
    case DType::kUInt64:
      copy_narrowed<uint64_t>(proto.uint64_data(), out);
      return;
    case DType::kInt32:
      copy_narrowed<int32_t>(proto.int32_data(), out);
      return;
    case DType::kInt16:
      copy_narrowed<int16_t>(proto.int32_data(), out);
      return;
    case DType::kInt8:
      copy_narrowed<int8_t>(proto.int32_data(), out);
      return;
    case DType::kBool:
    case DType::kUInt8:
      copy_narrowed<uint8_t>(proto.int32_data(), out);
      return;
    // float16 and bfloat16 are stored as their 16-bit patterns in int32_data.
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      copy_narrowed<uint16_t>(proto.int32_data(), out);
      return;
    default:
      return;
  }
}

Expected<Shape> proto_shape(const onnx::TensorProto& proto) {
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  auto shape = Shape::from_dims(dims);
  if (!shape) return shape.status().with_context(str_cat("tensor '", proto.name(), "'"));
  return shape;
}

}  // namespace

DType dtype_from_onnx(int32_t elem_type) {
  for (DType dtype : kSupportedOnnxDTypes) {
    if (static_cast<int32_t>(dtype) == elem_type) return dtype;
  }
  return DType::kUndefined;
}

std::string onnx_dtype_name(int32_t elem_type) {
  const DType dtype = dtype_from_onnx(elem_type);
  if (dtype != DType::kUndefined) return dtype_name(dtype);
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  }
  return str_cat("dtype(", elem_type, ")");
}

int64_t proto_element_count(const onnx::TensorProto& proto) {
  int64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0) return -1;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) return -1;
    count *= dim;
  }
  return count;
}

Expected<HostTensor> host_tensor_from_proto(const onnx::TensorProto& proto) {
  HostTensor tensor;
  tensor.dtype = dtype_from_onnx(proto.data_type());
  if (tensor.dtype == DType::kUndefined) {
    return make_status(StatusCode::kUnsupported, "tensor '", proto.name(), "': dtype ",
                       onnx_dtype_name(proto.data_type()), " is not supported");
  }
  ONEPOOL_ASSIGN_OR_RETURN(tensor.shape, proto_shape(proto));
  auto bytes = tensor_bytes(tensor.shape, tensor.dtype);
  if (!bytes) return bytes.status().with_context(str_cat("tensor '", proto.name(), "'"));
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return make_status(StatusCode::kInvalidModel, "tensor '", proto.name(),
                       "': external data was not resolved");
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != *bytes) {
      return make_status(StatusCode::kInvalidModel, "tensor '", proto.name(), "': shape ",
                         tensor.shape.to_string(), " x ", dtype_name(tensor.dtype), " needs ",
                         *bytes, " bytes, raw_data holds ", proto.raw_data().size());
    }
    const auto* raw = reinterpret_cast<const std::byte*>(proto.raw_data().data());
    tensor.data.assign(raw, raw + *bytes);
    return tensor;
  }
  const int held = typed_field_size(proto, tensor.dtype);
  if (held != tensor.shape.element_count()) {
    return make_status(StatusCode::kInvalidModel, "tensor '", proto.name(), "': shape ",
                       tensor.shape.to_string(), " needs ", tensor.shape.element_count(),
                       " elements, the data field holds ", held);
  }
  tensor.data.resize(*bytes);
  copy_typed_field(proto, tensor.dtype, tensor.data.data());
  return tensor;
}

void host_tensor_to_proto(const HostTensor& tensor, const std::string& name,
                          onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(tensor.dtype));
  for (int64_t dim : tensor.shape.dims()) proto->add_dims(dim);
  proto->set_raw_data(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
}

}  // namespace onepool
