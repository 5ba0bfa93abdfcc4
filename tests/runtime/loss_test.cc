// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: hand-computed values, a scalar
// reference (log-softmax and weighted mean written out in double) on random [N, C, d] inputs
// for every reduction with and without weights and ignore_index, and the errors.
#include <doctest/doctest.h>

#include <cmath>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap loss_attributes(const std::string& reduction, std::optional<int64_t> ignore) {
  AttributeMap attributes;
  attributes.set("reduction", string_attr(reduction));
  if (ignore) attributes.set("ignore_index", int_attr(*ignore));
  return attributes;
}

// The reference: x [N, C, D], target [N, D]; softmax → log_softmax over C first.
std::vector<double> reference_loss(const std::vector<float>& x, const std::vector<int64_t>& target,
                                   const std::vector<float>* weight, int64_t N, int64_t C,
                                   int64_t D, const std::string& reduction,
                                   std::optional<int64_t> ignore, bool softmax) {
  std::vector<double> losses;
  double sum = 0.0, weights = 0.0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t d = 0; d < D; ++d) {
      const int64_t t = target[static_cast<size_t>(n * D + d)];
      if (ignore && t == *ignore) {
        losses.push_back(0.0);
        continue;
      }
      double value = x[static_cast<size_t>((n * C + t) * D + d)];
      if (softmax) {
        double total = 0.0;
        for (int64_t c = 0; c < C; ++c)
          total += std::exp(x[static_cast<size_t>((n * C + c) * D + d)]);
        value -= std::log(total);
      }
      const double w = weight != nullptr ? (*weight)[static_cast<size_t>(t)] : 1.0;
      losses.push_back(-value * w);
      sum += -value * w;
      weights += w;
    }
  }
  if (reduction == "none") return losses;
  if (reduction == "sum") return {sum};
  return {sum / weights};
}

}  // namespace

// input [[-1, -2, -3], [-4, -5, -6]] (N=2, C=3), target [2, 0]: losses [3, 4];
// mean 3.5, sum 7; weights [0.5, 1, 2]: losses [6, 2], mean (6 + 2) / (2 + 0.5) = 3.2.
TEST_CASE("NegativeLogLikelihoodLoss hand-computed") {
  const auto input = f32(Shape{2, 3}, {-1, -2, -3, -4, -5, -6});
  const auto target = i64(Shape{2}, {2, 0});
  auto none = run_single_node("NegativeLogLikelihoodLoss", {input, target},
                              {{DType::kFloat32, Shape{2}}}, loss_attributes("none", {}));
  REQUIRE(none.has_value());
  CHECK(values_of<float>(none.value()[0]) == std::vector<float>{3, 4});
  auto mean = run_single_node("NegativeLogLikelihoodLoss", {input, target},
                              {{DType::kFloat32, Shape{}}});  // reduction defaults to mean
  REQUIRE(mean.has_value());
  CHECK(values_of<float>(mean.value()[0])[0] == doctest::Approx(3.5));
  auto weighted =
      run_single_node("NegativeLogLikelihoodLoss", {input, target, f32(Shape{3}, {0.5f, 1, 2})},
                      {{DType::kFloat32, Shape{}}}, loss_attributes("mean", {}));
  REQUIRE(weighted.has_value());
  CHECK(values_of<float>(weighted.value()[0])[0] == doctest::Approx(3.2));
}

// scores [[0, 0]], label 1: log_softmax = [-ln 2, -ln 2], loss ln 2 = 0.6931472;
// log_prob output [-0.6931472, -0.6931472].
TEST_CASE("SoftmaxCrossEntropyLoss hand-computed, with log_prob") {
  auto result =
      run_single_node("SoftmaxCrossEntropyLoss", {f32(Shape{1, 2}, {0, 0}), i64(Shape{1}, {1})},
                      {{DType::kFloat32, Shape{}}, {DType::kFloat32, Shape{1, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0])[0] == doctest::Approx(0.6931472));
  for (float v : values_of<float>(result.value()[1])) CHECK(v == doctest::Approx(-0.6931472));
}

// Random [3, 4, 5] inputs, every reduction × weights on/off × ignore_index on/off, both ops.
TEST_CASE("losses match the scalar reference") {
  const int64_t N = 3, C = 4, D = 5;
  const std::vector<float> x = random_values(N * C * D, 11);
  std::vector<int64_t> target;
  for (int64_t i = 0; i < N * D; ++i) target.push_back((i * 7) % C);
  target[3] = -1;  // ignored when ignore_index is -1
  const std::vector<float> weight = {0.2f, 1.0f, 1.5f, 0.7f};
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) {
    const bool softmax = std::string(op) == "SoftmaxCrossEntropyLoss";
    for (const std::string reduction : {"none", "sum", "mean"}) {
      for (bool weighted : {false, true}) {
        INFO(op, " reduction ", reduction, " weighted ", weighted);
        const std::optional<int64_t> ignore = -1;
        std::vector<std::optional<TestInput>> inputs = {f32(Shape{N, C, D}, x),
                                                        i64(Shape{N, D}, target)};
        if (weighted) inputs.push_back(f32(Shape{C}, weight));
        const Shape out_shape = reduction == "none" ? Shape{N, D} : Shape{};
        auto result = run_single_node(op, inputs, {{DType::kFloat32, out_shape}},
                                      loss_attributes(reduction, ignore));
        REQUIRE(result.has_value());
        const std::vector<float> actual = values_of<float>(result.value()[0]);
        const std::vector<double> expected = reference_loss(x, target, weighted ? &weight : nullptr,
                                                            N, C, D, reduction, ignore, softmax);
        REQUIRE(actual.size() == expected.size());
        for (size_t i = 0; i < actual.size(); ++i) {
          CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-5));
        }
      }
    }
  }
}

// Every position ignored: mean is 0 / 0 = NaN, as the ONNX reference computes it.
TEST_CASE("mean over only ignored positions is NaN") {
  auto result = run_single_node("NegativeLogLikelihoodLoss",
                                {f32(Shape{2, 2}, {1, 2, 3, 4}), i64(Shape{2}, {5, 5})},
                                {{DType::kFloat32, Shape{}}}, loss_attributes("mean", 5));
  REQUIRE(result.has_value());
  CHECK(std::isnan(values_of<float>(result.value()[0])[0]));
}

TEST_CASE("a target outside [0, C) is an error naming it") {
  for (int64_t bad : {3, -1}) {
    auto result = run_single_node("SoftmaxCrossEntropyLoss",
                                  {f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6}), i64(Shape{2}, {0, bad})},
                                  {{DType::kFloat32, Shape{}}});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.status().code() == StatusCode::kOutOfRange);
    CHECK(result.status().message().find("target " + std::to_string(bad)) != std::string::npos);
  }
}

TEST_CASE("losses reject a target of the wrong shape and an unknown reduction") {
  auto shape = run_single_node("NegativeLogLikelihoodLoss",
                               {f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6}), i64(Shape{3}, {0, 1, 2})},
                               {{DType::kFloat32, Shape{}}});
  REQUIRE_FALSE(shape.has_value());
  CHECK(shape.status().code() == StatusCode::kInvalidModel);
  auto reduction = run_single_node("NegativeLogLikelihoodLoss",
                                   {f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6}), i64(Shape{2}, {0, 1})},
                                   {{DType::kFloat32, Shape{}}}, loss_attributes("max", {}));
  REQUIRE_FALSE(reduction.has_value());
  CHECK(reduction.status().code() == StatusCode::kInvalidModel);
}
