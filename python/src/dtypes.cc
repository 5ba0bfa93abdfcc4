// OnePool dtypes <-> numpy dtypes. Matching is by kind and size in native byte order, so int64
// is numpy's int64 whether numpy spells it long or longlong.
#include <string>

#include "python/src/bindings.h"

namespace onepool::python {
namespace {

// numpy's name of each OnePool dtype; bfloat16 travels as its raw bits.
const char* numpy_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat16:
      return "float16";
    case DType::kFloat64:
      return "float64";
    case DType::kBFloat16:
      return "uint16";
    case DType::kBool:
      return "bool";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kUInt8:
      return "uint8";
    case DType::kUInt16:
      return "uint16";
    case DType::kUInt32:
      return "uint32";
    case DType::kUInt64:
      return "uint64";
    default:
      return nullptr;
  }
}

}  // namespace

py::dtype numpy_dtype(DType dtype) {
  const char* name = numpy_name(dtype);
  if (name == nullptr) {
    raise_status(make_status(StatusCode::kUnsupported, "dtype ", dtype_name(dtype),
                             " has no numpy equivalent"));
  }
  return py::dtype::from_args(py::str(name));
}

DType onepool_dtype(const py::dtype& dtype) {
  if (!dtype.attr("isnative").cast<bool>() || dtype.has_fields()) return DType::kUndefined;
  const ssize_t size = dtype.itemsize();
  switch (dtype.kind()) {
    case 'b':
      return size == 1 ? DType::kBool : DType::kUndefined;
    case 'f':
      if (size == 2) return DType::kFloat16;
      if (size == 4) return DType::kFloat32;
      if (size == 8) return DType::kFloat64;
      return DType::kUndefined;
    case 'i':
      if (size == 1) return DType::kInt8;
      if (size == 2) return DType::kInt16;
      if (size == 4) return DType::kInt32;
      if (size == 8) return DType::kInt64;
      return DType::kUndefined;
    case 'u':
      if (size == 1) return DType::kUInt8;
      if (size == 2) return DType::kUInt16;
      if (size == 4) return DType::kUInt32;
      if (size == 8) return DType::kUInt64;
      return DType::kUndefined;
    default:
      return DType::kUndefined;
  }
}

std::string numpy_dtype_name(DType dtype) {
  if (dtype == DType::kBFloat16) return "bfloat16 (as uint16)";
  const char* name = numpy_name(dtype);
  return name != nullptr ? name : dtype_name(dtype);
}

}  // namespace onepool::python
