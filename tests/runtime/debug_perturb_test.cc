// SessionOptions::debug_perturb_node, the broken kernel `onepool compare --debug-perturb` tests
// with: after the named node runs, its output 0's first element gets debug_perturb_value added;
// nothing else changes; a node that is not there, a non-float output or profiling is an error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "onepool/onepool.h"

namespace {

std::shared_ptr<const onepool::Model> load_mlp() {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/mlp.onnx";
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing generated model ", path);
  onepool::LoadOptions load;
  load.dims = {{"batch", 1}};
  auto model = onepool::Model::load(path, load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

// probs (float32 [1,10]) of the MLP on x = 0.01 * i, with `node` perturbed by `value` ("" off).
std::vector<float> run_mlp(std::shared_ptr<const onepool::Model> model, const std::string& node,
                           double value) {
  onepool::SessionOptions options;
  options.threads = 1;
  options.debug_perturb_node = node;
  options.debug_perturb_value = value;
  auto session = onepool::Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<float> x(784);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(i % 100);
  std::vector<float> probs(10);
  const onepool::TensorView in{x.data(), onepool::DType::kFloat32, onepool::Shape{1, 784}, {}};
  const onepool::TensorView out{probs.data(), onepool::DType::kFloat32, onepool::Shape{1, 10}, {}};
  const onepool::Status status = (*session)->run({&in, 1}, {&out, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return probs;
}

}  // namespace

// The last node (Softmax, writing probs) perturbed by +1 and by NaN: element 0 moves by exactly
// 1.0 (to NaN), elements 1..9 keep their bits. Run twice: the perturbation is no one-off.
TEST_CASE("debug perturb: adds the value to the first element of the node's output") {
  const auto model = load_mlp();
  const std::vector<float> plain = run_mlp(model, "", 0.0);
  const std::vector<float> plus_one = run_mlp(model, "probs", 1.0);
  CHECK(plus_one[0] == doctest::Approx(plain[0] + 1.0f).epsilon(1e-6));
  for (size_t i = 1; i < plain.size(); ++i) CHECK(plus_one[i] == plain[i]);
  const std::vector<float> nan = run_mlp(model, "probs", std::nan(""));
  CHECK(std::isnan(nan[0]));
  CHECK(nan[1] == plain[1]);
}

// An unknown node names itself; profiling and perturbing together are refused.
TEST_CASE("debug perturb: errors at create") {
  const auto model = load_mlp();
  onepool::SessionOptions options;
  options.debug_perturb_node = "no_such_node";
  auto missing = onepool::Session::create(model, options);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.status().code() == onepool::StatusCode::kInvalidArgument);
  CHECK(missing.status().message().find("'no_such_node'") != std::string::npos);
  options.debug_perturb_node = "probs";
  options.profile = true;
  auto profiled = onepool::Session::create(model, options);
  REQUIRE_FALSE(profiled.has_value());
  CHECK(profiled.status().message().find("profile") != std::string::npos);
}
