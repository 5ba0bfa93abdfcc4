// float16 / bfloat16 on the CPU: the conversions (every binary16 value, ties to even, NaN, Inf,
// overflow; array and element paths agree) and the float32-compute adapter (each output is the
// float32 kernel's result rounded once; weights widened at prepare; integer outputs pass
// through; in-place runs; an op without a float32 kernel names the half dtype).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cpu/half_convert.h"
#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

std::vector<uint16_t> to_bits(DType dtype, const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) {
    bits.push_back(dtype == DType::kFloat16 ? float_to_half_bits(v) : float_to_bfloat_bits(v));
  }
  return bits;
}

std::vector<float> widened(DType dtype, const std::vector<uint16_t>& bits) {
  std::vector<float> values;
  for (uint16_t b : bits) {
    values.push_back(dtype == DType::kFloat16 ? half_bits_to_float(b) : bfloat_bits_to_float(b));
  }
  return values;
}

TestInput half_input(DType dtype, Shape shape, const std::vector<float>& values,
                     bool constant = false) {
  return {make_host_tensor(dtype, shape, to_bits(dtype, values)), constant};
}

// Runs `op` on half inputs and on their float32 values; the half output must be the float32
// output rounded once to the half type, bit for bit.
void check_rounded_once(const std::string& op, DType dtype,
                        const std::vector<std::pair<Shape, std::vector<float>>>& inputs,
                        Shape output_shape, const AttributeMap& attributes = {},
                        bool constant_last = false) {
  std::vector<std::optional<TestInput>> half_inputs;
  std::vector<std::optional<TestInput>> float_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool constant = constant_last && i + 1 == inputs.size();
    const auto& [shape, values] = inputs[i];
    const std::vector<float> exact = widened(dtype, to_bits(dtype, values));
    half_inputs.push_back(half_input(dtype, shape, values, constant));
    float_inputs.push_back(f32(shape, exact, constant));
  }
  auto half = run_single_node(op, half_inputs, {{dtype, output_shape}}, attributes);
  REQUIRE_MESSAGE(half.has_value(), half.status().to_string());
  auto wide = run_single_node(op, float_inputs, {{DType::kFloat32, output_shape}}, attributes);
  REQUIRE_MESSAGE(wide.has_value(), wide.status().to_string());
  CHECK(values_of<uint16_t>((*half)[0]) == to_bits(dtype, values_of<float>((*wide)[0])));
}

TEST_CASE("every float16 value survives float32 and back; array and element paths agree") {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> wide(all.size());
  cpu::half_to_float_array(all.data(), wide.data(), all.size());
  std::vector<uint16_t> back(all.size());
  cpu::float_to_half_array(wide.data(), back.data(), wide.size());
  int mismatches = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const bool is_nan = (all[i] & 0x7C00u) == 0x7C00u && (all[i] & 0x03FFu) != 0;
    if (std::bit_cast<uint32_t>(wide[i]) != std::bit_cast<uint32_t>(half_bits_to_float(all[i]))) {
      ++mismatches;
    }
    if (is_nan ? !std::isnan(wide[i]) || (back[i] & 0x7C00u) != 0x7C00u || (back[i] & 0x03FFu) == 0
               : back[i] != all[i]) {
      ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("float to float16 rounds to nearest even, overflows to Inf, keeps NaN") {
  CHECK(float_to_half_bits(1.0f + 0x1.0p-11f) == 0x3C00);      // tie: down to even 1.0
  CHECK(float_to_half_bits(1.0f + 3 * 0x1.0p-11f) == 0x3C02);  // tie: up to even
  CHECK(float_to_half_bits(65504.0f) == 0x7BFF);               // largest finite
  CHECK(float_to_half_bits(65519.0f) == 0x7BFF);               // below the halfway point
  CHECK(float_to_half_bits(65520.0f) == 0x7C00);               // halfway: to Inf
  CHECK(float_to_half_bits(-INFINITY) == 0xFC00);
  CHECK(float_to_half_bits(0x1.0p-25f) == 0x0000);  // tie with 0: even is 0
  CHECK(float_to_half_bits(0x1.8p-25f) == 0x0001);  // smallest subnormal
  CHECK(std::isnan(half_bits_to_float(float_to_half_bits(NAN))));
  // The array path (F16C where built for it) rounds the same way, 8 at a time and in the tail.
  const std::vector<float> ties = {1.0f + 0x1.0p-11f,
                                   1.0f + 3 * 0x1.0p-11f,
                                   65520.0f,
                                   0x1.0p-25f,
                                   0x1.8p-25f,
                                   -2.0f - 0x1.0p-10f,
                                   3.0e-8f,
                                   1.0e5f,
                                   0.1f};
  std::vector<uint16_t> bits(ties.size());
  cpu::float_to_half_array(ties.data(), bits.data(), ties.size());
  for (size_t i = 0; i < ties.size(); ++i) CHECK(bits[i] == float_to_half_bits(ties[i]));
}

TEST_CASE("float to bfloat16 rounds to nearest even and keeps NaN") {
  CHECK(float_to_bfloat_bits(1.0f + 0x1.0p-8f) == 0x3F80);                   // tie: down to even
  CHECK(float_to_bfloat_bits(1.0f + 3 * 0x1.0p-8f) == 0x3F82);               // tie: up to even
  CHECK(float_to_bfloat_bits(std::bit_cast<float>(0x7F7FFFFFu)) == 0x7F80);  // max float: Inf
  CHECK(std::isnan(bfloat_bits_to_float(float_to_bfloat_bits(NAN))));
  CHECK(bfloat_bits_to_float(0x4049) == 3.140625f);
}

TEST_CASE("half-type elementwise ops are the float32 result rounded once") {
  const std::vector<float> x = {-3.5f, -1.0f, -0.1f, 0.0f, 0.3f, 1.7f, 4.0f, 11.0f};
  const std::vector<float> y = {0.5f, -2.0f, 3.25f, 1.0f, -0.7f, 0.01f, 2.0f, -6.0f};
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(dtype_name(dtype));
    check_rounded_once("Sigmoid", dtype, {{Shape{8}, x}}, Shape{8});
    check_rounded_once("Exp", dtype, {{Shape{8}, x}}, Shape{8});
    check_rounded_once("Div", dtype, {{Shape{8}, x}, {Shape{8}, y}}, Shape{8});
    check_rounded_once("Add", dtype, {{Shape{2, 4}, x}, {Shape{4}, {1, 2, 3, 4}}}, Shape{2, 4});
  }
}

TEST_CASE("half-type MatMul, Conv and Softmax: weights widened at prepare, rounded once") {
  const std::vector<float> a = random_values(6 * 40, 1);
  const std::vector<float> b = random_values(40 * 5, 2);
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(dtype_name(dtype));
    check_rounded_once("MatMul", dtype, {{Shape{6, 40}, a}, {Shape{40, 5}, b}}, Shape{6, 5}, {},
                       true);
    AttributeMap conv;
    conv.set("pads", ints_attr({1, 1, 1, 1}));
    check_rounded_once("Conv", dtype,
                       {{Shape{1, 4, 6, 10}, a}, {Shape{5, 4, 3, 3}, random_values(180, 3)}},
                       Shape{1, 5, 6, 10}, conv, true);
    AttributeMap softmax;
    softmax.set("axis", int_attr(-1));
    check_rounded_once("Softmax", dtype, {{Shape{6, 40}, a}}, Shape{6, 40}, softmax);
  }
}

TEST_CASE("a half-type node with an integer output: ArgMax indices pass through") {
  AttributeMap attributes;
  attributes.set("axis", int_attr(1));
  attributes.set("keepdims", int_attr(0));
  auto result = run_single_node(
      "ArgMax", {half_input(DType::kFloat16, Shape{2, 3}, {0.5f, 2.0f, -1.0f, 7.0f, 3.0f, 7.5f})},
      {{DType::kInt64, Shape{2}}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<int64_t>((*result)[0]) == std::vector<int64_t>{1, 2});
}

TEST_CASE("a half-type node may run in place: inputs are widened before outputs are written") {
  const std::vector<float> x = {-2.0f, -0.5f, 0.25f, 3.0f, 9.0f, -7.0f};
  auto result = run_single_node_in_place("Relu", {half_input(DType::kFloat16, Shape{6}, x)},
                                         {DType::kFloat16, Shape{6}});
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(result->in_place_inputs != 0);
  CHECK(widened(DType::kFloat16, values_of<uint16_t>(result->output)) ==
        std::vector<float>{0.0f, 0.0f, 0.25f, 3.0f, 9.0f, 0.0f});
}

AttributeMap direction(const std::string& value) {
  AttributeMap attributes;
  attributes.set("direction", string_attr(value));
  return attributes;
}

TEST_CASE("a half-type node no float32 kernel takes names its own dtype") {
  auto result = run_single_node("BitShift",
                                {half_input(DType::kFloat16, Shape{2}, {1.0f, 2.0f}),
                                 half_input(DType::kFloat16, Shape{2}, {1.0f, 2.0f})},
                                {{DType::kFloat16, Shape{2}}}, direction("LEFT"));
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kUnsupported);
  CHECK_MESSAGE(result.status().message().find("float16") != std::string::npos,
                result.status().to_string());
}

}  // namespace
}  // namespace onepool::testing
