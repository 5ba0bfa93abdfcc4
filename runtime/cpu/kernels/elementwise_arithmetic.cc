// Broadcasting binary arithmetic: Add Sub Mul Div Mod PRelu BitShift. Integer arithmetic wraps
// (computed in WrapType); integer division and modulo by zero give 0 instead of trapping, and
// INT_MIN / -1 wraps.
#include <cmath>
#include <type_traits>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

template <class T>
struct AddOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    } else {
      return a + b;
    }
  }
};

template <class T>
struct SubOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
    } else {
      return a - b;
    }
  }
};

template <class T>
struct MulOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    } else {
      return a * b;
    }
  }
};

template <class T>
struct DivOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return SubOp<T>{}(T(0), a);
      }
      return static_cast<T>(a / b);  // truncates toward zero
    } else {
      return a / b;
    }
  }
};

// fmod = 1: the remainder has the dividend's sign (C fmod / %).
template <class T>
struct ModTruncOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return 0;
      }
      return static_cast<T>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};

// fmod = 0 (integers only): the remainder has the divisor's sign, as numpy / Python.
template <class T>
struct ModFloorOp {
  T operator()(T a, T b) const {
    T r = ModTruncOp<T>{}(a, b);
    if constexpr (std::is_signed_v<T>) {
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    }
    return r;
  }
};

template <class T>
struct PReluOp {
  T operator()(T x, T slope) const { return x < T(0) ? MulOp<T>{}(x, slope) : x; }
};

template <class T>
struct ShiftLeftOp {
  T operator()(T a, T b) const { return b >= T(8 * sizeof(T)) ? T(0) : static_cast<T>(a << b); }
};

template <class T>
struct ShiftRightOp {
  T operator()(T a, T b) const { return b >= T(8 * sizeof(T)) ? T(0) : static_cast<T>(a >> b); }
};

constexpr DTypeSet kPReluTypes = kFloatTypes | dtype_bit(DType::kInt32) | dtype_bit(DType::kInt64);

Expected<PreparedKernel> make_mod(const NodeContext& node) {
  const bool fmod = node.node().attributes.get_int("fmod", 0) != 0;
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  const DType dtype = node.input(0).dtype;
  if (!fmod && (dtype_bit(dtype) & kFloatTypes) != 0) {
    return node.error(StatusCode::kInvalidModel, "fmod must be 1 for ", dtype_name(dtype),
                      " inputs, got 0");
  }
  if (fmod) return make_binary_op<ModTruncOp, kNumericTypes>(node);
  return make_binary_op<ModFloorOp, kIntTypes>(node);
}

Expected<PreparedKernel> make_bit_shift(const NodeContext& node) {
  const std::string direction = node.node().attributes.get_string("direction", "");
  if (direction == "LEFT") return make_binary_op<ShiftLeftOp, kUnsignedIntTypes>(node);
  if (direction == "RIGHT") return make_binary_op<ShiftRightOp, kUnsignedIntTypes>(node);
  return node.error(StatusCode::kInvalidModel, "attribute 'direction' must be LEFT or RIGHT, got '",
                    direction, "'");
}

}  // namespace

void register_arithmetic_kernels(KernelRegistry& registry) {
  registry.add("Add", &make_binary_op<AddOp, kNumericTypes>);
  registry.add("Sub", &make_binary_op<SubOp, kNumericTypes>);
  registry.add("Mul", &make_binary_op<MulOp, kNumericTypes>);
  registry.add("Div", &make_binary_op<DivOp, kNumericTypes>);
  registry.add("Mod", &make_mod);
  registry.add("PRelu", &make_binary_op<PReluOp, kPReluTypes>);
  registry.add("BitShift", &make_bit_shift);
}

}  // namespace onepool::cpu
