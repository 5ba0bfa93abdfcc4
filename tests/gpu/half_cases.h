// The parity cases of the native float16 / bfloat16 CUDA kernels (part of
// tests/gpu/parity_cases.h): broadcasting binary ops and comparisons, unary ops, MatMul (plain,
// strided-batched and per-entry broadcast batches) and Gemm (transB, C broadcast, alpha / beta) in
// both half types. The CPU reference runs the float32 kernels on widened copies and rounds once,
// as the native kernels do, so only the order of GEMM accumulation differs.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/test_graphs.h"
#include "planner/half_float.h"

namespace onepool::test_graphs::parity_detail {

/// Values in [lo, hi) rounded to `dtype` (float16 or bfloat16, nearest even).
inline HostTensor random_halves(DType dtype, const Shape& shape, float lo, float hi,
                                uint32_t seed) {
  const HostTensor floats = random_floats(shape, lo, hi, seed);
  HostTensor t = zeros(dtype, shape);
  for (int64_t i = 0; i < shape.element_count(); ++i) {
    const float value = floats.as<float>()[i];
    const uint16_t bits =
        dtype == DType::kFloat16 ? float_to_half_bits(value) : float_to_bfloat_bits(value);
    std::memcpy(t.data.data() + static_cast<size_t>(i) * sizeof(uint16_t), &bits, sizeof(bits));
  }
  return t;
}

/// A half case's tolerance: one rounding step of the type (2^-10 float16, 2^-7 bfloat16) on
/// values of order 1, with room for a different GEMM accumulation order.
inline Case with_half_tolerance(Case c, DType dtype) {
  c.atol = dtype == DType::kFloat16 ? 4e-3 : 3e-2;
  c.rtol = dtype == DType::kFloat16 ? 4e-3 : 3e-2;
  return c;
}

inline void add_half(std::vector<Case>& cases) {
  for (const DType h : {DType::kFloat16, DType::kBFloat16}) {
    const std::string type = h == DType::kFloat16 ? "float16" : "bfloat16";
    const auto half = [h](const Shape& s, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
      return var(random_halves(h, s, lo, hi, seed));
    };
    const auto half_weight = [h](const Shape& s, uint32_t seed) {
      return constant(random_halves(h, s, -1.0f, 1.0f, seed));
    };
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
      cases.push_back(
          with_half_tolerance(make_case(op, {half({2, 3, 4}, 301), half({3, 1}, 302, 0.5f, 2.0f)},
                                        h, {2, 3, 4}, {}, type),
                              h));
    }
    cases.push_back(with_half_tolerance(make_case("Less", {half({2, 3, 4}, 303), half({4}, 304)},
                                                  DType::kBool, {2, 3, 4}, {}, type),
                                        h));
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Erf"}) {
      cases.push_back(
          with_half_tolerance(make_case(op, {half({2, 3, 5}, 305)}, h, {2, 3, 5}, {}, type), h));
    }
    cases.push_back(with_half_tolerance(make_case("LeakyRelu", {half({2, 3, 5}, 306)}, h, {2, 3, 5},
                                                  {{"alpha", float_attr(0.2f)}}, type),
                                        h));
    cases.push_back(with_half_tolerance(
        make_case("MatMul", {half({2, 3, 4, 16}, 307), half_weight({16, 8}, 308)}, h, {2, 3, 4, 8},
                  {}, type + " folded batch"),
        h));
    cases.push_back(
        with_half_tolerance(make_case("MatMul", {half({2, 4, 16}, 309), half({2, 16, 3}, 310)}, h,
                                      {2, 4, 3}, {}, type + " strided batch"),
                            h));
    cases.push_back(
        with_half_tolerance(make_case("MatMul", {half({2, 1, 4, 8}, 311), half({3, 8, 2}, 312)}, h,
                                      {2, 3, 4, 2}, {}, type + " broadcast batch"),
                            h));
    cases.push_back(with_half_tolerance(
        make_case(
            "Gemm", {half({4, 16}, 313), half_weight({5, 16}, 314), half_weight({5}, 315)}, h,
            {4, 5},
            {{"transB", int_attr(1)}, {"alpha", float_attr(0.5f)}, {"beta", float_attr(2.0f)}},
            type + " transB C"),
        h));
    cases.push_back(
        with_half_tolerance(make_case("Gemm", {half({3, 16}, 316), half_weight({16, 2}, 317)}, h,
                                      {3, 2}, {}, type + " no C"),
                            h));
  }
}

}  // namespace onepool::test_graphs::parity_detail
