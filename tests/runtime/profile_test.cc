// The per-node profiler (SessionOptions::profile, Session::profile) and `onepool bench
// --profile`: node times add up to the run, every node is listed, FLOPs follow the shapes.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "onepool/onepool.h"
#include "planner/core/graph.h"
#include "tools/cli_run.h"

namespace {

std::string model_path(const std::string& file) {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/" + file;
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing generated model ", path);
  return path;
}

struct Buffers {
  std::vector<std::vector<std::byte>> storage;
  std::vector<onepool::TensorView> inputs;
  std::vector<onepool::TensorView> outputs;
};

Buffers make_buffers(const onepool::Model& model) {
  Buffers buffers;
  buffers.storage.reserve(model.inputs().size() + model.outputs().size());
  auto add = [&](const onepool::TensorInfo& info, std::vector<onepool::TensorView>& views) {
    buffers.storage.emplace_back(static_cast<size_t>(info.shape.element_count()) *
                                 onepool::dtype_size(info.dtype));
    views.push_back({buffers.storage.back().data(), info.dtype, info.shape, {}});
  };
  for (const auto& info : model.inputs()) add(info, buffers.inputs);
  for (const auto& info : model.outputs()) add(info, buffers.outputs);
  return buffers;
}

std::shared_ptr<const onepool::Model> load(const std::string& file) {
  onepool::LoadOptions load;
  load.dims = {{"batch", 1}};
  auto model = onepool::Model::load(model_path(file), load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

std::unique_ptr<onepool::Session> make_session(std::shared_ptr<const onepool::Model> model,
                                               bool profile, int threads = 2) {
  onepool::SessionOptions options;
  options.threads = threads;
  options.profile = profile;
  auto session = onepool::Session::create(std::move(model), options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  return std::move(session).value();
}

}  // namespace

// resnet18 at 224x224, 2 threads, 8 runs after 2 warm-ups and a reset: 8 runs profiled, one
// record per graph node in execution order, and the node times add up to at least 95% of the
// wall time of Session::run measured outside (the rest is the input/output copies, ~0.6 MB
// against a run of tens of ms) and never more than it.
TEST_CASE("node times add up to the measured run") {
  auto model = load("resnet18.onnx");
  auto session = make_session(model, true);
  Buffers buffers = make_buffers(*model);
  for (int i = 0; i < 2; ++i) REQUIRE(session->run(buffers.inputs, buffers.outputs).is_ok());
  session->reset_profile();
  using Clock = std::chrono::steady_clock;
  double wall_ms = 0;
  for (int i = 0; i < 8; ++i) {
    const auto start = Clock::now();
    REQUIRE(session->run(buffers.inputs, buffers.outputs).is_ok());
    wall_ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
  const onepool::SessionProfile profile = session->profile();
  CHECK(profile.runs == 8);
  const onepool::Graph& graph = model->graph();
  REQUIRE(profile.nodes.size() == graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    CHECK(profile.nodes[n].node == graph.nodes[n].name);
    CHECK(profile.nodes[n].op_type == graph.nodes[n].op_type);
    CHECK(profile.nodes[n].input_shapes.size() == graph.nodes[n].inputs.size());
    CHECK(profile.nodes[n].total_ms >= 0.0);
  }
  const double nodes_ms = std::accumulate(
      profile.nodes.begin(), profile.nodes.end(), 0.0,
      [](double sum, const onepool::NodeProfile& node) { return sum + node.total_ms; });
  INFO("nodes ", nodes_ms, " ms, execute ", profile.total_run_ms, " ms, wall ", wall_ms, " ms");
  CHECK(nodes_ms <= profile.total_run_ms * 1.0001);
  CHECK(profile.total_run_ms <= wall_ms);
  CHECK(nodes_ms >= 0.95 * wall_ms);
  // The last run's timeline: each node starts where the previous one ended.
  for (size_t n = 1; n < profile.nodes.size(); ++n) {
    const auto& previous = profile.nodes[n - 1];
    CHECK(profile.nodes[n].last_start_ms ==
          doctest::Approx(previous.last_start_ms + previous.last_ms).epsilon(1e-6));
  }
  // reset_profile() forgets everything.
  session->reset_profile();
  const onepool::SessionProfile cleared = session->profile();
  CHECK(cleared.runs == 0);
  CHECK(cleared.total_run_ms == 0.0);
  for (const auto& node : cleared.nodes) CHECK(node.total_ms == 0.0);
}

// Each thread's time in a node's parallel parts (NodeProfile::thread_busy_ms): one entry per
// thread of the Session, none longer than the node itself; each of resnet18's convolutions has
// its parts counted on some thread (which ones depends on the machine's load: a late worker's
// part is run by the caller; thread_pool_test checks the slots), and at one thread the caller's
// parts are most of each convolution's time. Summed over the runs and cleared with the rest.
TEST_CASE("each thread's busy time in a node") {
  auto model = load("resnet18.onnx");
  Buffers buffers = make_buffers(*model);
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    auto session = make_session(model, true, threads);
    for (int i = 0; i < 4; ++i) REQUIRE(session->run(buffers.inputs, buffers.outputs).is_ok());
    const onepool::SessionProfile profile = session->profile();
    int convs = 0;
    for (const onepool::NodeProfile& node : profile.nodes) {
      CAPTURE(node.node);
      REQUIRE(node.thread_busy_ms.size() == static_cast<size_t>(threads));
      for (double busy : node.thread_busy_ms) CHECK(busy <= node.total_ms * 1.0001);
      if (node.op_type != "Conv") continue;
      ++convs;
      const double busy =
          std::accumulate(node.thread_busy_ms.begin(), node.thread_busy_ms.end(), 0.0);
      CHECK(busy > 0.0);
      if (threads == 1) CHECK(node.thread_busy_ms[0] >= 0.5 * node.total_ms);
    }
    CHECK(convs >= 10);
    session->reset_profile();
    for (const auto& node : session->profile().nodes) {
      for (double busy : node.thread_busy_ms) CHECK(busy == 0.0);
    }
  }
}

// FLOPs from shapes: resnet18's stem conv ([1,3,224,224] * [64,3,7,7] -> [1,64,112,112]) is
// 2 * 64*112*112 * 3*7*7 = 236,027,904; its final Gemm ([1,512] x [1000,512]^T) is
// 2 * 1000 * 512 = 1,024,000; a Relu or Add has none.
TEST_CASE("FLOPs of Conv and Gemm follow the shapes") {
  auto model = load("resnet18.onnx");
  auto session = make_session(model, true);
  const onepool::SessionProfile profile = session->profile();
  bool saw_stem = false;
  bool saw_gemm = false;
  for (const auto& node : profile.nodes) {
    if (node.op_type == "Conv" && node.input_shapes[1] == onepool::Shape{64, 3, 7, 7}) {
      CHECK(node.flops == 236027904.0);
      CHECK(!node.implementation.empty());
      saw_stem = true;
    }
    if (node.op_type == "Gemm") {
      CHECK(node.flops == 1024000.0);
      saw_gemm = true;
    }
    if (node.op_type != "Conv" && node.op_type != "Gemm" && node.op_type != "MatMul") {
      CHECK(node.flops == 0.0);
    }
  }
  CHECK(saw_stem);
  CHECK(saw_gemm);
}

// Profiling off: no records, and the run works as before.
TEST_CASE("profiling off records nothing") {
  auto model = load("mlp.onnx");
  auto session = make_session(model, false);
  Buffers buffers = make_buffers(*model);
  REQUIRE(session->run(buffers.inputs, buffers.outputs).is_ok());
  const onepool::SessionProfile profile = session->profile();
  CHECK(profile.runs == 0);
  CHECK(profile.nodes.empty());
}

// `onepool bench --profile` prints one table row per node (mlp: its nodes after optimization)
// and `--profile-json` writes one trace event per node per traced run plus one per run.
TEST_CASE("bench --profile lists every node and writes a trace") {
  const std::string cli = onepool::test::env_or_empty("ONEPOOL_CLI");
  REQUIRE(!cli.empty());
  onepool::test::ScratchDir dir("profile_test");
  const std::string trace = dir.file("trace.json");
  const auto result = onepool::test::run_command(
      cli + " bench " + onepool::test::shell_quote(model_path("mlp.onnx")) +
          " --dim batch=1 --threads 1 --warmup 1 --iterations 3 --profile --profile-json " +
          onepool::test::shell_quote(trace),
      dir.file("out.txt"));
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  auto model = load("mlp.onnx");
  size_t rows = 0;
  for (const auto& node : model->graph().nodes) {
    if (result.output.find(" " + node.name + " ") != std::string::npos) ++rows;
  }
  CHECK(rows == model->graph().nodes.size());
  CHECK(result.output.find("by op type:") != std::string::npos);
  CHECK(result.output.find("Gemm") != std::string::npos);
  const std::string json = onepool::test::read_text(trace);
  size_t events = 0;
  for (size_t at = json.find("\"ph\":\"X\""); at != std::string::npos;
       at = json.find("\"ph\":\"X\"", at + 1)) {
    ++events;
  }
  CHECK(events == 3 * (model->graph().nodes.size() + 1));
}
