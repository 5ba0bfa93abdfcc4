// Cast between every numeric dtype, bool, float16 and bfloat16. float -> int truncates toward
// zero; x -> bool is x != 0 (NaN -> true); half types convert through float32 with
// round-to-nearest-even.
//
// A float that the integer type cannot hold (NaN, +-Inf, out of range) has no result in ONNX
// and none in C++ (the conversion is undefined behaviour, which a compiler may assume never
// happens). Here it is defined, as x86's conversion instructions (and so ONNX Runtime there)
// give it: to int32 / int64 the type's minimum ("integer indefinite"); to a narrower integer the
// int32 result wrapped into it (NaN -> 0); to uint32 the int64 result wrapped; to uint64 the
// value when it fits, else the int64 result wrapped (NaN -> 2^63).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/cpu/half_convert.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

constexpr DTypeSet kCastTypes = kNumericOrBoolTypes | kHalfTypes;

float half_to_float(Float16 h) { return half_bits_to_float(h.bits); }
Float16 float_to_half(float f) { return Float16{float_to_half_bits(f)}; }
float bfloat_to_float(BFloat16 h) { return bfloat_bits_to_float(h.bits); }
BFloat16 float_to_bfloat(float f) { return BFloat16{float_to_bfloat_bits(f)}; }

// x truncated toward zero when Wide (int32_t or int64_t) holds it, else Wide's minimum.
template <class Wide>
Wide truncate_or_indefinite(double x) {
  constexpr double kLimit = -static_cast<double>(std::numeric_limits<Wide>::min());  // 2^31, 2^63
  if (x > -kLimit - 1.0 && x < kLimit) return static_cast<Wide>(x);  // false for NaN
  return std::numeric_limits<Wide>::min();
}

template <class To>
To float_to_integer(double x) {
  if constexpr (std::is_same_v<To, int32_t> || std::is_same_v<To, int64_t>) {
    return truncate_or_indefinite<To>(x);
  } else if constexpr (std::is_same_v<To, uint64_t>) {
    constexpr double kTwoTo64 = 18446744073709551616.0;
    if (x >= 0.0 && x < kTwoTo64) return static_cast<uint64_t>(x);
    return static_cast<uint64_t>(truncate_or_indefinite<int64_t>(x));
  } else if constexpr (std::is_same_v<To, uint32_t>) {
    return static_cast<uint32_t>(truncate_or_indefinite<int64_t>(x));
  } else {  // int8, int16, uint8, uint16: integer narrowing wraps (defined since C++20)
    return static_cast<To>(truncate_or_indefinite<int32_t>(x));
  }
}

template <class To, class From>
To cast_value(From x) {
  if constexpr (std::is_same_v<From, Float16>) {
    return cast_value<To>(half_to_float(x));
  } else if constexpr (std::is_same_v<From, BFloat16>) {
    return cast_value<To>(bfloat_to_float(x));
  } else if constexpr (std::is_same_v<To, Float16>) {
    return float_to_half(cast_value<float>(x));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return float_to_bfloat(cast_value<float>(x));
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return float_to_integer<To>(static_cast<double>(x));
  } else {
    return static_cast<To>(x);
  }
}

template <class From, class To>
struct CastOp {
  To operator()(From x) const { return cast_value<To>(x); }
};

Expected<PreparedKernel> make_cast(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  const DType to = node.output(0).dtype;
  const int64_t to_attribute = node.node().attributes.get_int("to", static_cast<int64_t>(to));
  if (to_attribute != static_cast<int64_t>(to)) {
    return node.error(StatusCode::kInvalidModel, "attribute 'to' is ",
                      dtype_name(static_cast<DType>(to_attribute)), " but ",
                      describe_output(node, 0), " has dtype ", dtype_name(to));
  }
  return visit_dtype<kCastTypes>(node, describe_input(node, 0), node.input(0).dtype,
                                 [&](auto from_tag) -> Expected<PreparedKernel> {
                                   using From = typename decltype(from_tag)::type;
                                   return visit_dtype<kCastTypes>(
                                       node, describe_output(node, 0), to,
                                       [&](auto to_tag) -> Expected<PreparedKernel> {
                                         using To = typename decltype(to_tag)::type;
                                         return make_unary_kernel<From>(node, CastOp<From, To>{});
                                       });
                                 });
}

// CastLike: Cast to the dtype of input 1 (`target_type`), which the output carries.
Expected<PreparedKernel> make_cast_like(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 1));
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 1, node.output(0).dtype));
  return make_cast(node);
}

}  // namespace

void register_cast_kernel(KernelRegistry& registry) {
  registry.add("Cast", &make_cast);
  registry.add("CastLike", &make_cast_like);
}

}  // namespace onepool::cpu
