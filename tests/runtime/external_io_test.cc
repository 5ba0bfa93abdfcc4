// External graph inputs and outputs (PlanOptions::external_*, Session::bind_input / bind_output /
// run_bound): they take no pool bytes, runs read and write the caller's buffers in place, no
// tensor ever shares their storage, and the outputs are bit-identical to a pooled Session's.
// The caller buffers are exactly sized heap vectors, so the sanitizer build catches a kernel
// that reads or writes past a tensor's end (the pool's alignment padding hides that).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/allocation_counter.h"
#include "common/generated_models.h"
#include "common/graph_builder.h"
#include "common/model_manifest.h"
#include "common/sanitizers.h"
#include "onepool/onepool.h"
#include "planner/analysis/build_plan.h"

using namespace onepool;
using onepool::testing::GraphBuilder;
using onepool_test::ManifestModel;

namespace {

// Exactly sized buffers for `infos`, filled from `seed` (floats in [0, 1), integers from the
// manifest's range or [0, 2)), and their views.
struct Buffers {
  std::vector<std::vector<std::byte>> storage;
  std::vector<TensorView> views;
};

void fill(const TensorInfo& info, const ManifestModel* entry, std::mt19937& rng, void* data) {
  const auto count = static_cast<size_t>(info.shape.element_count());
  if (info.dtype == DType::kFloat32) {
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    for (size_t i = 0; i < count; ++i) static_cast<float*>(data)[i] = dist(rng);
  } else if (info.dtype == DType::kInt64) {
    std::pair<double, double> range{0.0, 2.0};
    if (entry != nullptr && entry->ranges.count(info.name) != 0)
      range = entry->ranges.at(info.name);
    std::uniform_int_distribution<int64_t> dist(static_cast<int64_t>(range.first),
                                                static_cast<int64_t>(range.second) - 1);
    for (size_t i = 0; i < count; ++i) static_cast<int64_t*>(data)[i] = dist(rng);
  }
}

Buffers make_buffers(const std::vector<TensorInfo>& infos, const ManifestModel* entry,
                     unsigned seed) {
  Buffers buffers;
  buffers.storage.reserve(infos.size());
  std::mt19937 rng(seed);
  for (const TensorInfo& info : infos) {
    const auto bytes = static_cast<size_t>(info.shape.element_count()) * dtype_size(info.dtype);
    buffers.storage.emplace_back(bytes);
    fill(info, entry, rng, buffers.storage.back().data());
    buffers.views.push_back({buffers.storage.back().data(), info.dtype, info.shape, {}});
  }
  return buffers;
}

// The bytes a run wrote to output i: its actual shape's elements (a data-dependent output
// writes densely from the start of the buffer).
std::vector<std::byte> written(const Session& session, const Buffers& outputs, size_t i) {
  const Shape shape = session.output_shape(i);
  const size_t bytes =
      static_cast<size_t>(shape.element_count()) * dtype_size(outputs.views[i].dtype);
  const std::byte* data = outputs.storage[i].data();
  return {data, data + bytes};
}

SessionOptions external_options() {
  SessionOptions options;
  options.threads = 2;
  options.plan.external_inputs = true;
  options.plan.external_outputs = true;
  return options;
}

size_t count_external(const Plan& plan) {
  size_t count = 0;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (!tensor.external) continue;
    ++count;
    CHECK(tensor.bytes == 0);
    CHECK(tensor.offset == 0);
    for (const PlannedTensor& other : plan.tensors) CHECK(other.alias_of != tensor.id);
  }
  return count;
}

void check_model(const ManifestModel& entry) {
  auto model = Model::load(entry.path, entry.load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  SessionOptions pooled_options;
  pooled_options.threads = 2;
  auto pooled = Session::create(*model, pooled_options);
  REQUIRE_MESSAGE(pooled.has_value(), pooled.status().to_string());
  auto external = Session::create(*model, external_options());
  REQUIRE_MESSAGE(external.has_value(), external.status().to_string());
  const Plan& plan = (*external)->plan();
  CHECK(plan.verify().is_ok());
  CHECK(count_external(plan) > 0);
  MESSAGE(entry.name, ": pool ", (*pooled)->plan().pool_bytes, " B pooled, ", plan.pool_bytes,
          " B with external inputs and outputs");

  const Buffers inputs = make_buffers((*model)->inputs(), &entry, 7);
  const Buffers inputs_before = inputs;  // an external input is never written
  Buffers pooled_outputs = make_buffers((*model)->outputs(), nullptr, 1);
  REQUIRE((*pooled)->run(inputs.views, pooled_outputs.views).is_ok());
  for (unsigned round = 0; round < 2; ++round) {  // a second round rebinds fresh buffers
    Buffers outputs = make_buffers((*model)->outputs(), nullptr, 2 + round);
    const Status status = (*external)->run(inputs.views, outputs.views);
    REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    for (size_t i = 0; i < outputs.views.size(); ++i) {
      CAPTURE(i);
      CHECK((*external)->output_shape(i) == (*pooled)->output_shape(i));
      CHECK(written(**external, outputs, i) == written(**pooled, pooled_outputs, i));
      if ((*external)->output_is_external(i)) {  // written in place: the Session's own view
        CHECK((*external)->output_view(i).data == outputs.views[i].data);
      }
    }
    for (size_t i = 0; i < inputs.views.size(); ++i) {
      CHECK((*external)->input_is_external(i));
      CHECK((*external)->input_view(i).data == inputs.views[i].data);
      CHECK(inputs.storage[i] == inputs_before.storage[i]);
    }
  }
}

// x [2,8] -> Reshape (a view) -> r [4,4] -> Relu -> y: with aliasing, r shares x's bytes unless
// x is external; y never shares anything once external.
Graph reshape_relu_graph() {
  GraphBuilder builder;
  const ValueId x = builder.input("x", Shape{2, 8});
  const ValueId shape = builder.weight("shape", Shape{2}, {4.0f, 4.0f});
  const ValueId r = builder.value("r", Shape{4, 4});
  const ValueId y = builder.value("y", Shape{4, 4});
  builder.node("Reshape", {x, shape}, {r});
  builder.node("Relu", {r}, {y});
  builder.output(y);
  return builder.finish();
}

NodeMemoryNeeds view_then_in_place() {
  NodeMemoryNeeds needs;
  needs.aliasing.resize(2);
  needs.aliasing[0].output_is_view = true;
  needs.aliasing[1].in_place_inputs = 1;
  return needs;
}

const PlannedTensor& tensor_named(const Plan& plan, const std::string& name) {
  for (const PlannedTensor& tensor : plan.tensors) {
    if (tensor.name == name) return tensor;
  }
  FAIL("no tensor ", name);
  return plan.tensors.front();
}

std::shared_ptr<const Model> load_mlp() {
  return onepool_test::load_generated_model("mlp.onnx", true);
}

}  // namespace

TEST_CASE("external inputs and outputs of the generated models: same bits, no copies") {
  const std::set<std::string> chosen = {"mlp",
                                        "unet",
                                        "mobilenetv2",
                                        "data_dependent_heads",
                                        "if_runtime",
                                        "loop_bounded",
                                        "cnn_fp16",
                                        "mlp_bf16",
                                        "scan_runtime",
                                        "cnn_qdq_int8",
                                        "transformer_dynamic_int8"};
  size_t checked = 0;
  for (const ManifestModel& entry : onepool_test::all_manifest_models()) {
    if (entry.fetched || chosen.count(entry.name) == 0) continue;
    SUBCASE(entry.name.c_str()) { check_model(entry); }
    ++checked;
  }
  CHECK(checked == chosen.size());
}

// The fetched real models (ONEPOOL_CACHE_DIR), where present: larger, so not under sanitizers.
TEST_CASE("external inputs and outputs of the fetched real models: same bits, no copies") {
#ifdef ONEPOOL_TEST_SANITIZED
  MESSAGE("skipped under a sanitizer: the generated models above cover the same paths");
#else
  for (const ManifestModel& entry : onepool_test::all_manifest_models()) {
    if (!entry.fetched) continue;
    SUBCASE(entry.name.c_str()) { check_model(entry); }
  }
#endif
}

TEST_CASE("the plan keeps external tensors out of the pool and shares nothing with them") {
  const Graph graph = reshape_relu_graph();
  PlanOptions options;
  auto shared = build_plan(graph, options, view_then_in_place());
  REQUIRE(shared.has_value());
  CHECK(tensor_named(*shared, "r").alias_of == graph.find_value("x"));  // the view shares x

  options.external_inputs = true;
  options.external_outputs = true;
  auto external = build_plan(graph, options, view_then_in_place());
  REQUIRE_MESSAGE(external.has_value(), external.status().to_string());
  CHECK(external->verify().is_ok());
  const PlannedTensor& x = tensor_named(*external, "x");
  const PlannedTensor& y = tensor_named(*external, "y");
  CHECK(x.external);
  CHECK(y.external);
  CHECK(x.bytes == 0);
  CHECK(tensor_named(*external, "r").alias_of < 0);  // r owns its bytes: x is the caller's
  CHECK(!tensor_named(*external, "r").external);
  CHECK(count_external(*external) == 2);
  CHECK(external->pool_bytes == 256);  // only r: x and y live in the caller's buffers
  CHECK(external->naive_bytes == 256);

  auto round_trip = Plan::from_json(external->to_json());
  REQUIRE_MESSAGE(round_trip.has_value(), round_trip.status().to_string());
  CHECK(tensor_named(*round_trip, "x").external);
  CHECK(!tensor_named(*round_trip, "r").external);
}

TEST_CASE("external tensors named one by one; wrong names and constant outputs are refused") {
  const Graph graph = reshape_relu_graph();
  PlanOptions options;
  options.external_tensors = {"y"};
  auto plan = build_plan(graph, options, view_then_in_place());
  REQUIRE(plan.has_value());
  CHECK(tensor_named(*plan, "y").external);
  CHECK(!tensor_named(*plan, "x").external);

  options.external_tensors = {"r"};
  auto intermediate = build_plan(graph, options, view_then_in_place());
  REQUIRE(!intermediate.has_value());
  CHECK(intermediate.status().message().find("'r' is not a graph input or output") !=
        std::string::npos);
  CHECK(intermediate.status().message().find("those are: x, y") != std::string::npos);
}

TEST_CASE("bind_input / bind_output / run_bound: in place, mixed with copies, no allocation") {
  const auto model = load_mlp();
  SessionOptions options;
  options.threads = 1;
  options.plan.external_tensors = {model->inputs()[0].name};  // the output stays in the pool
  auto session = Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  CHECK((*session)->input_is_external(0));
  CHECK(!(*session)->output_is_external(0));

  const Buffers inputs = make_buffers(model->inputs(), nullptr, 7);
  Buffers outputs = make_buffers(model->outputs(), nullptr, 1);
  Buffers expected = make_buffers(model->outputs(), nullptr, 1);
  auto pooled = Session::create(model, SessionOptions{});
  REQUIRE(pooled.has_value());
  REQUIRE((*pooled)->run(inputs.views, expected.views).is_ok());

  const Status unbound = (*session)->run_bound();
  CHECK(unbound.code() == StatusCode::kFailedPrecondition);
  CHECK(unbound.message().find("is not bound: call bind_input(0, buffer)") != std::string::npos);
  const Status not_yet = (*session)->run_in_place();
  CHECK(not_yet.code() == StatusCode::kFailedPrecondition);
  CHECK(not_yet.message().find("has no buffer yet") != std::string::npos);

  REQUIRE((*session)->bind_input(0, inputs.views[0]).is_ok());
  REQUIRE((*session)->bind_output(0, outputs.views[0]).is_ok());
  REQUIRE((*session)->run_bound().is_ok());  // the first run binds the input's address
  g_allocations = 0;
  g_counting = true;
  for (int run = 0; run < 20; ++run) REQUIRE((*session)->run_bound().is_ok());
  g_counting = false;
  CHECK(g_allocations.load() == 0);
  CHECK(outputs.storage[0] == expected.storage[0]);
  CHECK((*session)->input_view(0).data == inputs.views[0].data);
  CHECK((*session)->output_view(0).data != outputs.views[0].data);  // copied out of the pool
}

TEST_CASE("bad external buffers: wrong device, misaligned, overlapping, wrong index") {
  const auto model = load_mlp();
  auto session = Session::create(model, external_options());
  REQUIRE(session.has_value());
  Buffers inputs = make_buffers(model->inputs(), nullptr, 7);
  Buffers outputs = make_buffers(model->outputs(), nullptr, 1);

  TensorView on_gpu = inputs.views[0];
  on_gpu.device = Device{DeviceKind::kCuda, 0};
  const Status device = (*session)->bind_input(0, on_gpu);
  CHECK(device.code() == StatusCode::kInvalidArgument);
  CHECK(device.message().find("must be on cpu, got a cuda:0 buffer") != std::string::npos);

  std::vector<std::byte> spare(inputs.storage[0].size() + sizeof(float));
  TensorView misaligned = inputs.views[0];
  misaligned.data = spare.data() + 1;
  const Status aligned = (*session)->bind_input(0, misaligned);
  CHECK(aligned.message().find("must be 4-byte aligned") != std::string::npos);

  // The output written in place over the input it is computed from.
  std::vector<std::byte> shared(std::max(inputs.storage[0].size(), outputs.storage[0].size()));
  TensorView input = inputs.views[0];
  input.data = shared.data();
  TensorView output = outputs.views[0];
  output.data = shared.data();
  const Status overlap = (*session)->run(std::vector<TensorView>{input}, {&output, 1});
  CHECK(overlap.code() == StatusCode::kInvalidArgument);
  CHECK(overlap.message().find("are both external and their buffers overlap") != std::string::npos);

  CHECK((*session)->bind_input(3, inputs.views[0]).message().find("index 3") != std::string::npos);
  CHECK((*session)->bind_output(1, outputs.views[0]).message().find("index 1") !=
        std::string::npos);
  // After every refusal the Session still runs.
  CHECK((*session)->run(inputs.views, outputs.views).is_ok());
}

TEST_CASE("a saved plan with external tensors makes an external Session") {
  const auto model = load_mlp();
  auto planned = Session::create(model, external_options());
  REQUIRE(planned.has_value());
  auto saved = Plan::from_json((*planned)->plan().to_json());
  REQUIRE(saved.has_value());
  SessionOptions options;
  options.plan_override = &*saved;
  auto session = Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  CHECK((*session)->input_is_external(0));
  CHECK((*session)->output_is_external(0));
  CHECK((*session)->plan().pool_bytes == (*planned)->plan().pool_bytes);
}
