// Cast between every numeric dtype, bool, float16 and bfloat16. float -> int truncates toward
// zero (static_cast); x -> bool is x != 0 (NaN -> true); half types convert through float32 with
// round-to-nearest-even.
#include <cmath>
#include <cstdint>
#include <cstring>
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
