// The parity cases of the native float16 / bfloat16 CUDA kernels (part of
// tests/gpu/parity_cases.h): broadcasting binary ops and comparisons, unary ops, MatMul (plain,
// strided-batched and per-entry broadcast batches), Gemm (transB, C broadcast, alpha / beta) and
// Conv (im2col + GEMM with pads, bias and Relu; stride 2; grouped; depthwise; 1x1 direct GEMM;
// 1-D) in both half types. The CPU reference runs the float32 kernels on widened copies and rounds
// once, as the native kernels do, so only the order of GEMM accumulation differs.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/test_graphs.h"
#include "planner/core/half_float.h"

namespace onepool::test_graphs::parity_detail {

/// Values in [lo, hi) rounded to `dtype` (float16 or bfloat16, nearest even); with `step` > 0
/// first rounded to a multiple of `step` (a power of two keeps them exact in both types).
inline HostTensor random_halves(DType dtype, const Shape& shape, float lo, float hi, uint32_t seed,
                                float step = 0.0f) {
  const HostTensor floats = random_floats(shape, lo, hi, seed);
  HostTensor t = zeros(dtype, shape);
  for (int64_t i = 0; i < shape.element_count(); ++i) {
    float value = floats.as<float>()[i];
    if (step > 0.0f) value = std::round(value / step) * step;
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
    // Conv: im2col + GEMM (float32 result) + epilogue, grouped, 1x1 direct GEMM, depthwise, 1-D.
    // Values on a 1/16 grid: every product and sum is exact in float32, so the one rounding to
    // the half type is the same under any summation order (parity_test compares half outputs
    // bit for bit).
    const auto grid = [h](const Shape& s, uint32_t seed) {
      return var(random_halves(h, s, -1.0f, 1.0f, seed, 1.0f / 16));
    };
    const auto grid_weight = [h](const Shape& s, uint32_t seed) {
      return constant(random_halves(h, s, -1.0f, 1.0f, seed, 1.0f / 16));
    };
    cases.push_back(with_half_tolerance(
        make_case("Conv",
                  {grid({2, 4, 9, 9}, 320), grid_weight({8, 4, 3, 3}, 321), grid_weight({8}, 322)},
                  h, {2, 8, 9, 9},
                  {{"pads", ints_attr({1, 1, 1, 1})}, {"onepool_activation", string_attr("Relu")}},
                  type + " 3x3 pads bias Relu"),
        h));
    cases.push_back(with_half_tolerance(
        make_case("Conv", {grid({1, 3, 9, 9}, 323), grid_weight({4, 3, 3, 3}, 324)}, h,
                  {1, 4, 5, 5}, {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}},
                  type + " stride 2"),
        h));
    cases.push_back(with_half_tolerance(
        make_case("Conv",
                  {grid({2, 4, 6, 6}, 325), grid_weight({6, 2, 3, 3}, 326), grid_weight({6}, 327)},
                  h, {2, 6, 4, 4}, {{"group", int_attr(2)}}, type + " grouped bias"),
        h));
    cases.push_back(with_half_tolerance(
        make_case("Conv",
                  {grid({2, 6, 8, 8}, 328), grid_weight({6, 1, 3, 3}, 329), grid_weight({6}, 330)},
                  h, {2, 6, 8, 8},
                  {{"group", int_attr(6)},
                   {"pads", ints_attr({1, 1, 1, 1})},
                   {"onepool_activation", string_attr("Relu")}},
                  type + " depthwise bias Relu"),
        h));
    cases.push_back(with_half_tolerance(
        make_case(
            "Conv",
            {grid({3, 16, 5, 5}, 331), grid_weight({8, 16, 1, 1}, 332), grid_weight({8}, 333)}, h,
            {3, 8, 5, 5}, {}, type + " 1x1 direct GEMM bias"),
        h));
    cases.push_back(with_half_tolerance(
        make_case(
            "Conv", {grid({2, 4, 11}, 334), grid_weight({6, 4, 3}, 335), grid_weight({6}, 336)}, h,
            {2, 6, 6}, {{"strides", ints_attr({2})}, {"pads", ints_attr({1, 1})}}, type + " 1-D"),
        h));
  }
}

}  // namespace onepool::test_graphs::parity_detail
