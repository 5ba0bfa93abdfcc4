// NaN and Inf through a whole model: the graph optimizer fuses activations into Conv
// epilogues, and the fused model must give the unfused model's bits (a fused Relu turned an
// all-NaN input into a confident answer where the unfused model said NaN).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"

namespace onepool::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool same_bits_or_both_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

// A Conv + Relu + Conv + Clip model run with --optimize all (both activations fused into the
// convolutions) and none gives the same bits for an all-NaN, an all-Inf and an ordinary input.
TEST_CASE("NaN: a model gives the same outputs fused and unfused") {
  auto build = [] {
    GraphBuilder b;
    const ValueId x = b.input("x", {1, 2, 3, 3});
    const ValueId w1 = b.weight("w1", {2, 2, 1, 1}, {1.0f, -1.0f, 0.5f, 2.0f});
    const ValueId w2 = b.weight("w2", {2, 2, 1, 1}, {-1.0f, 1.0f, 1.5f, 0.5f});
    const ValueId c1 = b.value("c1", {1, 2, 3, 3});
    const ValueId r1 = b.value("r1", {1, 2, 3, 3});
    const ValueId c2 = b.value("c2", {1, 2, 3, 3});
    const ValueId y = b.value("y", {1, 2, 3, 3});
    const ValueId low = b.weight("low", {}, {0.0f});
    const ValueId high = b.weight("high", {}, {6.0f});
    b.node("Conv", {x, w1}, {c1});
    b.node("Relu", {c1}, {r1});
    b.node("Conv", {r1, w2}, {c2});
    b.node("Clip", {c2, low, high}, {y});
    b.output(y);
    return b.finish();
  };
  auto run = [&](const char* level, const std::vector<float>& input) {
    LoadOptions options;
    options.optimize = level;
    auto model = Model::from_graph(build(), options);
    REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
    auto session = Session::create(*model, SessionOptions{});
    REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
    std::vector<float> output(18);
    TensorView in{const_cast<float*>(input.data()), DType::kFloat32, Shape{1, 2, 3, 3}, Device{}};
    TensorView out{output.data(), DType::kFloat32, Shape{1, 2, 3, 3}, Device{}};
    const Status status = (*session)->run({&in, 1}, {&out, 1});
    REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    return output;
  };
  std::vector<float> ordinary(18);
  for (size_t i = 0; i < 18; ++i) ordinary[i] = static_cast<float>(i) - 9.0f;
  for (const auto& input : {std::vector<float>(18, kNan), std::vector<float>(18, kInf),
                            std::vector<float>(18, -kInf), ordinary}) {
    const auto fused = run("all", input);
    const auto plain = run("none", input);
    for (size_t i = 0; i < fused.size(); ++i) {
      CAPTURE(i);
      CHECK(same_bits_or_both_nan(fused[i], plain[i]));
    }
  }
  CHECK(std::isnan(run("all", std::vector<float>(18, kNan))[0]));
}

}  // namespace onepool::testing
