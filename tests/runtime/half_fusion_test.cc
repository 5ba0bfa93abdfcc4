// Activation epilogues on float16 / bfloat16 convolutions: a half Conv computes in float32 and
// rounds its output once, so only activations that commute with that rounding may be fused into
// it (Relu; Clip with bounds the type holds). Fused and unfused models must give the same values,
// bit for bit, NaN and infinities included, except for a zero's sign: a sum that rounds to -0 gives
// -0 through the unfused Relu and +0 fused (the float32 Relu of a tiny negative sum, as ONNX
// Runtime's Conv + Relu fusion after its float16 Casts gives). The others (Sigmoid, LeakyRelu, a
// Clip bound the type rounds) must stay separate nodes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/core/half_float.h"

namespace onepool::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
const Shape kInput = {1, 4, 6, 6};
const Shape kOutput = {1, 5, 6, 6};

uint16_t narrow(DType dtype, float value) {
  return dtype == DType::kFloat16 ? float_to_half_bits(value) : float_to_bfloat_bits(value);
}

float widen(DType dtype, uint16_t bits) {
  return dtype == DType::kFloat16 ? half_bits_to_float(bits) : bfloat_bits_to_float(bits);
}

std::vector<uint16_t> narrow_all(DType dtype, const std::vector<float>& values) {
  std::vector<uint16_t> bits;
  for (float v : values) bits.push_back(narrow(dtype, v));
  return bits;
}

// Values in [-2.5, 2.5] (tiny ones among them, so that some sums round to a signed zero).
std::vector<float> ramp(size_t count, uint32_t seed) {
  std::vector<float> values(count);
  uint32_t state = seed;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    const auto step = static_cast<int>((state >> 9) % 41) - 20;
    v = (state >> 7) % 13 == 0 ? static_cast<float>(step) * 1e-6f : static_cast<float>(step) / 8;
  }
  return values;
}

// The Conv's weights: ramp values, except output channel 4, which reads only input channel 0 (tiny
// values, see inputs()) with weights of a few 2^-14: its sums are often below half float16's least
// subnormal, so float16 rounds them to a signed zero.
std::vector<float> conv_weights() {
  std::vector<float> w = ramp(180, 7);
  for (size_t i = 4 * 36; i < 180; ++i) w[i] = i < 4 * 36 + 9 ? w[i] * 0x1p-14f : 0.0f;
  return w;
}

// Conv (3x3, pads 1, bias) of a half x, then `activation` ("Relu", "Sigmoid", "LeakyRelu", or
// "Clip" with bounds `low`, `high`), all in `dtype`.
Graph conv_then(DType dtype, const std::string& activation, float low = 0, float high = 0) {
  GraphBuilder b;
  const ValueId x = b.input("x", kInput, dtype);
  const ValueId w = b.half_weight("w", {5, 4, 3, 3}, dtype, narrow_all(dtype, conv_weights()));
  std::vector<float> biases = ramp(5, 11);
  biases[4] = 0.0f;
  const ValueId bias = b.half_weight("b", {5}, dtype, narrow_all(dtype, biases));
  const ValueId c = b.value("c", kOutput, dtype);
  const ValueId y = b.value("y", kOutput, dtype);
  b.node("Conv", {x, w, bias}, {c}).attributes.set("pads", ints_attr({1, 1, 1, 1}));
  if (activation == "Clip") {
    b.node("Clip",
           {c, b.half_weight("low", {}, dtype, {narrow(dtype, low)}),
            b.half_weight("high", {}, dtype, {narrow(dtype, high)})},
           {y});
  } else {
    b.node(activation, {c}, {y});
  }
  b.output(y);
  return b.finish();
}

std::shared_ptr<const Model> load(const Graph& graph, const char* level) {
  LoadOptions options;
  options.optimize = level;
  auto model = Model::from_graph(graph, options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

std::vector<uint16_t> run(const std::shared_ptr<const Model>& model, DType dtype,
                          const std::vector<uint16_t>& input) {
  auto session = Session::create(model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<uint16_t> output(static_cast<size_t>(kOutput.element_count()));
  TensorView in{const_cast<uint16_t*>(input.data()), dtype, kInput, Device{}};
  TensorView out{output.data(), dtype, kOutput, Device{}};
  const Status status = (*session)->run({&in, 1}, {&out, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return output;
}

// Ordinary inputs (channel 0 tiny: multiples of 2^-20), then with NaN, +Inf and -Inf sprinkled
// into channels 1-3.
std::vector<std::vector<uint16_t>> inputs(DType dtype) {
  std::vector<float> ordinary = ramp(static_cast<size_t>(kInput.element_count()), 3);
  for (size_t i = 0; i < 36; ++i) ordinary[i] *= 0x1p-17f;
  std::vector<float> special = ordinary;
  special[41] = kNan;
  special[80] = kInf;
  special[100] = -kInf;
  return {narrow_all(dtype, ordinary), narrow_all(dtype, special)};
}

// Equal values (the same bits, or two zeros), or both NaN.
bool same_value_or_both_nan(DType dtype, uint16_t a, uint16_t b) {
  const float x = widen(dtype, a);
  const float y = widen(dtype, b);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  return x == y;
}

// `graph` at --optimize all has `fused_nodes` nodes and the values of --optimize none.
void check_fusion(DType dtype, const Graph& graph, size_t fused_nodes) {
  const auto plain = load(graph, "none");
  const auto fused = load(graph, "all");
  CHECK(plain->graph().nodes.size() == 2);
  CHECK(fused->graph().nodes.size() == fused_nodes);
  bool saw_negative_zero = false;
  bool saw_nan = false;
  for (const auto& input : inputs(dtype)) {
    const auto expected = run(plain, dtype, input);
    const auto actual = run(fused, dtype, input);
    for (size_t i = 0; i < expected.size(); ++i) {
      CAPTURE(i);
      CAPTURE(widen(dtype, actual[i]));
      CAPTURE(widen(dtype, expected[i]));
      CHECK(same_value_or_both_nan(dtype, actual[i], expected[i]));
      saw_nan = saw_nan || std::isnan(widen(dtype, expected[i]));
    }
    // The convolution alone rounds some sums to -0 (the fused activation's zeros are compared
    // there too).
    const auto conv = run(load(conv_then(dtype, "Identity"), "none"), dtype, input);
    for (uint16_t bits : conv) {
      saw_negative_zero =
          saw_negative_zero || (widen(dtype, bits) == 0.0f && (bits & 0x8000u) != 0);
    }
  }
  CHECK(saw_nan);
  // float16 only: bfloat16 has float32's exponent range, so its rounding makes no zeros.
  if (dtype == DType::kFloat16) CHECK(saw_negative_zero);
}

}  // namespace

TEST_CASE("half Conv + Relu or Clip: fused at --optimize all, the unfused values") {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(dtype_name(dtype));
    check_fusion(dtype, conv_then(dtype, "Relu"), 1);
    check_fusion(dtype, conv_then(dtype, "Clip", 0.0f, 6.0f), 1);
    check_fusion(dtype, conv_then(dtype, "Clip", -1.5f, 0.375f), 1);
  }
}

TEST_CASE("half Conv + an activation rounding does not commute with: not fused") {
  for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
    CAPTURE(dtype_name(dtype));
    check_fusion(dtype, conv_then(dtype, "Sigmoid"), 2);
    check_fusion(dtype, conv_then(dtype, "LeakyRelu"), 2);
  }
}

// Opset 6 Clip takes its bounds as float32 attributes: 0.1 is no float16 value, so a fused Clip
// would clamp at 0.1 where the unfused one compares float16 values with 0.1.
TEST_CASE("half Conv + a Clip bound the type cannot hold: not fused") {
  GraphBuilder b(6);
  const DType dtype = DType::kFloat16;
  const ValueId x = b.input("x", kInput, dtype);
  const ValueId w = b.half_weight("w", {5, 4, 3, 3}, dtype, narrow_all(dtype, ramp(180, 7)));
  const ValueId c = b.value("c", kOutput, dtype);
  const ValueId y = b.value("y", kOutput, dtype);
  b.node("Conv", {x, w}, {c}).attributes.set("pads", ints_attr({1, 1, 1, 1}));
  Node& clip = b.node("Clip", {c}, {y});
  clip.attributes.set("min", float_attr(0.1f));
  clip.attributes.set("max", float_attr(6.0f));
  b.output(y);
  const Graph graph = b.finish();
  CHECK(load(graph, "all")->graph().nodes.size() == 2);
}

}  // namespace onepool::testing
