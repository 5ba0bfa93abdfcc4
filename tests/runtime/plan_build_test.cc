// Plan::build: the plan a Session would use, without a Session. Session::create takes the same
// path, so the plans agree tensor for tensor, and a caller can size SessionOptions::pool from it
// before creating the Session.
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "common/generated_models.h"
#include "onepool/onepool.h"

using namespace onepool;

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

std::vector<float> run(Session& session, const Model& model) {
  std::vector<float> input(static_cast<size_t>(model.inputs()[0].shape.element_count()), 0.5f);
  std::vector<float> output(static_cast<size_t>(model.outputs()[0].shape.element_count()));
  const TensorView in{input.data(), DType::kFloat32, model.inputs()[0].shape, {}};
  const TensorView out{output.data(), DType::kFloat32, model.outputs()[0].shape, {}};
  REQUIRE(session.run({&in, 1}, {&out, 1}).is_ok());
  return output;
}

}  // namespace

TEST_CASE("Plan::build gives the Session's plan; a caller pool of exactly its size runs") {
  const auto model = onepool_test::load_generated_model("resnet18.onnx", true);
  SessionOptions options;
  options.threads = 1;
  auto plan = Plan::build(*model, options);
  REQUIRE_MESSAGE(plan.has_value(), plan.status().to_string());
  CHECK(plan->verified);
  CHECK(plan->pool_bytes > 0);

  auto owned = Session::create(model, options);
  REQUIRE(owned.has_value());
  const Plan& session_plan = (*owned)->plan();
  CHECK(session_plan.pool_bytes == plan->pool_bytes);
  REQUIRE(session_plan.tensors.size() == plan->tensors.size());
  for (size_t i = 0; i < plan->tensors.size(); ++i) {
    CHECK(session_plan.tensors[i].name == plan->tensors[i].name);
    CHECK(session_plan.tensors[i].offset == plan->tensors[i].offset);
    CHECK(session_plan.tensors[i].bytes == plan->tensors[i].bytes);
  }

  // The caller allocates exactly the planned bytes before any Session exists.
  std::unique_ptr<void, FreeDeleter> pool(std::aligned_alloc(256, plan->pool_bytes));
  REQUIRE(pool != nullptr);
  options.pool = pool.get();
  options.pool_capacity = plan->pool_bytes;
  auto caller = Session::create(model, options);
  REQUIRE_MESSAGE(caller.has_value(), caller.status().to_string());
  CHECK((*caller)->owned_pool_bytes() == 0);
  CHECK(run(**caller, *model) == run(**owned, *model));
}

TEST_CASE("Plan::build follows the plan options and checks a saved plan") {
  const auto model = onepool_test::load_generated_model("mlp.onnx", true);
  SessionOptions options;
  options.plan.external_inputs = true;
  auto external = Plan::build(*model, options);
  REQUIRE(external.has_value());
  size_t external_count = 0;
  for (const PlannedTensor& tensor : external->tensors) {
    if (!tensor.external) continue;
    ++external_count;
    CHECK(tensor.name == model->inputs()[0].name);
  }
  CHECK(external_count == 1);

  Plan broken = *external;
  for (PlannedTensor& tensor : broken.tensors) {
    if (!tensor.external && tensor.workspace_node < 0) tensor.offset += 1;  // misaligned
  }
  options.plan_override = &broken;
  auto refused = Plan::build(*model, options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.status().message().find("the given plan") != std::string::npos);
}

TEST_CASE("Plan::build for a device this machine cannot use is a clear error, not a crash") {
  const auto model = onepool_test::load_generated_model("mlp.onnx", true);
  SessionOptions options;
  options.device = Device{DeviceKind::kCuda, 0};
  auto plan = Plan::build(*model, options);
  if (plan.has_value()) {  // a machine with a GPU: the CUDA kernels' plan
    CHECK(plan->verify().is_ok());
    return;
  }
  CHECK(plan.status().message().find("cuda") != std::string::npos);
}
