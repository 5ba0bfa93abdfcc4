// Compile-time dtype sets and dispatch from a runtime DType to a C++ element type, for the
// elementwise kernel family. Only the dtypes in the set are instantiated, so an op's functor
// need not compile for the others; anything outside the set is a kUnsupported error naming the
// node, the op, the tensor and its dtype.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "runtime/cpu/kernel.h"

namespace onepool::cpu {

/// A set of dtypes as a bit mask over DType codes.
using DTypeSet = uint32_t;

constexpr DTypeSet dtype_bit(DType dtype) { return DTypeSet{1} << static_cast<int>(dtype); }

constexpr DTypeSet kFloatTypes = dtype_bit(DType::kFloat32) | dtype_bit(DType::kFloat64);
constexpr DTypeSet kSignedIntTypes = dtype_bit(DType::kInt8) | dtype_bit(DType::kInt16) |
                                     dtype_bit(DType::kInt32) | dtype_bit(DType::kInt64);
constexpr DTypeSet kUnsignedIntTypes = dtype_bit(DType::kUInt8) | dtype_bit(DType::kUInt16) |
                                       dtype_bit(DType::kUInt32) | dtype_bit(DType::kUInt64);
constexpr DTypeSet kIntTypes = kSignedIntTypes | kUnsignedIntTypes;
constexpr DTypeSet kSignedTypes = kFloatTypes | kSignedIntTypes;
constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
constexpr DTypeSet kBoolType = dtype_bit(DType::kBool);
constexpr DTypeSet kNumericOrBoolTypes = kNumericTypes | kBoolType;
constexpr DTypeSet kHalfTypes = dtype_bit(DType::kFloat16) | dtype_bit(DType::kBFloat16);

/// Tag carrying an element type through generic lambdas: fn(TypeTag<float>{}).
template <class T>
struct TypeTag {
  using type = T;
};

/// IEEE half and bfloat16 elements as raw bits (only Cast and Where read them).
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

/// The DType of a C++ element type (bool is ONNX bool: one byte holding 0 or 1).
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  if constexpr (std::is_same_v<T, Float16>) return DType::kFloat16;
  if constexpr (std::is_same_v<T, BFloat16>) return DType::kBFloat16;
  return DType::kUndefined;
}
static_assert(sizeof(bool) == 1, "ONNX bool tensors are one byte per element");

/// Unsigned type integer arithmetic on T is done in, so that overflow wraps instead of being
/// undefined (int32 add, int16 multiply after promotion, INT_MIN negation).
template <class T>
using WrapType = std::make_unsigned_t<decltype(T{} + T{})>;

/// "float32, float64, ..." for messages.
std::string dtype_set_names(DTypeSet set);

/// The error for a dtype outside `allowed`: "node 'n' (Op): input 0 'x' has dtype int8; supported:
/// float32, float64".
Status unsupported_dtype(const NodeContext& node, const std::string& tensor, DType dtype,
                         DTypeSet allowed);

/// Calls fn(TypeTag<T>{}) for the C++ type of `dtype` when it is in `Allowed`, else returns
/// unsupported_dtype(node, tensor, ...). fn returns Expected<PreparedKernel>.
template <DTypeSet Allowed, class Fn>
Expected<PreparedKernel> visit_dtype(const NodeContext& node, const std::string& tensor,
                                     DType dtype, const Fn& fn) {
  if ((Allowed & dtype_bit(dtype)) == 0 || dtype_bit(dtype) == 0) {
    return unsupported_dtype(node, tensor, dtype, Allowed);
  }
#define ONEPOOL_VISIT_CASE(code, type)                       \
  case DType::code:                                          \
    if constexpr ((Allowed & dtype_bit(DType::code)) != 0) { \
      return fn(TypeTag<type>{});                            \
    }                                                        \
    break;
  switch (dtype) {
    ONEPOOL_VISIT_CASE(kFloat32, float)
    ONEPOOL_VISIT_CASE(kFloat64, double)
    ONEPOOL_VISIT_CASE(kInt8, int8_t)
    ONEPOOL_VISIT_CASE(kInt16, int16_t)
    ONEPOOL_VISIT_CASE(kInt32, int32_t)
    ONEPOOL_VISIT_CASE(kInt64, int64_t)
    ONEPOOL_VISIT_CASE(kUInt8, uint8_t)
    ONEPOOL_VISIT_CASE(kUInt16, uint16_t)
    ONEPOOL_VISIT_CASE(kUInt32, uint32_t)
    ONEPOOL_VISIT_CASE(kUInt64, uint64_t)
    ONEPOOL_VISIT_CASE(kBool, bool)
    ONEPOOL_VISIT_CASE(kFloat16, Float16)
    ONEPOOL_VISIT_CASE(kBFloat16, BFloat16)
    default:
      break;
  }
#undef ONEPOOL_VISIT_CASE
  return unsupported_dtype(node, tensor, dtype, Allowed);
}

/// "input 0 'x'" / "output 0 'y'" for messages.
std::string describe_input(const NodeContext& node, size_t i);
std::string describe_output(const NodeContext& node, size_t i);

/// kInvalidModel unless input i exists.
Status require_input(const NodeContext& node, size_t i);
/// kInvalidModel unless output i has `dtype` (naming expected and actual).
Status require_output_dtype(const NodeContext& node, size_t i, DType dtype);
/// kInvalidModel unless input i has `dtype`.
Status require_input_dtype(const NodeContext& node, size_t i, DType dtype);
/// kInvalidModel unless output 0 has exactly input i's shape.
Status require_same_shape(const NodeContext& node, size_t i);

}  // namespace onepool::cpu
