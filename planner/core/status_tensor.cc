// Definitions for status.h, tensor.h and logging.h.
#include <limits>

#include "onepool/logging.h"
#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kInvalidModel:
      return "invalid model";
    case StatusCode::kOutOfRange:
      return "out of range";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kDeviceError:
      return "device error";
    case StatusCode::kFailedPrecondition:
      return "failed precondition";
    case StatusCode::kInternal:
      return "internal error";
    case StatusCode::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return str_cat(status_code_name(code_), ": ", message_);
}

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return Status(code_, str_cat(context, ": ", message_));
}

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kBool:
      return 1;
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt64:
    case DType::kFloat64:
    case DType::kUInt64:
      return 8;
    case DType::kUndefined:
    case DType::kString:
      return 0;
  }
  return 0;
}

namespace {
struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypeNames[] = {
    {DType::kFloat32, "float32"}, {DType::kUInt8, "uint8"},       {DType::kInt8, "int8"},
    {DType::kUInt16, "uint16"},   {DType::kInt16, "int16"},       {DType::kInt32, "int32"},
    {DType::kInt64, "int64"},     {DType::kString, "string"},     {DType::kBool, "bool"},
    {DType::kFloat16, "float16"}, {DType::kFloat64, "float64"},   {DType::kUInt32, "uint32"},
    {DType::kUInt64, "uint64"},   {DType::kBFloat16, "bfloat16"},
};
}  // namespace

std::string dtype_name(DType dtype) {
  for (const auto& entry : kDTypeNames) {
    if (entry.dtype == dtype) return entry.name;
  }
  return str_cat("dtype(", static_cast<int>(dtype), ")");
}

bool dtype_is_supported(DType dtype) { return dtype_size(dtype) != 0; }

DType dtype_from_name(const std::string& name) {
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  for (const auto& entry : kDTypeNames) {
    if (name == entry.name) return entry.dtype;
  }
  return DType::kUndefined;
}

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t dim : dims) {
    if (!push_back(dim)) break;
  }
}

Expected<Shape> Shape::from_dims(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return make_status(StatusCode::kUnsupported, "rank ", dims.size(), " exceeds the maximum rank ",
                       kMaxRank);
  }
  Shape shape;
  for (int64_t dim : dims) {
    if (dim < 0) {
      return make_status(StatusCode::kInvalidArgument, "negative dim ", dim);
    }
    shape.push_back(dim);
  }
  return shape;
}

bool Shape::push_back(int64_t dim) {
  if (rank_ >= kMaxRank) return false;
  dims_[static_cast<size_t>(rank_++)] = dim;
  return true;
}

int64_t Shape::element_count() const {
  int64_t count = 1;
  for (int64_t dim : dims()) count *= dim;
  return count;
}

Expected<int64_t> Shape::element_count_checked() const {
  int64_t count = 1;
  for (int64_t dim : dims()) {
    if (dim < 0) return make_status(StatusCode::kInvalidArgument, "negative dim in ", to_string());
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim) {
      return make_status(StatusCode::kOutOfRange, "element count of shape ", to_string(),
                         " overflows 64 bits");
    }
    count *= dim;
  }
  return count;
}

std::string Shape::to_string() const {
  std::string text = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i > 0) text += ",";
    text += std::to_string(dims_[static_cast<size_t>(i)]);
  }
  return text + "]";
}

bool operator==(const Shape& a, const Shape& b) {
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

Expected<size_t> tensor_bytes(const Shape& shape, DType dtype) {
  ONEPOOL_ASSIGN_OR_RETURN(int64_t count, shape.element_count_checked());
  const size_t element_bytes = dtype_size(dtype);
  if (element_bytes == 0) {
    return make_status(StatusCode::kUnsupported, "unsupported dtype ", dtype_name(dtype));
  }
  const auto elements = static_cast<size_t>(count);
  if (elements > std::numeric_limits<size_t>::max() / 2 / element_bytes) {
    return make_status(StatusCode::kOutOfRange, "byte size of shape ", shape.to_string(), " x ",
                       dtype_name(dtype), " overflows");
  }
  return elements * element_bytes;
}

std::string Device::to_string() const {
  if (kind == DeviceKind::kCpu) return "cpu";
  return str_cat("cuda:", index);
}

Expected<Device> Device::parse(const std::string& text) {
  if (text == "cpu") return Device{DeviceKind::kCpu, 0};
  if (text == "cuda") return Device{DeviceKind::kCuda, 0};
  const std::string prefix = "cuda:";
  if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size()) {
    const std::string digits = text.substr(prefix.size());
    if (digits.size() <= 4 && digits.find_first_not_of("0123456789") == std::string::npos) {
      return Device{DeviceKind::kCuda, std::stoi(digits)};
    }
  }
  return make_status(StatusCode::kInvalidArgument, "unknown device '", text,
                     "': expected cpu, cuda or cuda:N");
}

}  // namespace onepool
