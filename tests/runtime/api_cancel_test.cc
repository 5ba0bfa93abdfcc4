// Session::run with RunOptions::cancel: the flag is read before each node; once true the run
// stops there with kCancelled naming the node, and the Session keeps running correctly after.
// A run with a flag that stays false allocates nothing, like the plain run.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/allocation_counter.h"
#include "common/generated_models.h"
#include "onepool/onepool.h"

namespace {

using onepool::RunOptions;
using onepool::Session;
using onepool::Status;
using onepool::StatusCode;

// A Session on a generated model with inputs filled with a fixed pattern and output buffers.
struct Fixture {
  std::shared_ptr<const onepool::Model> model;
  std::unique_ptr<Session> session;
  std::vector<std::vector<float>> input_data;
  std::vector<std::vector<std::byte>> output_data;
  std::vector<onepool::TensorView> inputs;
  std::vector<onepool::TensorView> outputs;

  Fixture(const std::string& file, bool has_batch_dim) {
    model = onepool_test::load_generated_model(file, has_batch_dim);
    onepool::SessionOptions options;
    options.threads = 2;
    auto created = Session::create(model, options);
    REQUIRE_MESSAGE(created.has_value(), created.status().to_string());
    session = std::move(created).value();
    input_data.reserve(model->inputs().size());
    for (const auto& info : model->inputs()) {
      std::vector<float>& data = input_data.emplace_back(info.shape.element_count());
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
      inputs.push_back({data.data(), info.dtype, info.shape, {}});
    }
    output_data.reserve(model->outputs().size());
    for (const auto& info : model->outputs()) {
      std::vector<std::byte>& data =
          output_data.emplace_back(info.shape.element_count() * onepool::dtype_size(info.dtype));
      outputs.push_back({data.data(), info.dtype, info.shape, {}});
    }
  }

  void clear_outputs() {
    for (auto& data : output_data) std::memset(data.data(), 0xff, data.size());
  }
};

}  // namespace

// A flag already true: the run stops before node 0, kCancelled ("cancelled: run cancelled
// before node '...' (Gemm), node 0 of N in execution order"). With the flag cleared the same
// Session's outputs equal a plain run's bit for bit.
TEST_CASE("RunOptions::cancel set before run cancels at node 0") {
  Fixture fixture("mlp.onnx", true);
  REQUIRE(fixture.session->run(fixture.inputs, fixture.outputs).is_ok());
  const auto expected = fixture.output_data;
  std::atomic<bool> cancel{true};
  RunOptions options;
  options.cancel = &cancel;
  const Status cancelled = fixture.session->run(fixture.inputs, fixture.outputs, options);
  REQUIRE(cancelled.code() == StatusCode::kCancelled);
  CAPTURE(cancelled.to_string());
  CHECK(cancelled.to_string().rfind("cancelled: run cancelled before node '", 0) == 0);
  CHECK(cancelled.message().find("node 0 of ") != std::string::npos);
  cancel = false;
  fixture.clear_outputs();
  REQUIRE(fixture.session->run(fixture.inputs, fixture.outputs, options).is_ok());
  CHECK(fixture.output_data == expected);
  fixture.clear_outputs();
  REQUIRE(fixture.session->run(fixture.inputs, fixture.outputs).is_ok());  // plain run too
  CHECK(fixture.output_data == expected);
}

// resnet50 (batch 1, 2 threads) run in a loop while another thread sets the flag after 30 ms:
// a run comes back kCancelled within the 200 runs allowed (one run takes tens of ms), and
// the Session then runs to the same outputs as before.
TEST_CASE("RunOptions::cancel set from another thread stops a running model") {
  Fixture fixture("resnet50.onnx", false);
  REQUIRE(fixture.session->run(fixture.inputs, fixture.outputs).is_ok());
  const auto expected = fixture.output_data;
  std::atomic<bool> cancel{false};
  RunOptions options;
  options.cancel = &cancel;
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cancel.store(true);
  });
  Status status;
  int runs = 0;
  for (; runs < 200 && status.is_ok(); ++runs) {
    status = fixture.session->run(fixture.inputs, fixture.outputs, options);
  }
  canceller.join();
  MESSAGE("cancelled in run ", runs, ": ", status.to_string());
  CHECK(status.code() == StatusCode::kCancelled);
  CHECK(status.message().find("run cancelled before node '") != std::string::npos);
  cancel = false;
  fixture.clear_outputs();
  REQUIRE(fixture.session->run(fixture.inputs, fixture.outputs, options).is_ok());
  CHECK(fixture.output_data == expected);
}

// 50 runs with a flag that stays false: 0 allocations (the check is one load per node).
TEST_CASE("Session::run with RunOptions allocates nothing") {
  Fixture fixture("mlp.onnx", true);
  std::atomic<bool> cancel{false};
  RunOptions options;
  options.cancel = &cancel;
  REQUIRE(fixture.session->run(fixture.inputs, fixture.outputs, options).is_ok());
  bool all_ok = true;
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 50; ++i) {
    all_ok = fixture.session->run(fixture.inputs, fixture.outputs, options).is_ok() && all_ok;
  }
  g_counting = false;
  CHECK(all_ok);
  CHECK(g_allocations.load() == 0);
}

// The new code has a name: status_code_name(kCancelled) is "cancelled".
TEST_CASE("kCancelled has a name") {
  CHECK(std::string(onepool::status_code_name(StatusCode::kCancelled)) == "cancelled");
}
