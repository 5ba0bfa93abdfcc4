// Comparisons (Equal Less Greater LessOrEqual GreaterOrEqual) and logic (And Or Xor) with
// broadcasting; the output is bool. Any comparison with NaN is false (Equal(NaN, NaN) too).
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_kernel.h"
#include "runtime/cpu/kernels/elementwise_registry.h"

namespace onepool::cpu {
namespace {

template <class T>
struct EqualOp {
  bool operator()(T a, T b) const { return a == b; }
};
template <class T>
struct LessOp {
  bool operator()(T a, T b) const { return a < b; }
};
template <class T>
struct GreaterOp {
  bool operator()(T a, T b) const { return a > b; }
};
template <class T>
struct LessOrEqualOp {
  bool operator()(T a, T b) const { return a <= b; }
};
template <class T>
struct GreaterOrEqualOp {
  bool operator()(T a, T b) const { return a >= b; }
};
template <class T>
struct AndOp {
  bool operator()(T a, T b) const { return a && b; }
};
template <class T>
struct OrOp {
  bool operator()(T a, T b) const { return a || b; }
};
template <class T>
struct XorOp {
  bool operator()(T a, T b) const { return a != b; }
};

}  // namespace

void register_compare_kernels(KernelRegistry& registry) {
  registry.add("Equal", &make_binary_op<EqualOp, kNumericOrBoolTypes>);
  registry.add("Less", &make_binary_op<LessOp, kNumericTypes>);
  registry.add("Greater", &make_binary_op<GreaterOp, kNumericTypes>);
  registry.add("LessOrEqual", &make_binary_op<LessOrEqualOp, kNumericTypes>);
  registry.add("GreaterOrEqual", &make_binary_op<GreaterOrEqualOp, kNumericTypes>);
  registry.add("And", &make_binary_op<AndOp, kBoolType>);
  registry.add("Or", &make_binary_op<OrOp, kBoolType>);
  registry.add("Xor", &make_binary_op<XorOp, kBoolType>);
}

}  // namespace onepool::cpu
