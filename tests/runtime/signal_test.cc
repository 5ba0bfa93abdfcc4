// Signal ops: Hann / Hamming / Blackman windows and MelWeightMatrix against hand-computed
// values, DFT and STFT against a direct double-precision sum written in the test, and the
// checks of runtime parameters against the planned output shape.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

TestInput i32(Shape shape, const std::vector<int32_t>& values, bool constant = false) {
  return {make_host_tensor(DType::kInt32, shape, values), constant};
}

std::vector<float> run_window(const std::string& op, int64_t size, bool periodic) {
  AttributeMap attributes;
  attributes.set("periodic", int_attr(periodic ? 1 : 0));
  auto result =
      run_single_node(op, {i64(Shape{}, {size})}, {{DType::kFloat32, Shape{size}}}, attributes);
  REQUIRE(result.has_value());
  return values_of<float>(result.value()[0]);
}

void check_close(const std::vector<float>& actual, const std::vector<double>& expected,
                 double epsilon = 1e-5) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element ", i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(epsilon).scale(1.0));
  }
}

// The reference DFT of one complex line of length L (zero-padded / truncated `x`).
std::vector<std::complex<double>> naive_dft(const std::vector<std::complex<double>>& x,
                                            int64_t length, bool inverse) {
  std::vector<std::complex<double>> out(static_cast<size_t>(length));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < length; ++k) {
    std::complex<double> sum = 0.0;
    for (int64_t n = 0; n < std::min<int64_t>(length, static_cast<int64_t>(x.size())); ++n) {
      const double angle =
          sign * 2 * M_PI * static_cast<double>(k * n) / static_cast<double>(length);
      sum += x[static_cast<size_t>(n)] * std::polar(1.0, angle);
    }
    out[static_cast<size_t>(k)] = inverse ? sum / static_cast<double>(length) : sum;
  }
  return out;
}

}  // namespace

// Hann periodic 4: 0.5 - 0.5 cos(2 pi n / 4) = [0, 0.5, 1, 0.5]; symmetric 5 (N = 4):
// [0, 0.5, 1, 0.5, 0]. Hamming periodic 4 (a0 = 25/46): [4/46, 25/46, 1, 25/46].
// Blackman symmetric 3 (N = 2): [0.42 - 0.5 + 0.08, 0.42 + 0.5 + 0.08, 0] = [0, 1, 0].
TEST_CASE("window functions, hand-computed") {
  check_close(run_window("HannWindow", 4, true), {0, 0.5, 1, 0.5});
  check_close(run_window("HannWindow", 5, false), {0, 0.5, 1, 0.5, 0});
  check_close(run_window("HammingWindow", 4, true), {4.0 / 46, 25.0 / 46, 1, 25.0 / 46});
  check_close(run_window("BlackmanWindow", 3, false), {0, 1, 0});
}

TEST_CASE("window size that disagrees with the output is an error") {
  auto result = run_single_node("HannWindow", {i64(Shape{}, {6})}, {{DType::kFloat32, Shape{4}}});
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  CHECK(result.status().message().find("size 6") != std::string::npos);
}

// num_mel_bins 2, dft_length 8, 8000 Hz, 0..4000 Hz: the 4 edges are 0, 536.5, 1073.0, 1609.5
// mel = 0, 427.2, 1115.1, 2220.8 Hz → bins floor(9 f / 8000) = 0, 0, 1, 2. Filter 0 (0, 0, 1)
// is a spike at bin 0; filter 1 (0, 1, 2) rises to 1 at bin 1 and falls to 0 at bin 2.
TEST_CASE("MelWeightMatrix, hand-computed") {
  auto result = run_single_node("MelWeightMatrix",
                                {i32(Shape{}, {2}), i32(Shape{}, {8}), i32(Shape{}, {8000}),
                                 f32(Shape{}, {0.0f}), f32(Shape{}, {4000.0f})},
                                {{DType::kFloat32, Shape{5, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  auto mismatch = run_single_node("MelWeightMatrix",
                                  {i32(Shape{}, {3}), i32(Shape{}, {8}), i32(Shape{}, {8000}),
                                   f32(Shape{}, {0.0f}), f32(Shape{}, {4000.0f})},
                                  {{DType::kFloat32, Shape{5, 2}}});
  REQUIRE_FALSE(mismatch.has_value());
  CHECK(mismatch.status().code() == StatusCode::kInvalidArgument);
}

// DFT of a unit impulse [1, 0, 0, 0] is all ones; of a constant 1 is [4, 0, 0, 0].
TEST_CASE("DFT hand-computed") {
  auto impulse = run_single_node("DFT", {f32(Shape{1, 4, 1}, {1, 0, 0, 0})},
                                 {{DType::kFloat32, Shape{1, 4, 2}}});
  REQUIRE(impulse.has_value());
  check_close(values_of<float>(impulse.value()[0]), {1, 0, 1, 0, 1, 0, 1, 0});
  auto constant = run_single_node("DFT", {f32(Shape{1, 4, 1}, {1, 1, 1, 1})},
                                  {{DType::kFloat32, Shape{1, 4, 2}}});
  REQUIRE(constant.has_value());
  check_close(values_of<float>(constant.value()[0]), {4, 0, 0, 0, 0, 0, 0, 0});
}

// Random complex [2, 6, 3, 2] along axis 1: forward, inverse, onesided (6 / 2 + 1 = 4 bins) and
// a constant dft_length of 8 (zero-padded), each line against the direct sum.
TEST_CASE("DFT matches the direct sum on every line") {
  const std::vector<float> x = random_values(2 * 6 * 3 * 2, 17);
  struct Case {
    bool inverse, onesided;
    std::optional<int64_t> length;
  };
  for (const Case& c : {Case{false, false, {}}, Case{true, false, {}}, Case{false, true, {}},
                        Case{false, false, 8}}) {
    INFO("inverse ", c.inverse, " onesided ", c.onesided, " length ", c.length.value_or(6));
    const int64_t length = c.length.value_or(6);
    const int64_t bins = c.onesided ? length / 2 + 1 : length;
    AttributeMap attributes;
    attributes.set("inverse", int_attr(c.inverse ? 1 : 0));
    attributes.set("onesided", int_attr(c.onesided ? 1 : 0));
    std::vector<std::optional<TestInput>> inputs = {f32(Shape{2, 6, 3, 2}, x)};
    if (c.length) inputs.push_back(i64(Shape{}, {*c.length}, true));
    auto result =
        run_single_node("DFT", inputs, {{DType::kFloat32, Shape{2, bins, 3, 2}}}, attributes);
    REQUIRE(result.has_value());
    const std::vector<float> y = values_of<float>(result.value()[0]);
    std::vector<double> expected(y.size());
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t i = 0; i < 3; ++i) {
        std::vector<std::complex<double>> line;
        for (int64_t n = 0; n < 6; ++n) {
          const size_t at = static_cast<size_t>(((b * 6 + n) * 3 + i) * 2);
          line.emplace_back(x[at], x[at + 1]);
        }
        const auto spectrum = naive_dft(line, length, c.inverse);
        for (int64_t k = 0; k < bins; ++k) {
          const size_t at = static_cast<size_t>(((b * bins + k) * 3 + i) * 2);
          expected[at] = spectrum[static_cast<size_t>(k)].real();
          expected[at + 1] = spectrum[static_cast<size_t>(k)].imag();
        }
      }
    }
    check_close(y, expected, 1e-4);
  }
}

// STFT of a [1, 32, 1] real signal with frame_length 8, step 4 (runtime scalars), with and
// without a Hann window: 7 frames of 5 onesided bins, each the direct DFT of the windowed frame.
TEST_CASE("STFT matches per-frame direct DFTs") {
  const std::vector<float> signal = random_values(32, 23);
  const std::vector<float> window = {0.0f, 0.1464f, 0.5f, 0.8536f, 1.0f, 0.8536f, 0.5f, 0.1464f};
  for (bool windowed : {false, true}) {
    INFO("windowed ", windowed);
    std::vector<std::optional<TestInput>> inputs = {f32(Shape{1, 32, 1}, signal),
                                                    i64(Shape{}, {4})};
    inputs.push_back(windowed ? std::optional<TestInput>(f32(Shape{8}, window)) : std::nullopt);
    inputs.push_back(i64(Shape{}, {8}));
    auto result = run_single_node("STFT", inputs, {{DType::kFloat32, Shape{1, 7, 5, 2}}});
    REQUIRE(result.has_value());
    std::vector<double> expected;
    for (int64_t f = 0; f < 7; ++f) {
      std::vector<std::complex<double>> frame;
      for (size_t n = 0; n < 8; ++n) {
        const double w = windowed ? window[n] : 1.0;
        frame.emplace_back(signal[static_cast<size_t>(f * 4) + n] * w, 0.0);
      }
      const auto spectrum = naive_dft(frame, 8, false);
      for (size_t k = 0; k < 5; ++k) {
        expected.push_back(spectrum[k].real());
        expected.push_back(spectrum[k].imag());
      }
    }
    check_close(values_of<float>(result.value()[0]), expected, 1e-4);
  }
}

TEST_CASE("STFT frame_step or frame_length that disagree with the output are errors") {
  const std::vector<float> signal = random_values(32, 23);
  for (int64_t step : {3, 0}) {
    auto result = run_single_node(
        "STFT",
        {f32(Shape{1, 32, 1}, signal), i64(Shape{}, {step}), std::nullopt, i64(Shape{}, {8})},
        {{DType::kFloat32, Shape{1, 7, 5, 2}}});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.status().code() == StatusCode::kInvalidArgument);
  }
  auto too_long = run_single_node(
      "STFT", {f32(Shape{1, 32, 1}, signal), i64(Shape{}, {4}), std::nullopt, i64(Shape{}, {64})},
      {{DType::kFloat32, Shape{1, 7, 5, 2}}});
  REQUIRE_FALSE(too_long.has_value());
  CHECK(too_long.status().code() == StatusCode::kInvalidArgument);
}
