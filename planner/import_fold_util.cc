// Host helpers for constant folding.
#include "planner/import_fold_util.h"

#include <cstring>

namespace onepool {

Status fold_unsupported(const FoldContext& context, const std::string& why) {
  return make_status(StatusCode::kUnsupported, "node '", context.node->name(), "' (",
                     context.node->op_type(), "): not folded: ", why);
}

Status fold_invalid(const FoldContext& context, const std::string& why) {
  return make_status(StatusCode::kInvalidModel, "node '", context.node->name(), "' (",
                     context.node->op_type(), "): ", why);
}

Expected<HostTensor> new_tensor(DType dtype, const Shape& shape, int64_t max_elements) {
  ONEPOOL_ASSIGN_OR_RETURN(int64_t count, shape.element_count_checked());
  if (count > max_elements) {
    return make_status(StatusCode::kResourceExhausted, "output ", shape.to_string(),
                       " exceeds the folding limit of ", max_elements, " elements");
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t bytes, tensor_bytes(shape, dtype));
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = shape;
  tensor.data.resize(bytes);
  return tensor;
}

bool is_float_dtype(DType dtype) { return dtype == DType::kFloat32 || dtype == DType::kFloat64; }

bool is_arith_dtype(DType dtype) {
  return dtype_is_supported(dtype) && dtype != DType::kFloat16 && dtype != DType::kBFloat16;
}

namespace {
template <class T>
void store(HostTensor& tensor, int64_t i, T value) {
  std::memcpy(tensor.data.data() + static_cast<size_t>(i) * sizeof(T), &value, sizeof(T));
}

template <class V>
void store_as(HostTensor& tensor, int64_t i, V value) {
  switch (tensor.dtype) {
    case DType::kFloat32:
      store<float>(tensor, i, static_cast<float>(value));
      return;
    case DType::kFloat64:
      store<double>(tensor, i, static_cast<double>(value));
      return;
    case DType::kInt64:
      store<int64_t>(tensor, i, static_cast<int64_t>(value));
      return;
    case DType::kInt32:
      store<int32_t>(tensor, i, static_cast<int32_t>(value));
      return;
    case DType::kInt16:
      store<int16_t>(tensor, i, static_cast<int16_t>(value));
      return;
    case DType::kInt8:
      store<int8_t>(tensor, i, static_cast<int8_t>(value));
      return;
    case DType::kUInt8:
      store<uint8_t>(tensor, i, static_cast<uint8_t>(value));
      return;
    case DType::kUInt16:
      store<uint16_t>(tensor, i, static_cast<uint16_t>(value));
      return;
    case DType::kUInt32:
      store<uint32_t>(tensor, i, static_cast<uint32_t>(value));
      return;
    case DType::kUInt64:
      store<uint64_t>(tensor, i, static_cast<uint64_t>(value));
      return;
    case DType::kBool:
      store<uint8_t>(tensor, i, value != 0 ? 1 : 0);
      return;
    default:
      return;
  }
}
}  // namespace

void store_int(HostTensor& tensor, int64_t i, int64_t value) { store_as(tensor, i, value); }
void store_float(HostTensor& tensor, int64_t i, double value) { store_as(tensor, i, value); }

void copy_element(const HostTensor& source, int64_t from, HostTensor& target, int64_t to) {
  const size_t size = dtype_size(source.dtype);
  std::memcpy(target.data.data() + static_cast<size_t>(to) * size,
              source.data.data() + static_cast<size_t>(from) * size, size);
}

std::vector<int64_t> int_values(const HostTensor& tensor) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < tensor.element_count(); ++i) values.push_back(tensor.int_at(i));
  return values;
}

Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int axis = 0; axis < rank; ++axis) {
    const int ia = axis - (rank - a.rank());
    const int ib = axis - (rank - b.rank());
    const int64_t da = ia >= 0 ? a[ia] : 1;
    const int64_t db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      return make_status(StatusCode::kInvalidModel, "shapes ", a.to_string(), " and ",
                         b.to_string(), " do not broadcast (axis ", axis, ": ", da, " vs ", db,
                         ")");
    }
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

int64_t broadcast_source(const Shape& out, const Shape& in, int64_t flat) {
  int64_t source = 0;
  int64_t stride = 1;
  const int offset = out.rank() - in.rank();
  for (int axis = out.rank() - 1; axis >= 0; --axis) {
    const int64_t coordinate = flat % out[axis];
    flat /= out[axis];
    const int in_axis = axis - offset;
    if (in_axis < 0) continue;
    if (in[in_axis] != 1) source += coordinate * stride;
    stride *= in[in_axis];
  }
  return source;
}

int normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return -1;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t attribute_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* attribute = find_attribute(node, name);
  return attribute != nullptr && attribute->has_i() ? attribute->i() : fallback;
}

std::vector<int64_t> attribute_ints(const onnx::NodeProto& node, const std::string& name,
                                    bool* found) {
  const auto* attribute = find_attribute(node, name);
  *found = attribute != nullptr;
  if (attribute == nullptr) return {};
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

}  // namespace onepool
