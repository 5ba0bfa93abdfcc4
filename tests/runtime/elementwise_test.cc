// CPU elementwise kernels: broadcasting shapes, dtypes, Clip forms, integer edge cases, NaN,
// threading on large tensors, in-place runs and errors. Expected values are written inline.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <class T>
TestInput typed(DType dtype, Shape shape, const std::vector<T>& values, bool constant = false) {
  return {make_host_tensor(dtype, shape, values), constant};
}
TestInput i32(Shape shape, const std::vector<int32_t>& values) {
  return typed(DType::kInt32, shape, values);
}
TestInput b8(Shape shape, const std::vector<uint8_t>& values) {
  return typed(DType::kBool, shape, values);
}

// Runs a one-output node and returns output 0; fails the test on error.
HostTensor run_one(const std::string& op, const std::vector<std::optional<TestInput>>& inputs,
                   OutputSpec output, const AttributeMap& attributes = {}, int threads = 2) {
  auto outputs = run_single_node(op, inputs, {output}, attributes, threads);
  REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
  return (*outputs)[0];
}

Status run_error(const std::string& op, const std::vector<std::optional<TestInput>>& inputs,
                 OutputSpec output, const AttributeMap& attributes = {}) {
  auto outputs = run_single_node(op, inputs, {output}, attributes);
  REQUIRE(!outputs.has_value());
  return outputs.status();
}

void check_floats(const HostTensor& tensor, const std::vector<float>& expected,
                  float tolerance = 1e-6f) {
  const auto values = values_of<float>(tensor);
  REQUIRE(values.size() == expected.size());
  for (size_t i = 0; i < values.size(); ++i) {
    INFO("element " << i << ": got " << values[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(values[i]));
    } else if (std::isinf(expected[i])) {
      CHECK(values[i] == expected[i]);
    } else {
      CHECK(std::fabs(values[i] - expected[i]) <=
            tolerance * std::max(1.0f, std::fabs(expected[i])));
    }
  }
}

AttributeMap attributes_of(std::initializer_list<std::pair<std::string, Attribute>> entries) {
  AttributeMap map;
  for (const auto& [name, value] : entries) map.set(name, value);
  return map;
}

// [2,3] + [2,3] = elementwise sum; Sub and Mul the same shapes.
TEST_CASE("same-shape float arithmetic") {
  const auto a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = f32({2, 3}, {10, 20, 30, 40, 50, 60});
  check_floats(run_one("Add", {a, b}, {DType::kFloat32, {2, 3}}), {11, 22, 33, 44, 55, 66});
  check_floats(run_one("Sub", {a, b}, {DType::kFloat32, {2, 3}}), {-9, -18, -27, -36, -45, -54});
  check_floats(run_one("Mul", {a, b}, {DType::kFloat32, {2, 3}}), {10, 40, 90, 160, 250, 360});
  check_floats(run_one("Div", {b, a}, {DType::kFloat32, {2, 3}}), {10, 10, 10, 10, 10, 10});
}

// A rank-0 constant on either side: [1..4] * 2 = [2,4,6,8]; 10 - [1..4] = [9,8,7,6].
TEST_CASE("scalar operand on either side") {
  const auto x = f32({4}, {1, 2, 3, 4});
  check_floats(run_one("Mul", {x, f32({}, {2}, true)}, {DType::kFloat32, {4}}), {2, 4, 6, 8});
  check_floats(run_one("Sub", {f32({}, {10}, true), x}, {DType::kFloat32, {4}}), {9, 8, 7, 6});
}

// x[n,c,h,w] = 0..23 over [2,3,2,2]; bias [1,3,1,1] = {100,200,300}: each run of 4 gets
// the bias of its channel.
TEST_CASE("bias-like [N,C,H,W] + [1,C,1,1]") {
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  const auto out = run_one("Add", {f32({2, 3, 2, 2}, x), f32({1, 3, 1, 1}, {100, 200, 300}, true)},
                           {DType::kFloat32, {2, 3, 2, 2}});
  check_floats(out, {100, 101, 102, 103, 204, 205, 206, 207, 308, 309, 310, 311,
                     112, 113, 114, 115, 216, 217, 218, 219, 320, 321, 322, 323});
}

// a [2,1,3] = {0,1,2 | 10,11,12}, b [1,4,1] = {100,200,300,400}: out[i,j,k] = a[i,k] + b[j].
TEST_CASE("general broadcast [2,1,3] + [1,4,1]") {
  const auto out =
      run_one("Add", {f32({2, 1, 3}, {0, 1, 2, 10, 11, 12}), f32({1, 4, 1}, {100, 200, 300, 400})},
              {DType::kFloat32, {2, 4, 3}});
  check_floats(out, {100, 101, 102, 200, 201, 202, 300, 301, 302, 400, 401, 402,
                     110, 111, 112, 210, 211, 212, 310, 311, 312, 410, 411, 412});
  // [3,1] - [1,2]: rows {1,2,3} minus columns {10,20}.
  check_floats(
      run_one("Sub", {f32({3, 1}, {1, 2, 3}), f32({1, 2}, {10, 20})}, {DType::kFloat32, {3, 2}}),
      {-9, -19, -8, -18, -7, -17});
}

// cond [2,1] = {true,false}, x [1,3] = {1,2,3}, y scalar -1: row 0 takes x, row 1 takes y.
TEST_CASE("Where broadcasts condition, X and Y three ways") {
  const auto out = run_one("Where", {b8({2, 1}, {1, 0}), f32({1, 3}, {1, 2, 3}), f32({}, {-1})},
                           {DType::kFloat32, {2, 3}});
  check_floats(out, {1, 2, 3, -1, -1, -1});
  // int64 values, same shapes: {1,0,0,1} picks {10,-2,-3,40}.
  const auto longs = run_one(
      "Where", {b8({4}, {1, 0, 0, 1}), i64({4}, {10, 20, 30, 40}), i64({4}, {-1, -2, -3, -4})},
      {DType::kInt64, {4}});
  CHECK(values_of<int64_t>(longs) == std::vector<int64_t>{10, -2, -3, 40});
}

// float -> int64 and int8 truncate toward zero; float -> bool is x != 0 (NaN -> true);
// back to float gives the integer values and 0/1.
TEST_CASE("Cast float to int64, bool, int8 and back") {
  const auto x = f32({6}, {-2.7f, -0.5f, 0.5f, 2.9f, 100.0f, 0.0f});
  const auto as_i64 =
      run_one("Cast", {x}, {DType::kInt64, {6}}, attributes_of({{"to", int_attr(7)}}));
  CHECK(values_of<int64_t>(as_i64) == std::vector<int64_t>{-2, 0, 0, 2, 100, 0});
  const auto as_i8 =
      run_one("Cast", {x}, {DType::kInt8, {6}}, attributes_of({{"to", int_attr(3)}}));
  CHECK(values_of<int8_t>(as_i8) == std::vector<int8_t>{-2, 0, 0, 2, 100, 0});
  const auto as_bool = run_one("Cast", {f32({5}, {0.0f, -0.0f, 0.1f, kNaN, -3.0f})},
                               {DType::kBool, {5}}, attributes_of({{"to", int_attr(9)}}));
  CHECK(values_of<uint8_t>(as_bool) == std::vector<uint8_t>{0, 0, 1, 1, 1});

  check_floats(run_one("Cast", {TestInput{as_i64}}, {DType::kFloat32, {6}}), {-2, 0, 0, 2, 100, 0});
  check_floats(run_one("Cast", {TestInput{as_i8}}, {DType::kFloat32, {6}}), {-2, 0, 0, 2, 100, 0});
  check_floats(run_one("Cast", {TestInput{as_bool}}, {DType::kFloat32, {5}}), {0, 0, 1, 1, 1});
  // int64 -> int32 keeps the low 32 bits (static_cast): 2^32 + 5 -> 5.
  const auto narrowed =
      run_one("Cast", {i64({2}, {(int64_t{1} << 32) + 5, -7})}, {DType::kInt32, {2}});
  CHECK(values_of<int32_t>(narrowed) == std::vector<int32_t>{5, -7});
}

// A float no integer type holds (NaN, +-Inf, out of range) gets x86's result on every build and
// CPU (C++ leaves it undefined): int32 / int64 their minimum, narrower types the int32 result
// wrapped (300 -> uint8 44, NaN -> 0), uint32 the int64 result wrapped, uint64 the value when it
// fits, else the int64 result wrapped (NaN -> 2^63). Clang's UBSan rejects the plain cast.
TEST_CASE("Cast of floats outside an integer type's range is defined") {
  const auto x = f32({8}, {kNaN, kInf, -kInf, 3e9f, -3e9f, 300.0f, -1.0f, 1.9e19f});
  const auto cast_to = [&](DType to, int onnx_type) {
    return run_one("Cast", {x}, {to, {8}}, attributes_of({{"to", int_attr(onnx_type)}}));
  };
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  CHECK(values_of<int32_t>(cast_to(DType::kInt32, 6)) ==
        std::vector<int32_t>{kMin32, kMin32, kMin32, kMin32, kMin32, 300, -1, kMin32});
  CHECK(values_of<int64_t>(cast_to(DType::kInt64, 7)) ==
        std::vector<int64_t>{kMin64, kMin64, kMin64, 3000000000, -3000000000, 300, -1, kMin64});
  CHECK(values_of<uint8_t>(cast_to(DType::kUInt8, 2)) ==
        std::vector<uint8_t>{0, 0, 0, 0, 0, 44, 255, 0});
  CHECK(values_of<int16_t>(cast_to(DType::kInt16, 5)) ==
        std::vector<int16_t>{0, 0, 0, 0, 0, 300, -1, 0});
  CHECK(values_of<uint32_t>(cast_to(DType::kUInt32, 12)) ==
        std::vector<uint32_t>{0, 0, 0, 3000000000u, 1294967296u, 300, 4294967295u, 0});
  constexpr uint64_t kTwoTo63 = uint64_t{1} << 63;
  CHECK(values_of<uint64_t>(cast_to(DType::kUInt64, 13)) ==
        std::vector<uint64_t>{kTwoTo63, kTwoTo63, kTwoTo63, 3000000000u, 18446744070709551616u, 300,
                              18446744073709551615u, kTwoTo63});
}

// float16 bits: 1.0 = 0x3C00, -2.0 = 0xC000, 65504 = 0x7BFF (largest), 1e6 -> inf 0x7C00,
// 2^-24 = 0x0001 (smallest subnormal); converting back gives the same floats (inf for 1e6).
TEST_CASE("Cast to and from float16") {
  const auto halves = run_one("Cast", {f32({5}, {1.0f, -2.0f, 65504.0f, 1e6f, 5.9604645e-8f})},
                              {DType::kFloat16, {5}});
  CHECK(values_of<uint16_t>(halves) ==
        std::vector<uint16_t>{0x3C00, 0xC000, 0x7BFF, 0x7C00, 0x0001});
  check_floats(run_one("Cast", {TestInput{halves}}, {DType::kFloat32, {5}}),
               {1.0f, -2.0f, 65504.0f, kInf, 5.9604645e-8f});
}

// Clip {-2,-0.5,0.5,2} to [-1,1] -> {-1,-0.5,0.5,1}, from attributes (opset < 11 form) and from
// inputs (opset >= 11: constant min, run-time max); max only -> {-2,-0.5,0.5,1}.
TEST_CASE("Clip attribute and input forms") {
  const auto x = f32({4}, {-2.0f, -0.5f, 0.5f, 2.0f});
  const OutputSpec out{DType::kFloat32, {4}};
  check_floats(run_one("Clip", {x}, out,
                       attributes_of({{"min", float_attr(-1.0f)}, {"max", float_attr(1.0f)}})),
               {-1.0f, -0.5f, 0.5f, 1.0f});
  check_floats(run_one("Clip", {x, f32({}, {-1.0f}, true), f32({}, {1.0f})}, out),
               {-1.0f, -0.5f, 0.5f, 1.0f});
  check_floats(run_one("Clip", {x, std::nullopt, f32({}, {1.0f})}, out),
               {-2.0f, -0.5f, 0.5f, 1.0f});
  check_floats(run_one("Clip", {x}, out), {-2.0f, -0.5f, 0.5f, 2.0f});
  // int32 with bounds [0, 6]: {-3, 4, 9} -> {0, 4, 6}.
  const auto ints =
      run_one("Clip", {i32({3}, {-3, 4, 9}), i32({}, {0}), i32({}, {6})}, {DType::kInt32, {3}});
  CHECK(values_of<int32_t>(ints) == std::vector<int32_t>{0, 4, 6});
}

// Integer Div truncates toward zero; x / 0 = 0 and INT_MIN / -1 = INT_MIN (wraps), no SIGFPE.
TEST_CASE("integer Div truncates and survives division by zero") {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const auto out =
      run_one("Div", {i32({6}, {7, -7, 7, -7, 5, kMin}), i32({6}, {2, 2, -2, -2, 0, -1})},
              {DType::kInt32, {6}});
  CHECK(values_of<int32_t>(out) == std::vector<int32_t>{3, -3, -3, 3, 0, kMin});
  const auto longs = run_one("Div", {i64({3}, {100, -9, 1}), i64({}, {4})}, {DType::kInt64, {3}});
  CHECK(values_of<int64_t>(longs) == std::vector<int64_t>{25, -2, 0});
  // uint8 wraps on Add: 200 + 100 = 44.
  const auto bytes = run_one(
      "Add",
      {typed<uint8_t>(DType::kUInt8, {2}, {200, 1}), typed<uint8_t>(DType::kUInt8, {2}, {100, 2})},
      {DType::kUInt8, {2}});
  CHECK(values_of<uint8_t>(bytes) == std::vector<uint8_t>{44, 3});
}

// Mod: fmod=0 takes the divisor's sign (-7 mod 3 = 2, 7 mod -3 = -2), fmod=1 the dividend's
// (-7 fmod 3 = -1); float fmod: 5.5 fmod 2 = 1.5, -5.5 fmod 2 = -1.5.
TEST_CASE("Mod integer and float forms") {
  const auto a = i32({4}, {-7, 7, 6, 5});
  const auto b = i32({4}, {3, -3, 3, 0});
  CHECK(values_of<int32_t>(run_one("Mod", {a, b}, {DType::kInt32, {4}})) ==
        std::vector<int32_t>{2, -2, 0, 0});
  CHECK(values_of<int32_t>(
            run_one("Mod", {a, b}, {DType::kInt32, {4}}, attributes_of({{"fmod", int_attr(1)}}))) ==
        std::vector<int32_t>{-1, 1, 0, 0});
  check_floats(run_one("Mod", {f32({2}, {5.5f, -5.5f}), f32({}, {2.0f})}, {DType::kFloat32, {2}},
                       attributes_of({{"fmod", int_attr(1)}})),
               {1.5f, -1.5f});
  const Status error =
      run_error("Mod", {f32({1}, {1.0f}), f32({1}, {1.0f})}, {DType::kFloat32, {1}});
  CHECK(error.code() == StatusCode::kInvalidModel);
}

// Max/Min propagate NaN from either side; Relu, LeakyRelu and Add keep NaN.
TEST_CASE("NaN propagation") {
  const auto a = f32({3}, {kNaN, 1.0f, 2.0f});
  const auto b = f32({3}, {1.0f, kNaN, 3.0f});
  check_floats(run_one("Max", {a, b}, {DType::kFloat32, {3}}), {kNaN, kNaN, 3.0f});
  check_floats(run_one("Min", {a, b}, {DType::kFloat32, {3}}), {kNaN, kNaN, 2.0f});
  check_floats(run_one("Relu", {f32({3}, {kNaN, -1.0f, 2.0f})}, {DType::kFloat32, {3}}),
               {kNaN, 0.0f, 2.0f});
  check_floats(run_one("LeakyRelu", {f32({2}, {kNaN, -2.0f})}, {DType::kFloat32, {2}}),
               {kNaN, -0.02f});
  check_floats(run_one("Add", {a, b}, {DType::kFloat32, {3}}), {kNaN, kNaN, 5.0f});
}

// Sum of [2,2] + [2] + scalar: {1,2,3,4} + {10,20} + 100; Mean of three [2] tensors; Max of
// int64 with one input is a copy.
TEST_CASE("variadic Sum, Mean, Max with broadcasting") {
  check_floats(run_one("Sum", {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {10, 20}), f32({}, {100})},
                       {DType::kFloat32, {2, 2}}),
               {111, 122, 113, 124});
  check_floats(run_one("Mean", {f32({2}, {1, 2}), f32({2}, {3, 4}), f32({2}, {5, 12})},
                       {DType::kFloat32, {2}}),
               {3, 6});
  // The first operand broadcasts too: [1] + [3] -> [3].
  check_floats(run_one("Max", {f32({1}, {2}), f32({3}, {1, 2, 3})}, {DType::kFloat32, {3}}),
               {2, 2, 3});
  CHECK(values_of<int64_t>(run_one("Max", {i64({3}, {5, -1, 7})}, {DType::kInt64, {3}})) ==
        std::vector<int64_t>{5, -1, 7});
}

// Pow: float base ^ int64 exponent {2,3,0.5^-1}; constant exponent 2 takes the x*x path; int32
// base ^ int32 exponent: 3^3 = 27, 2^10 = 1024; broadcast exponent [2] over [2,2].
TEST_CASE("Pow with mixed dtypes and fast paths") {
  check_floats(
      run_one("Pow", {f32({3}, {2.0f, 3.0f, 0.5f}), i64({3}, {3, 2, -1})}, {DType::kFloat32, {3}}),
      {8.0f, 9.0f, 2.0f});
  check_floats(run_one("Pow", {f32({3}, {-3.0f, 1.5f, 4.0f}), f32({}, {2.0f}, true)},
                       {DType::kFloat32, {3}}),
               {9.0f, 2.25f, 16.0f});
  check_floats(
      run_one("Pow", {f32({2}, {9.0f, 2.25f}), f32({1}, {0.5f}, true)}, {DType::kFloat32, {2}}),
      {3.0f, 1.5f});
  CHECK(values_of<int32_t>(run_one("Pow", {i32({2}, {3, 2}), i32({2}, {3, 10})},
                                   {DType::kInt32, {2}})) == std::vector<int32_t>{27, 1024});
  check_floats(
      run_one("Pow", {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {2, 3})}, {DType::kFloat32, {2, 2}}),
      {1, 8, 9, 64});
}

// Comparisons broadcast and output bool; logic ops on bool.
TEST_CASE("comparisons and logic") {
  const auto x = f32({2, 2}, {1, 2, 3, 4});
  const auto t = f32({2}, {2, 3});
  CHECK(values_of<uint8_t>(run_one("Less", {x, t}, {DType::kBool, {2, 2}})) ==
        std::vector<uint8_t>{1, 1, 0, 0});
  CHECK(values_of<uint8_t>(run_one("GreaterOrEqual", {x, t}, {DType::kBool, {2, 2}})) ==
        std::vector<uint8_t>{0, 0, 1, 1});
  CHECK(values_of<uint8_t>(run_one("Equal", {i64({3}, {1, 2, 3}), i64({}, {2})},
                                   {DType::kBool, {3}})) == std::vector<uint8_t>{0, 1, 0});
  const auto p = b8({4}, {0, 0, 1, 1});
  const auto q = b8({4}, {0, 1, 0, 1});
  CHECK(values_of<uint8_t>(run_one("And", {p, q}, {DType::kBool, {4}})) ==
        std::vector<uint8_t>{0, 0, 0, 1});
  CHECK(values_of<uint8_t>(run_one("Or", {p, q}, {DType::kBool, {4}})) ==
        std::vector<uint8_t>{0, 1, 1, 1});
  CHECK(values_of<uint8_t>(run_one("Xor", {p, q}, {DType::kBool, {4}})) ==
        std::vector<uint8_t>{0, 1, 1, 0});
  CHECK(values_of<uint8_t>(run_one("Not", {p}, {DType::kBool, {4}})) ==
        std::vector<uint8_t>{1, 1, 0, 0});
}

// Activations and math at a few points (values from the ONNX formulas):
// Sigmoid(0)=0.5, Sigmoid(-100)=0; HardSigmoid(x)=clamp(0.2x+0.5); HardSwish(3)=3,
// HardSwish(-1)=-1/3; Softplus(100)=100, Softplus(0)=ln 2; Elu(-1)=e^-1-1; Erf(0.5)=0.5204999.
TEST_CASE("activations and unary math") {
  check_floats(run_one("Sigmoid", {f32({3}, {0.0f, -100.0f, 2.0f})}, {DType::kFloat32, {3}}),
               {0.5f, 0.0f, 0.880797078f});
  check_floats(run_one("HardSigmoid", {f32({3}, {-5.0f, 1.0f, 5.0f})}, {DType::kFloat32, {3}}),
               {0.0f, 0.7f, 1.0f});
  check_floats(run_one("HardSwish", {f32({3}, {3.0f, -1.0f, -4.0f})}, {DType::kFloat32, {3}}),
               {3.0f, -1.0f / 3.0f, 0.0f});
  check_floats(run_one("Softplus", {f32({2}, {100.0f, 0.0f})}, {DType::kFloat32, {2}}),
               {100.0f, 0.693147181f});
  check_floats(run_one("Elu", {f32({2}, {-1.0f, 2.0f})}, {DType::kFloat32, {2}}),
               {-0.632120559f, 2.0f});
  check_floats(run_one("Erf", {f32({2}, {0.5f, -2.0f})}, {DType::kFloat32, {2}}),
               {0.520499878f, -0.995322265f});
  check_floats(run_one("Tanh", {f32({2}, {0.5f, -20.0f})}, {DType::kFloat32, {2}}),
               {0.462117157f, -1.0f});
  check_floats(run_one("Round", {f32({4}, {0.5f, 1.5f, 2.5f, -2.5f})}, {DType::kFloat32, {4}}),
               {0.0f, 2.0f, 2.0f, -2.0f});
  check_floats(run_one("PRelu", {f32({2, 2}, {-1, 2, -3, 4}), f32({2}, {0.5f, 0.25f})},
                       {DType::kFloat32, {2, 2}}),
               {-0.5f, 2, -1.5f, 4});
  CHECK(values_of<int32_t>(run_one("Abs", {i32({3}, {-5, 0, 7})}, {DType::kInt32, {3}})) ==
        std::vector<int32_t>{5, 0, 7});
  CHECK(values_of<uint8_t>(run_one("IsInf", {f32({3}, {kInf, -kInf, 1.0f})}, {DType::kBool, {3}},
                                   attributes_of({{"detect_negative", int_attr(0)}}))) ==
        std::vector<uint8_t>{1, 0, 0});
}

// 1,200,000-element bias add [4,300000] + [300000] and Sigmoid run split over two threads; every
// element is checked: x = i % 1000, b = j / 2, so out = i % 1000 + j / 2.
TEST_CASE("large tensors are split over threads and stay exact") {
  constexpr int64_t kRows = 4;
  constexpr int64_t kCols = 300000;
  std::vector<float> x(static_cast<size_t>(kRows * kCols));
  std::vector<float> b(static_cast<size_t>(kCols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000);
  for (size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j) * 0.5f;
  const auto sum = values_of<float>(
      run_one("Add", {f32({kRows, kCols}, x), f32({kCols}, b)}, {DType::kFloat32, {kRows, kCols}}));
  size_t mismatches = 0;
  for (size_t i = 0; i < sum.size(); ++i) {
    mismatches += sum[i] != x[i] + b[i % static_cast<size_t>(kCols)] ? 1 : 0;
  }
  CHECK(mismatches == 0);
  const auto two_threads = values_of<float>(
      run_one("Sigmoid", {f32({kRows, kCols}, x)}, {DType::kFloat32, {kRows, kCols}}, {}, 2));
  const auto one_thread = values_of<float>(
      run_one("Sigmoid", {f32({kRows, kCols}, x)}, {DType::kFloat32, {kRows, kCols}}, {}, 1));
  CHECK(two_threads == one_thread);
  CHECK(two_threads[1] == doctest::Approx(0.731058578));
  CHECK(two_threads[kCols + 7] == doctest::Approx(1.0 / (1.0 + std::exp(-double(x[kCols + 7])))));
}

struct InPlaceRun {
  uint32_t in_place_inputs = 0xffffffffu;
  std::vector<float> values;
};

// Prepares `op` (float32 in, float32 out of the shape of input `target`) with optional second
// input and runs it with output 0 in the same memory as input `target`, as the planner does when
// it accepts bit `target` of PreparedKernel::in_place_inputs.
InPlaceRun run_in_place(const std::string& op, const TestInput& x,
                        const std::optional<TestInput>& other, size_t target = 0) {
  Graph graph;
  graph.opset = 17;
  Node node;
  node.name = "in_place";
  node.op_type = op;
  const std::vector<const TestInput*> inputs = {&x, other ? &*other : nullptr};
  for (size_t i = 0; i < inputs.size() && inputs[i] != nullptr; ++i) {
    Value value;
    value.name = str_cat("input_", i);
    value.dtype = DType::kFloat32;
    value.shape = inputs[i]->tensor.shape;
    node.inputs.push_back(graph.add_value(value));
  }
  Value output;
  output.name = "output";
  output.dtype = DType::kFloat32;
  output.shape = target == 0 ? x.tensor.shape : other->tensor.shape;
  node.outputs.push_back(graph.add_value(output));
  graph.nodes.push_back(node);
  graph.rebuild_edges();
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find(op)(cpu::NodeContext(graph, graph.nodes[0]));
  REQUIRE(prepared.has_value());
  HostTensor buffer = x.tensor;
  HostTensor second = other ? other->tensor : HostTensor{};
  std::vector<TensorView> views = {{buffer.data.data(), DType::kFloat32, buffer.shape, {}}};
  if (other) views.push_back({second.data.data(), DType::kFloat32, second.shape, {}});
  const std::vector<TensorView> outputs = {views[target]};
  cpu::ThreadPool pool(2);
  cpu::RunContext context;
  context.inputs = views;
  context.outputs = outputs;
  context.threads = &pool;
  REQUIRE(prepared->kernel->run(context).is_ok());
  return {prepared->in_place_inputs, values_of<float>(target == 0 ? buffer : second)};
}

// Unary and same-shape-input-0 binary ops declare input 0 in place and compute correctly in
// place: Relu {-1,2} -> {0,2}; bias add [1,2,2] + [2,1] -> {11,12,23,24}. The 40000-element
// Sigmoid also splits over threads.
TEST_CASE("in-place runs on input 0") {
  const auto relu = run_in_place("Relu", f32({2}, {-1, 2}), std::nullopt);
  CHECK(relu.in_place_inputs == cpu::kInPlaceInput0);
  CHECK(relu.values == std::vector<float>{0, 2});
  const auto bias = run_in_place("Add", f32({1, 2, 2}, {1, 2, 3, 4}), f32({2, 1}, {10, 20}));
  CHECK(bias.in_place_inputs == cpu::kInPlaceInput0);
  CHECK(bias.values == std::vector<float>{11, 12, 23, 24});
  std::vector<float> big(40000, 0.0f);
  const auto sigmoid = run_in_place("Sigmoid", f32({40000}, big), std::nullopt);
  CHECK(sigmoid.in_place_inputs == cpu::kInPlaceInput0);
  CHECK(sigmoid.values == std::vector<float>(40000, 0.5f));

  Graph graph;
  graph.opset = 17;
  Value a;
  a.name = "a";
  a.dtype = DType::kFloat32;
  a.shape = Shape{2};
  Value b = a;
  b.name = "b";
  b.shape = Shape{2, 2};
  Value y = b;
  y.name = "y";
  Node node;
  node.name = "add";
  node.op_type = "Add";
  node.inputs = {graph.add_value(a), graph.add_value(b)};
  node.outputs = {graph.add_value(y)};
  graph.nodes.push_back(node);
  graph.rebuild_edges();
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find("Add")(cpu::NodeContext(graph, graph.nodes[0]));
  REQUIRE(prepared.has_value());
  CHECK(prepared->in_place_inputs == cpu::kInPlaceInput1);
}

// Input 1 in place: a broadcast input 0 ([2] - [2,2]) leaves only input 1, which the output
// overwrites: {1,2} - {10,20,30,40} -> {-9,-18,-29,-38}; same-shape inputs allow both (a 40000-
// element Mul over two threads, written over input 1).
TEST_CASE("in-place runs on input 1 when it has the output's shape") {
  const auto sub = run_in_place("Sub", f32({2}, {1, 2}), f32({2, 2}, {10, 20, 30, 40}), 1);
  CHECK(sub.in_place_inputs == cpu::kInPlaceInput1);
  CHECK(sub.values == std::vector<float>{-9, -18, -29, -38});
  std::vector<float> threes(40000, 3.0f);
  std::vector<float> halves(40000, 0.5f);
  const auto mul = run_in_place("Mul", f32({40000}, threes), f32({40000}, halves), 1);
  CHECK(mul.in_place_inputs == (cpu::kInPlaceInput0 | cpu::kInPlaceInput1));
  CHECK(mul.values == std::vector<float>(40000, 1.5f));
}

// Errors: Sqrt on int32 and Add on bool are unsupported (message names node, op, dtype);
// [2,3] + [4] does not broadcast (message names the input and axis); a wrong output shape
// is rejected.
// Gelu against its formulas in double at -3, -1, 0, 0.5, 2: approximate "none" is
// 0.5·x·(1 + erf(x/√2)) (e.g. Gelu(-3) = -0.0040496, Gelu(2) = 1.9544997), "tanh" is
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (Gelu(-3) = -0.0036374, Gelu(2) = 1.9545977). The
// default is "none"; the node runs in place on input 0 like every unary op.
TEST_CASE("Gelu erf and tanh forms match the formulas") {
  const std::vector<float> points = {-3.0f, -1.0f, 0.0f, 0.5f, 2.0f};
  std::vector<float> exact;
  std::vector<float> tanh_form;
  for (float point : points) {
    const double x = point;
    exact.push_back(static_cast<float>(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)))));
    const double inner = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
    tanh_form.push_back(static_cast<float>(0.5 * x * (1.0 + std::tanh(inner))));
  }
  CHECK(std::fabs(exact[0] - -0.0040496f) < 1e-6f);
  CHECK(std::fabs(tanh_form[4] - 1.9545977f) < 1e-6f);
  const OutputSpec out{DType::kFloat32, {5}};
  check_floats(run_one("Gelu", {f32({5}, points)}, out), exact);
  check_floats(run_one("Gelu", {f32({5}, points)}, out,
                       attributes_of({{"approximate", string_attr("none")}})),
               exact);
  check_floats(run_one("Gelu", {f32({5}, points)}, out,
                       attributes_of({{"approximate", string_attr("tanh")}})),
               tanh_form);
  const auto in_place = run_in_place("Gelu", f32({5}, points), std::nullopt);
  CHECK(in_place.in_place_inputs == cpu::kInPlaceInput0);
  check_floats(make_host_tensor(DType::kFloat32, {5}, in_place.values), exact);
}

// approximate = "fast" is not an ONNX value: the model is rejected with the node, op, attribute
// and value in the message, not silently run as erf.
TEST_CASE("Gelu rejects an unknown approximate") {
  const Status error = run_error("Gelu", {f32({2}, {1, 2})}, {DType::kFloat32, {2}},
                                 attributes_of({{"approximate", string_attr("fast")}}));
  CHECK(error.code() == StatusCode::kInvalidModel);
  CHECK(error.message().find("test_node") != std::string::npos);
  CHECK(error.message().find("Gelu") != std::string::npos);
  CHECK(error.message().find("approximate") != std::string::npos);
  CHECK(error.message().find("'fast'") != std::string::npos);
}

TEST_CASE("errors name node, op, tensor, dtype and axis") {
  const Status sqrt_error = run_error("Sqrt", {i32({2}, {1, 4})}, {DType::kInt32, {2}});
  CHECK(sqrt_error.code() == StatusCode::kUnsupported);
  CHECK(sqrt_error.message().find("test_node") != std::string::npos);
  CHECK(sqrt_error.message().find("Sqrt") != std::string::npos);
  CHECK(sqrt_error.message().find("int32") != std::string::npos);

  const Status bool_error = run_error("Add", {b8({1}, {1}), b8({1}, {1})}, {DType::kBool, {1}});
  CHECK(bool_error.code() == StatusCode::kUnsupported);
  CHECK(bool_error.message().find("bool") != std::string::npos);

  const Status shape_error = run_error(
      "Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({4}, {1, 2, 3, 4})}, {DType::kFloat32, {2, 3}});
  CHECK(shape_error.code() == StatusCode::kInvalidModel);
  CHECK(shape_error.message().find("input 1 'input_1'") != std::string::npos);
  CHECK(shape_error.message().find("axis 1 is 4, expected 3 or 1") != std::string::npos);

  const Status output_error =
      run_error("Add", {f32({2}, {1, 2}), f32({1}, {1})}, {DType::kFloat32, {3, 2}});
  CHECK(output_error.code() == StatusCode::kInvalidModel);
  CHECK(output_error.message().find("axis 0 is 3, expected 1") != std::string::npos);
}

}  // namespace
}  // namespace onepool::testing
