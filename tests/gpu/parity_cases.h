// The CUDA parity cases: at least one single-node case per op the CUDA registry knows (checked by
// tests/gpu/expectations_test.cc, which also runs every case on the CPU and prepares it for
// CUDA on the host), each path of each op family (1-D and 2-D windows, grouped and transposed
// convolutions, transA, stride-0 batches, the Concat copy path, int32 indices, every Where
// dtype, the recurrent layers' attributes in gpu/recurrent_cases.h), and the shared expectation
// tables of tests/gpu/op_expectations.h with their values. parity_test.cc runs them on the device
// against the CPU.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "gpu/half_cases.h"
#include "gpu/op_expectations.h"
#include "gpu/recurrent_cases.h"
#include "gpu/test_graphs.h"

namespace onepool::test_graphs {

namespace parity_detail {

constexpr DType kF = DType::kFloat32;
constexpr DType kI64 = DType::kInt64;
constexpr DType kB = DType::kBool;

// Floats from {-1, -0.5, 0, 0.5, 1}: comparisons see equal pairs.
inline In coarse_floats(const Shape& s, uint32_t seed) {
  HostTensor t = random_floats(s, 0.0f, 1.0f, seed);
  for (int64_t i = 0; i < s.element_count(); ++i) {
    t.as_mutable<float>()[i] = std::floor(t.as<float>()[i] * 5.0f) * 0.5f - 1.0f;
  }
  return var(t);
}

inline HostTensor scalar_float(float v) { return floats(Shape{}, {v}); }

inline void add_elementwise(std::vector<Case>& cases) {
  // Binary ops broadcast [2,3,4] against [3,1].
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    cases.push_back(make_case(op, {rnd({2, 3, 4}, 1), rnd({3, 1}, 2, 0.5f, 2.0f)}, kF, {2, 3, 4}));
  }
  cases.push_back(make_case("Pow", {rnd({2, 3, 4}, 1, 0.1f, 2.0f), rnd({4}, 2)}, kF, {2, 3, 4}));
  cases.push_back(make_case(
      "Add", {var(random_ints(kI64, {2, 5}, -9, 9, 3)), var(random_ints(kI64, {5}, -9, 9, 4))},
      kI64, {2, 5}, {}, "int64"));
  // Variadic with three inputs of three shapes, and the one-input copy.
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    cases.push_back(make_case(op, {rnd({2, 3, 4}, 5), rnd({3, 1}, 6), rnd({4}, 7)}, kF, {2, 3, 4},
                              {}, "3 inputs"));
  }
  cases.push_back(make_case("Sum", {rnd({3, 4}, 8)}, kF, {3, 4}, {}, "1 input"));
  cases.push_back(
      make_case("PRelu", {rnd({2, 3, 4, 4}, 9), weight({3, 1, 1}, 10)}, kF, {2, 3, 4, 4}));
  // Mod: the shared tables (exact values), then a broadcast int64 case with negative divisors.
  for (int64_t fmod : {0, 1}) {
    std::vector<int64_t> a, b, expected;
    for (const expectations::IntModCase& m : expectations::kIntModCases) {
      if (m.fmod != fmod) continue;
      a.push_back(m.a);
      b.push_back(m.b);
      expected.push_back(m.expected);
    }
    const Shape shape{static_cast<int64_t>(a.size())};
    Case c = make_case("Mod", {var(int64s(shape, a)), var(int64s(shape, b))}, kI64, shape,
                       {{"fmod", int_attr(fmod)}}, "int64 table fmod=" + std::to_string(fmod));
    c.expected.push_back(int64s(shape, expected));
    cases.push_back(std::move(c));
  }
  {
    std::vector<float> a, b, expected;
    for (const expectations::FloatModCase& m : expectations::kFloatModCases) {
      a.push_back(m.a);
      b.push_back(m.b);
      expected.push_back(m.expected);
    }
    const Shape shape{static_cast<int64_t>(a.size())};
    Case c = make_case("Mod", {var(floats(shape, a)), var(floats(shape, b))}, kF, shape,
                       {{"fmod", int_attr(1)}}, "float32 table fmod=1");
    c.atol = 0.0;
    c.rtol = 0.0;
    c.expected.push_back(floats(shape, expected));
    cases.push_back(std::move(c));
  }
  cases.push_back(make_case(
      "Mod", {var(random_ints(kI64, {4, 5}, -50, 50, 11)), var(random_ints(kI64, {5}, -7, 7, 12))},
      kI64, {4, 5}, {}, "int64 broadcast"));
  // Comparisons on int64 and on floats with equal pairs; logic on bools.
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    cases.push_back(make_case(
        op, {var(random_ints(kI64, {2, 5}, 0, 3, 13)), var(random_ints(kI64, {5}, 0, 3, 14))}, kB,
        {2, 5}, {}, "int64"));
    cases.push_back(make_case(op, {coarse_floats({3, 4}, 15), coarse_floats({3, 4}, 16)}, kB,
                              {3, 4}, {}, "float32"));
  }
  for (const char* op : {"And", "Or", "Xor"}) {
    cases.push_back(make_case(
        op, {var(random_ints(kB, {4, 3}, 0, 2, 17)), var(random_ints(kB, {1, 3}, 0, 2, 18))}, kB,
        {4, 3}));
  }
  cases.push_back(make_case("Not", {var(random_ints(kB, {5, 3}, 0, 2, 19))}, kB, {5, 3}));
  // Where: float with a 3-way broadcast, then every dtype of the shared table.
  cases.push_back(make_case("Where",
                            {var(random_ints(kB, {3, 1}, 0, 2, 20)), rnd({3, 4}, 21), rnd({4}, 22)},
                            kF, {3, 4}, {}, "float32 broadcast"));
  for (DType dtype : expectations::kWhereDTypes) {
    cases.push_back(make_case(
        "Where",
        {var(random_ints(kB, {2, 3}, 0, 2, 23)), var(random_ints(dtype, {2, 3}, -100, 100, 24)),
         var(random_ints(dtype, {3}, -100, 100, 25))},
        dtype, {2, 3}, {}, dtype_name(dtype)));
  }
}

inline void add_unary(std::vector<Case>& cases) {
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "HardSwish", "Sin",
                         "Cos", "Floor", "Ceil", "Sign", "Softplus", "Selu", "Elu"}) {
    cases.push_back(make_case(op, {rnd({2, 3, 5}, 30, -3.0f, 3.0f)}, kF, {2, 3, 5}));
  }
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) {
    cases.push_back(make_case(op, {rnd({7, 3}, 31, 0.1f, 4.0f)}, kF, {7, 3}));
  }
  // Round half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0, -1.5 -> -2.
  cases.push_back(make_case(
      "Round", {var(floats({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 0.49f, -2.51f, 3.0f}))}, kF, {8}));
  for (const char* op : {"Relu", "Neg", "Abs", "Sign"}) {
    cases.push_back(
        make_case(op, {var(random_ints(kI64, {9}, -5, 5, 32))}, kI64, {9}, {}, "int64"));
  }
  cases.push_back(make_case("LeakyRelu", {rnd({10}, 33)}, kF, {10}, {{"alpha", float_attr(0.2f)}}));
  cases.push_back(make_case("HardSigmoid", {rnd({10}, 34, -4, 4)}, kF, {10},
                            {{"alpha", float_attr(0.3f)}, {"beta", float_attr(0.4f)}}));
  cases.push_back(make_case(
      "Clip", {rnd({3, 4}, 35), constant(scalar_float(-0.5f)), constant(scalar_float(0.25f))}, kF,
      {3, 4}, {}, "min and max"));
  cases.push_back(make_case("Clip", {rnd({3, 4}, 36), constant(scalar_float(-0.5f))}, kF, {3, 4},
                            {}, "min only"));
  for (const char* approximate : {"none", "tanh"}) {
    Case c = make_case("Gelu", {rnd({4, 6}, 37, -4.0f, 4.0f)}, kF, {4, 6},
                       {{"approximate", string_attr(approximate)}}, approximate);
    c.opset = 20;
    cases.push_back(std::move(c));
  }
  // Cast between every pair the kernels know that models use.
  cases.push_back(make_case("Cast", {rnd({6}, 38, -5, 5)}, kI64, {6}, {{"to", int_attr(7)}},
                            "float32 to int64"));
  cases.push_back(make_case("Cast", {var(random_ints(kI64, {6}, -9, 9, 39))}, kF, {6},
                            {{"to", int_attr(1)}}, "int64 to float32"));
  cases.push_back(
      make_case("Cast", {rnd({6}, 40)}, kB, {6}, {{"to", int_attr(9)}}, "float32 to bool"));
  cases.push_back(make_case("Cast", {var(random_ints(DType::kInt32, {6}, -9, 9, 41))}, kF, {6},
                            {{"to", int_attr(1)}}, "int32 to float32"));
  cases.push_back(make_case("Cast", {rnd({6}, 42, -50, 50)}, DType::kInt32, {6},
                            {{"to", int_attr(6)}}, "float32 to int32"));
  cases.push_back(make_case("Cast", {var(random_ints(kB, {6}, 0, 2, 43))}, kF, {6},
                            {{"to", int_attr(1)}}, "bool to float32"));
  cases.push_back(make_case("Cast", {var(random_ints(kI64, {6}, -9, 9, 44))}, DType::kInt32, {6},
                            {{"to", int_attr(6)}}, "int64 to int32"));
}

inline void add_reductions(std::vector<Case>& cases) {
  cases.push_back(
      make_case("ReduceMean", {rnd({2, 3, 4}, 50)}, kF, {2, 1, 4}, {{"axes", ints_attr({1})}}));
  cases.push_back(make_case("ReduceSum", {rnd({2, 3, 4}, 51), constant(int64s({2}, {0, 2}))}, kF,
                            {3}, {{"keepdims", int_attr(0)}}, "axes input"));
  cases.push_back(
      make_case("ReduceMax", {rnd({4, 300}, 52)}, kF, {4, 1}, {{"axes", ints_attr({-1})}}));
  cases.push_back(
      make_case("ReduceMin", {rnd({3, 5, 7}, 53)}, kF, {1, 5, 1}, {{"axes", ints_attr({0, 2})}}));
  cases.push_back(make_case("ReduceProd", {rnd({4, 6}, 54, 0.5f, 1.5f)}, kF, {4, 1},
                            {{"axes", ints_attr({1})}}));
  for (const char* op : {"ReduceSumSquare", "ReduceL2", "ReduceL1"}) {
    cases.push_back(make_case(op, {rnd({3, 4, 5}, 55)}, kF, {3, 1, 5}, {{"axes", ints_attr({1})}}));
  }
  // ReduceMax / ReduceMin of the shared table: ±inf starts, NaN propagation.
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    const bool is_max = std::string(op) == "ReduceMax";
    std::vector<float> values, expected;
    for (const expectations::ReduceExtremaCase& r : expectations::kReduceExtremaCases) {
      values.insert(values.end(), r.values, r.values + 4);
      expected.push_back(is_max ? r.expected_max : r.expected_min);
    }
    const int64_t rows = static_cast<int64_t>(expected.size());
    Case c = make_case(op, {var(floats({rows, 4}, values))}, kF, {rows, 1},
                       {{"axes", ints_attr({1})}}, "inf and NaN table");
    c.atol = 0.0;
    c.rtol = 0.0;
    c.expected.push_back(floats({rows, 1}, expected));
    cases.push_back(std::move(c));
  }
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    cases.push_back(make_case(op, {rnd({3, 5, 70}, 56, -5, 5)}, kF, {3, 5, 70}, {}, "last axis"));
    cases.push_back(make_case(op, {rnd({3, 5, 7}, 57, -5, 5)}, kF, {3, 5, 7},
                              {{"axis", int_attr(1)}}, "middle axis"));
  }
  cases.push_back(make_case(
      "LayerNormalization",
      {rnd({4, 6, 32}, 58), constant(random_floats({32}, 0.5f, 1.5f, 59)), weight({32}, 60)}, kF,
      {4, 6, 32}, {{"axis", int_attr(-1)}, {"epsilon", float_attr(1e-5f)}}));
}

inline void add_pooling(std::vector<Case>& cases) {
  cases.push_back(make_case("MaxPool", {rnd({2, 3, 9, 9}, 70)}, kF, {2, 3, 5, 5},
                            {{"kernel_shape", ints_attr({3, 3})},
                             {"strides", ints_attr({2, 2})},
                             {"pads", ints_attr({1, 1, 1, 1})}}));
  cases.push_back(make_case("MaxPool", {rnd({2, 3, 10}, 71)}, kF, {2, 3, 4},
                            {{"kernel_shape", ints_attr({3})}, {"strides", ints_attr({2})}},
                            "1-D"));
  // NaN propagates through a window; -inf loses to any finite value (rotated inputs too).
  cases.push_back(make_case(
      "MaxPool",
      {var(floats({1, 1, 8}, {1.0f, expectations::kNaN, 3.0f, -expectations::kInf, 6.0f,
                              -expectations::kInf, 2.0f, 5.0f}))},
      kF, {1, 1, 4}, {{"kernel_shape", ints_attr({2})}, {"strides", ints_attr({2})}}, "NaN"));
  cases.push_back(make_case("AveragePool", {rnd({1, 2, 8, 8}, 72)}, kF, {1, 2, 4, 4},
                            {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}}));
  cases.push_back(make_case("AveragePool", {rnd({1, 2, 7, 7}, 73)}, kF, {1, 2, 4, 4},
                            {{"kernel_shape", ints_attr({3, 3})},
                             {"strides", ints_attr({2, 2})},
                             {"pads", ints_attr({1, 1, 1, 1})},
                             {"count_include_pad", int_attr(1)}},
                            "count_include_pad"));
  cases.push_back(make_case("AveragePool", {rnd({2, 3, 10}, 74)}, kF, {2, 3, 10},
                            {{"kernel_shape", ints_attr({3})}, {"pads", ints_attr({1, 1})}},
                            "1-D padded"));
  cases.push_back(make_case("GlobalAveragePool", {rnd({2, 8, 7, 7}, 75)}, kF, {2, 8, 1, 1}));
  cases.push_back(make_case("GlobalMaxPool", {rnd({2, 8, 7, 7}, 76)}, kF, {2, 8, 1, 1}));
}

inline void add_convolutions(std::vector<Case>& cases) {
  // im2col + GEMM with bias and a fused Relu; grouped stride 2; direct 1x1; depthwise; dilated;
  // 1-D.
  cases.push_back(make_case(
      "Conv", {rnd({2, 4, 9, 9}, 80), weight({8, 4, 3, 3}, 81), weight({8}, 82)}, kF, {2, 8, 9, 9},
      {{"pads", ints_attr({1, 1, 1, 1})}, {"onepool_activation", string_attr("Relu")}},
      "3x3 bias Relu"));
  cases.push_back(make_case("Conv", {rnd({1, 4, 10, 10}, 83), weight({6, 2, 3, 3}, 84)}, kF,
                            {1, 6, 4, 4}, {{"group", int_attr(2)}, {"strides", ints_attr({2, 2})}},
                            "grouped stride 2"));
  cases.push_back(make_case("Conv", {rnd({3, 16, 5, 5}, 85), weight({8, 16, 1, 1}, 86)}, kF,
                            {3, 8, 5, 5}, {}, "1x1 direct GEMM"));
  cases.push_back(make_case(
      "Conv", {rnd({2, 6, 8, 8}, 87), weight({6, 1, 3, 3}, 88), weight({6}, 89)}, kF, {2, 6, 8, 8},
      {{"group", int_attr(6)}, {"pads", ints_attr({1, 1, 1, 1})}}, "depthwise"));
  cases.push_back(make_case("Conv", {rnd({1, 2, 9, 9}, 90), weight({4, 2, 3, 3}, 91)}, kF,
                            {1, 4, 5, 5}, {{"dilations", ints_attr({2, 2})}}, "dilated"));
  cases.push_back(make_case("Conv", {rnd({2, 4, 11}, 92), weight({6, 4, 3}, 93), weight({6}, 94)},
                            kF, {2, 6, 6},
                            {{"strides", ints_attr({2})}, {"pads", ints_attr({1, 1})}}, "1-D"));
  cases.push_back(make_case(
      "Conv", {rnd({1, 3, 8, 8}, 95), weight({4, 3, 3, 3}, 96)}, kF, {1, 4, 4, 4},
      {{"strides", ints_attr({2, 2})}, {"auto_pad", string_attr("SAME_UPPER")}}, "SAME_UPPER"));
  // The fused 1x1 + depthwise Conv (the optimizer's ai.onepool op): stride 2 with both biases
  // and activations, and stride 1 without the 1x1's bias, two images.
  cases.push_back(make_case("ai.onepool.PointwiseDepthwiseConv",
                            {rnd({1, 4, 9, 12}, 97), weight({6, 4, 1, 1}, 98), weight({6}, 99),
                             weight({6, 1, 3, 3}, 103), weight({6}, 104)},
                            kF, {1, 6, 5, 6},
                            {{"group", int_attr(6)},
                             {"strides", ints_attr({2, 2})},
                             {"pads", ints_attr({1, 1, 1, 1})},
                             {"onepool_pointwise_activation", string_attr("Clip")},
                             {"onepool_pointwise_alpha", float_attr(0.0f)},
                             {"onepool_pointwise_beta", float_attr(6.0f)},
                             {"onepool_activation", string_attr("Relu")}},
                            "stride 2"));
  cases.push_back(make_case(
      "ai.onepool.PointwiseDepthwiseConv",
      {rnd({2, 3, 7, 8}, 105), weight({5, 3, 1, 1}, 106), std::nullopt, weight({5, 1, 3, 3}, 107)},
      kF, {2, 5, 7, 8}, {{"group", int_attr(5)}, {"pads", ints_attr({1, 1, 1, 1})}},
      "stride 1, two images"));
  cases.push_back(make_case("ai.onepool.PointwiseDepthwiseConv",
                            {rnd({2, 3, 7, 8}, 108), weight({6, 3, 1, 1}, 109), weight({6}, 110),
                             weight({6, 1, 3, 3}, 111), std::nullopt, weight({3, 6, 1, 1}, 112),
                             weight({3}, 113), rnd({2, 3, 7, 8}, 114)},
                            kF, {2, 3, 7, 8},
                            {{"group", int_attr(6)},
                             {"pads", ints_attr({1, 1, 1, 1})},
                             {"onepool_activation", string_attr("Relu")},
                             {"onepool_project_activation", string_attr("Relu")}},
                            "with a projection and a residual"));
  cases.push_back(make_case(
      "ai.onepool.PointwiseDepthwiseConv",
      {rnd({1, 4, 9, 10}, 115), std::nullopt, std::nullopt, weight({4, 1, 3, 3}, 116),
       weight({4}, 117), weight({5, 4, 1, 1}, 118)},
      kF, {1, 5, 5, 5},
      {{"group", int_attr(4)}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}},
      "depthwise + projection, stride 2"));
  // ConvTranspose: 3x3/2 with output padding, grouped, 2-D output_shape, and the 1-D table.
  cases.push_back(make_case("ConvTranspose",
                            {rnd({1, 4, 5, 5}, 100), weight({4, 3, 3, 3}, 101), weight({3}, 102)},
                            kF, {1, 3, 10, 10},
                            {{"strides", ints_attr({2, 2})},
                             {"pads", ints_attr({1, 1, 1, 1})},
                             {"output_padding", ints_attr({1, 1})}},
                            "output_padding"));
  cases.push_back(make_case("ConvTranspose", {rnd({2, 4, 4, 4}, 103), weight({4, 2, 3, 3}, 104)},
                            kF, {2, 4, 6, 6}, {{"group", int_attr(2)}}, "grouped"));
  // H: full 7, out 6 -> pads 1, 0; W: full 9, out 8 -> pads 1, 0.
  cases.push_back(make_case(
      "ConvTranspose", {rnd({1, 2, 3, 4}, 105), weight({2, 3, 3, 3}, 106)}, kF, {1, 3, 6, 8},
      {{"strides", ints_attr({2, 2})}, {"output_shape", ints_attr({6, 8})}}, "2-D output_shape"));
  uint32_t seed = 110;
  for (const expectations::ConvTransposePadCase& p : expectations::kConvTransposePadCases) {
    Attributes attributes = {{"strides", ints_attr({p.stride})},
                             {"dilations", ints_attr({p.dilation})},
                             {"auto_pad", string_attr(p.auto_pad)}};
    if (p.output_padding != 0)
      attributes.push_back({"output_padding", ints_attr({p.output_padding})});
    if (p.pad_begin_attr >= 0) {
      attributes.push_back({"pads", ints_attr({p.pad_begin_attr, p.pad_end_attr})});
    }
    if (p.output_shape > 0) attributes.push_back({"output_shape", ints_attr({p.output_shape})});
    cases.push_back(make_case(
        "ConvTranspose",
        {rnd({1, 2, p.in}, seed), weight({2, 3, p.kernel}, seed + 1), weight({3}, seed + 2)}, kF,
        {1, 3, p.expected_out}, attributes, std::string("1-D ") + p.name));
    seed += 3;
  }
}

inline void add_gemm(std::vector<Case>& cases) {
  cases.push_back(make_case("MatMul", {rnd({2, 3, 4, 5}, 120), weight({5, 6}, 121)}, kF,
                            {2, 3, 4, 6}, {}, "2-D weight"));
  cases.push_back(make_case("MatMul", {rnd({2, 4, 5}, 122), rnd({2, 5, 3}, 123)}, kF, {2, 4, 3}, {},
                            "equal batches"));
  cases.push_back(make_case("MatMul", {rnd({2, 1, 4, 5}, 124), rnd({3, 5, 2}, 125)}, kF,
                            {2, 3, 4, 2}, {}, "broadcast batches"));
  cases.push_back(make_case("MatMul", {rnd({4, 5}, 126), rnd({3, 5, 6}, 127)}, kF, {3, 4, 6}, {},
                            "2-D A, batched B (stride 0)"));
  cases.push_back(make_case("MatMul", {rnd({5}, 128), rnd({5, 3}, 129)}, kF, {3}, {}, "1-D A"));
  cases.push_back(
      make_case("Gemm", {rnd({4, 7}, 130), weight({5, 7}, 131), weight({5}, 132)}, kF, {4, 5},
                {{"transB", int_attr(1)}, {"alpha", float_attr(0.5f)}, {"beta", float_attr(2.0f)}},
                "transB alpha beta"));
  cases.push_back(make_case("Gemm", {rnd({7, 4}, 133), weight({7, 5}, 134), weight({4, 5}, 135)},
                            kF, {4, 5}, {{"transA", int_attr(1)}}, "transA"));
  cases.push_back(
      make_case("Gemm", {rnd({3, 6}, 136), weight({6, 2}, 137)}, kF, {3, 2}, {}, "no C"));
}

inline void add_data(std::vector<Case>& cases) {
  cases.push_back(make_case("Transpose", {rnd({2, 3, 4, 5}, 140)}, kF, {5, 2, 4, 3},
                            {{"perm", ints_attr({3, 0, 2, 1})}}));
  cases.push_back(make_case("Concat", {rnd({2, 3, 4}, 141), rnd({2, 1, 4}, 142)}, kF, {2, 4, 4},
                            {{"axis", int_attr(1)}}, "inputs"));
  // A constant input is never placed in the output: the copy path always runs for it.
  cases.push_back(make_case("Concat", {weight({2, 2, 4}, 143), rnd({2, 3, 4}, 144)}, kF, {2, 5, 4},
                            {{"axis", int_attr(1)}}, "copy path"));
  {
    Case split = make_case("Split", {rnd({2, 6, 3}, 145), constant(int64s({2}, {2, 4}))}, kF,
                           {2, 2, 3}, {{"axis", int_attr(1)}});
    split.outputs.push_back({kF, Shape{2, 4, 3}});
    cases.push_back(std::move(split));
  }
  cases.push_back(
      make_case("Slice",
                {rnd({5, 7}, 146), constant(int64s({2}, {4, 1})), constant(int64s({2}, {0, 7})),
                 constant(int64s({2}, {0, 1})), constant(int64s({2}, {-2, 2}))},
                kF, {2, 3}, {}, "negative step"));
  cases.push_back(make_case("Gather",
                            {rnd({3, 5, 2}, 147), constant(int64s({2, 2}, {4, -1, 0, 2}))}, kF,
                            {3, 2, 2, 2}, {{"axis", int_attr(1)}}, "int64 indices"));
  cases.push_back(make_case(
      "Gather",
      {rnd({6, 3}, 148), constant(tensor_of(DType::kInt32, {3}, std::vector<int32_t>{5, 0, -2}))},
      kF, {3, 3}, {}, "int32 indices"));
  cases.push_back(make_case("Pad", {rnd({2, 3, 4}, 149), constant(int64s({6}, {0, 1, 2, 0, 2, 1}))},
                            kF, {2, 6, 7}, {{"mode", string_attr("reflect")}}, "reflect"));
  cases.push_back(make_case("Pad", {rnd({2, 3}, 150), constant(int64s({4}, {1, 0, 0, 2}))}, kF,
                            {3, 5}, {}, "constant"));
  cases.push_back(make_case("Pad", {rnd({2, 3}, 151), constant(int64s({4}, {2, 1, 1, 3}))}, kF,
                            {5, 7}, {{"mode", string_attr("edge")}}, "edge"));
  cases.push_back(
      make_case("Expand", {rnd({3, 1}, 152), constant(int64s({3}, {2, 3, 4}))}, kF, {2, 3, 4}));
  cases.push_back(make_case("Tile", {rnd({2, 3}, 153), constant(int64s({2}, {2, 3}))}, kF, {4, 9}));
  cases.push_back(
      make_case("Reshape", {rnd({2, 3, 4}, 154), constant(int64s({2}, {6, 4}))}, kF, {6, 4}));
  cases.push_back(
      make_case("Flatten", {rnd({2, 3, 4}, 155)}, kF, {2, 12}, {{"axis", int_attr(1)}}));
  cases.push_back(
      make_case("Squeeze", {rnd({2, 1, 3}, 156), constant(int64s({1}, {1}))}, kF, {2, 3}));
  cases.push_back(
      make_case("Unsqueeze", {rnd({2, 3}, 157), constant(int64s({1}, {0}))}, kF, {1, 2, 3}));
  cases.push_back(make_case("Identity", {var(random_ints(kI64, {7}, -9, 9, 158))}, kI64, {7}));
  {
    // Inference Dropout: the output is the input, the mask all true.
    Case dropout = make_case("Dropout", {rnd({3, 4}, 159)}, kF, {3, 4}, {}, "with mask");
    dropout.outputs.push_back({kB, Shape{3, 4}});
    cases.push_back(std::move(dropout));
  }
  cases.push_back(make_case("Dropout", {rnd({3, 4}, 160)}, kF, {3, 4}, {}, "no mask"));
  HostTensor scales = floats({4}, {1.0f, 1.0f, 2.0f, 2.0f});
  cases.push_back(make_case("Resize", {rnd({1, 2, 3, 4}, 161), std::nullopt, constant(scales)}, kF,
                            {1, 2, 6, 8}, {{"mode", string_attr("nearest")}}, "nearest"));
  cases.push_back(make_case("Resize", {rnd({1, 2, 3, 4}, 162), std::nullopt, constant(scales)}, kF,
                            {1, 2, 6, 8}, {{"mode", string_attr("linear")}}, "linear"));
  {
    Case upsample = make_case("Upsample", {rnd({1, 2, 3, 4}, 163), constant(scales)}, kF,
                              {1, 2, 6, 8}, {{"mode", string_attr("nearest")}});
    upsample.opset = 9;
    cases.push_back(std::move(upsample));
  }
  cases.push_back(
      make_case("BatchNormalization",
                {rnd({2, 3, 4, 4}, 164), constant(random_floats({3}, 0.5f, 1.5f, 165)),
                 weight({3}, 166), weight({3}, 167), constant(random_floats({3}, 0.5f, 2.0f, 168))},
                kF, {2, 3, 4, 4}));
}

}  // namespace parity_detail

/// Every parity case, in a fixed order (labels are unique).
inline std::vector<Case> parity_cases() {
  std::vector<Case> cases;
  parity_detail::add_elementwise(cases);
  parity_detail::add_unary(cases);
  parity_detail::add_reductions(cases);
  parity_detail::add_pooling(cases);
  parity_detail::add_convolutions(cases);
  parity_detail::add_gemm(cases);
  parity_detail::add_data(cases);
  parity_detail::add_recurrent(cases);  // gpu/recurrent_cases.h
  parity_detail::add_half(cases);       // gpu/half_cases.h
  return cases;
}

}  // namespace onepool::test_graphs
