// NaN and Inf follow the ONNX reference (numpy) on every path: max / min reductions and pools
// return NaN when any input in the window is NaN, wherever it sits; ArgMax / ArgMin point at the
// first NaN (the last with select_last_index); fused activation epilogues give the same bits as
// the unfused operators, so --optimize never changes a NaN into a number.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> run_f32(const std::string& op, const std::vector<std::optional<TestInput>>& in,
                           Shape out, const AttributeMap& attributes = {}) {
  auto result = run_single_node(op, in, {{DType::kFloat32, out}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

std::vector<int64_t> run_i64(const std::string& op, const TestInput& in, Shape out,
                             const AttributeMap& attributes) {
  auto result = run_single_node(op, {in}, {{DType::kInt64, out}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<int64_t>((*result)[0]);
}

bool same_bits_or_both_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

AttributeMap attrs(std::initializer_list<std::pair<const char*, Attribute>> list) {
  AttributeMap map;
  for (const auto& [name, value] : list) map.set(name, value);
  return map;
}

}  // namespace

// [nan,-7,-6,-5] -> ReduceMax NaN (it was -5: the NaN in front was dropped), and a NaN at every
// other position too; ReduceMin likewise. Shapes [4] (one row) and [4,3] over axis 0 (columns).
TEST_CASE("NaN: ReduceMax and ReduceMin propagate NaN from any position") {
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    for (size_t position = 0; position < 4; ++position) {
      std::vector<float> row = {-4, -7, -6, -5};
      row[position] = kNan;
      CAPTURE(std::string(op));
      CAPTURE(position);
      const auto y = run_f32(op, {f32({4}, row)}, {1}, attrs({{"keepdims", int_attr(1)}}));
      CHECK(std::isnan(y[0]));
      std::vector<float> columns(12, 1.0f);
      columns[position * 3 + 1] = kNan;  // column 1 only
      const auto c = run_f32(op, {f32({4, 3}, columns)}, {1, 3},
                             attrs({{"axes", ints_attr({0})}, {"keepdims", int_attr(1)}}));
      CHECK(c[0] == 1.0f);
      CHECK(std::isnan(c[1]));
      CHECK(c[2] == 1.0f);
    }
  }
  // Infinities are ordinary values: max of [-inf, -inf] is -inf, not -FLT_MAX.
  const auto y =
      run_f32("ReduceMax", {f32({2}, {-kInf, -kInf})}, {1}, attrs({{"keepdims", int_attr(1)}}));
  CHECK(y[0] == -kInf);
}

// ArgMax [1, nan, 3, nan] -> 1 (the first NaN), with select_last_index -> 3; ArgMin the same.
TEST_CASE("NaN: ArgMax and ArgMin pick the NaN") {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    CAPTURE(std::string(op));
    const TestInput x = f32({4}, {1, kNan, 3, kNan});
    CHECK(run_i64(op, x, {1}, attrs({{"keepdims", int_attr(1)}}))[0] == 1);
    CHECK(run_i64(op, x, {1},
                  attrs({{"keepdims", int_attr(1)}, {"select_last_index", int_attr(1)}}))[0] == 3);
    CHECK(run_i64(op, f32({3}, {5, 2, 7}), {1}, attrs({{"keepdims", int_attr(1)}}))[0] ==
          (std::string(op) == "ArgMax" ? 2 : 1));
  }
}

// MaxPool on 1x1x4x4 with one NaN at (1,2): every window holding it gives NaN, the others the
// plain max. Three kernel paths: 3x3 stride 1 (windows inside), 2x2 stride 2, 3x3 with pads 1
// (the clipped-window path).
TEST_CASE("NaN: MaxPool propagates NaN on every path") {
  std::vector<float> x(16);
  for (size_t i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  x[1 * 4 + 2] = kNan;
  SUBCASE("3x3 stride 1") {
    const auto y = run_f32("MaxPool", {f32({1, 1, 4, 4}, x)}, {1, 1, 2, 2},
                           attrs({{"kernel_shape", ints_attr({3, 3})}}));
    for (float v : y) CHECK(std::isnan(v));  // every 3x3 window of a 4x4 holds (1,2)
  }
  SUBCASE("2x2 stride 2") {
    const auto y =
        run_f32("MaxPool", {f32({1, 1, 4, 4}, x)}, {1, 1, 2, 2},
                attrs({{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}}));
    CHECK(y[0] == 5.0f);
    CHECK(std::isnan(y[1]));  // the NaN is the window's third tap, after 2 and 3
    CHECK(y[2] == 13.0f);
    CHECK(y[3] == 15.0f);
  }
  SUBCASE("3x3 pads 1") {
    const auto y =
        run_f32("MaxPool", {f32({1, 1, 4, 4}, x)}, {1, 1, 4, 4},
                attrs({{"kernel_shape", ints_attr({3, 3})}, {"pads", ints_attr({1, 1, 1, 1})}}));
    for (int oh = 0; oh < 4; ++oh) {
      for (int ow = 0; ow < 4; ++ow) {
        const bool sees_nan = std::abs(oh - 1) <= 1 && std::abs(ow - 2) <= 1;
        CAPTURE(oh);
        CAPTURE(ow);
        CHECK(std::isnan(y[static_cast<size_t>(oh * 4 + ow)]) == sees_nan);
      }
    }
  }
}

// GlobalMaxPool over a plane with a NaN in the middle: NaN (max_element skipped it).
TEST_CASE("NaN: GlobalMaxPool propagates NaN") {
  const auto y = run_f32("GlobalMaxPool", {f32({1, 2, 1, 3}, {1, kNan, 2, 4, 5, 6})}, {1, 2, 1, 1});
  CHECK(std::isnan(y[0]));
  CHECK(y[1] == 6.0f);
}

// Each fused epilogue against its unfused operator on NaN, +-Inf and ordinary values: the same
// bits (NaN stays NaN: a fused Relu turned NaN into 0).
TEST_CASE("NaN: fused activations give the unfused operators' bits") {
  const std::vector<float> x = {kNan, kInf, -kInf, -2.5f, -0.0f, 0.0f, 0.25f, 3.0f, 7.0f};
  const Shape shape{static_cast<int64_t>(x.size())};
  struct Pair {
    cpu::ActivationKind kind;
    float alpha, beta;
    const char* op;
    AttributeMap attributes;
    std::vector<std::optional<TestInput>> extra_inputs;
  };
  const std::vector<Pair> pairs = {
      {cpu::ActivationKind::kRelu, 0, 0, "Relu", {}, {}},
      {cpu::ActivationKind::kClip, 0, 6, "Clip", {}, {f32({}, {0.0f}), f32({}, {6.0f})}},
      {cpu::ActivationKind::kLeakyRelu,
       0.1f,
       0,
       "LeakyRelu",
       attrs({{"alpha", float_attr(0.1f)}}),
       {}},
      {cpu::ActivationKind::kHardSigmoid,
       0.2f,
       0.5f,
       "HardSigmoid",
       attrs({{"alpha", float_attr(0.2f)}, {"beta", float_attr(0.5f)}}),
       {}},
      {cpu::ActivationKind::kHardSwish, 0, 0, "HardSwish", {}, {}},
  };
  for (const Pair& pair : pairs) {
    CAPTURE(std::string(pair.op));
    std::vector<std::optional<TestInput>> inputs = {f32(shape, x)};
    inputs.insert(inputs.end(), pair.extra_inputs.begin(), pair.extra_inputs.end());
    const auto unfused = run_f32(pair.op, inputs, shape, pair.attributes);
    const cpu::Activation activation{pair.kind, pair.alpha, pair.beta};
    std::vector<float> fused = x;
    cpu::apply_activation(activation, fused.data(), static_cast<int64_t>(fused.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      CAPTURE(x[i]);
      CHECK(same_bits_or_both_nan(fused[i], unfused[i]));
      CHECK(same_bits_or_both_nan(activation.apply(x[i]), unfused[i]));
    }
  }
}

}  // namespace onepool::testing
