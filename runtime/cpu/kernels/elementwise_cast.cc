// Cast between every numeric dtype, bool, float16 and bfloat16. float -> int truncates toward
// zero (static_cast); x -> bool is x != 0 (NaN -> true); half types convert through float32 with
// round-to-nearest-even.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

constexpr DTypeSet kCastTypes = kNumericOrBoolTypes | kHalfTypes;

uint32_t float_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

float bits_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Branch-free IEEE half conversions after the FP16 library (M. Dukhan, MIT): scaling by powers
// of two makes the float unit do the rounding and handle subnormals.
float half_to_float(Float16 h) {
  const uint32_t w = static_cast<uint32_t>(h.bits) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const float normalized = bits_float((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = bits_float((two_w >> 17) | (126u << 23)) - 0.5f;
  const bool is_denormal = two_w < (1u << 27);
  return bits_float(sign | float_bits(is_denormal ? denormalized : normalized));
}

Float16 float_to_half(float f) {
  float base = (std::fabs(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = float_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = bits_float((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = float_bits(base);
  const uint32_t nonsign = ((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu);
  const uint32_t result = (sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign);
  return Float16{static_cast<uint16_t>(result)};
}

float bfloat_to_float(BFloat16 h) { return bits_float(static_cast<uint32_t>(h.bits) << 16); }

BFloat16 float_to_bfloat(float f) {
  const uint32_t bits = float_bits(f);
  if (std::isnan(f)) return BFloat16{static_cast<uint16_t>((bits >> 16) | 0x40u)};
  const uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);  // nearest, ties to even
  return BFloat16{static_cast<uint16_t>(rounded >> 16)};
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
