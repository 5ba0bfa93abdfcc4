// Sessions of one Model share its repacked weights (packed_weight_cache.h), keyed by layout. A
// one-thread Session runs a deep Winograd convolution's products on the channel vectors (its
// weights in 64-channel panels) and a two-thread Session on the column tiles (12-row panels):
// both must find their own layout, whichever Session packed first, and give the same bits.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"

namespace onepool::testing {
namespace {

const Shape kInput = {1, 256, 14, 14};
const Shape kOutput = {1, 128, 14, 14};

std::vector<float> ramp(size_t count, float scale) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>(static_cast<int>((i * 37) % 29) - 14) * scale;
  }
  return values;
}

std::shared_ptr<const Model> conv_model() {
  GraphBuilder b;
  const ValueId x = b.input("x", kInput);
  const ValueId w = b.weight("w", {128, 256, 3, 3}, ramp(128 * 256 * 9, 0.01f));
  const ValueId y = b.value("y", kOutput);
  b.node("Conv", {x, w}, {y}).attributes.set("pads", ints_attr({1, 1, 1, 1}));
  b.output(y);
  auto model = Model::from_graph(b.finish(), LoadOptions{});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

std::vector<float> run(Session& session, const std::vector<float>& input) {
  std::vector<float> output(static_cast<size_t>(kOutput.element_count()));
  TensorView in{const_cast<float*>(input.data()), DType::kFloat32, kInput, Device{}};
  TensorView out{output.data(), DType::kFloat32, kOutput, Device{}};
  const Status status = session.run({&in, 1}, {&out, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return output;
}

std::unique_ptr<Session> session_with(const std::shared_ptr<const Model>& model, int threads) {
  SessionOptions options;
  options.threads = threads;
  auto session = Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  return std::move(*session);
}

}  // namespace

TEST_CASE("Sessions of one Model at one and two threads share Winograd weights by layout") {
  const std::vector<float> input = ramp(static_cast<size_t>(kInput.element_count()), 0.1f);
  for (const bool one_first : {true, false}) {
    CAPTURE(one_first);
    const auto model = conv_model();
    std::unique_ptr<Session> first = session_with(model, one_first ? 1 : 2);
    std::unique_ptr<Session> second = session_with(model, one_first ? 2 : 1);
    const std::vector<float> a = run(*first, input);
    const std::vector<float> b = run(*second, input);
    CHECK(a == b);
    // The convolution, not zeros: output (0, 7, 7) sums 256 x 9 nonzero terms.
    CHECK(std::fabs(a[7 * 14 + 7]) > 0.0f);
  }
}

}  // namespace onepool::testing
