// SessionOptions::thread_pool: Sessions of one process share one CpuThreadPool. They start no
// threads of their own, give the bits a Session with its own threads gives (alone or running at
// the same time as the others), keep the pool alive, and bad settings are clear errors.
#include <dirent.h>
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/generated_models.h"
#include "onepool/onepool.h"

namespace {

using onepool::CpuThreadPool;
using onepool::Session;
using onepool::SessionOptions;
using onepool::StatusCode;

// The process's threads, from /proc/self/task.
int process_threads() {
  DIR* dir = opendir("/proc/self/task");
  REQUIRE(dir != nullptr);
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

std::unique_ptr<Session> make_session(const std::shared_ptr<const onepool::Model>& model,
                                      const SessionOptions& options) {
  auto created = Session::create(model, options);
  REQUIRE_MESSAGE(created.has_value(), created.status().to_string());
  return std::move(created).value();
}

// Runs `session` on a fixed input pattern shifted by `variant`; returns every output's bytes.
std::vector<std::byte> run_bytes(Session& session, const onepool::Model& model, int variant) {
  std::vector<std::vector<float>> input_data;
  std::vector<onepool::TensorView> inputs;
  input_data.reserve(model.inputs().size());
  for (const auto& info : model.inputs()) {
    std::vector<float>& data = input_data.emplace_back(info.shape.element_count());
    for (size_t i = 0; i < data.size(); ++i) {
      data[i] = static_cast<float>((i + static_cast<size_t>(variant)) % 17) * 0.1f - 0.8f;
    }
    inputs.push_back({data.data(), info.dtype, info.shape, {}});
  }
  std::vector<std::vector<std::byte>> output_data;
  std::vector<onepool::TensorView> outputs;
  output_data.reserve(model.outputs().size());
  for (const auto& info : model.outputs()) {
    auto& data =
        output_data.emplace_back(info.shape.element_count() * onepool::dtype_size(info.dtype));
    outputs.push_back({data.data(), info.dtype, info.shape, {}});
  }
  const onepool::Status status = session.run(inputs, outputs);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  std::vector<std::byte> all;
  for (const auto& data : output_data) all.insert(all.end(), data.begin(), data.end());
  return all;
}

TEST_CASE("CpuThreadPool::create checks its thread count") {
  for (int bad : {-1, 5000}) {
    auto pool = CpuThreadPool::create(bad);
    REQUIRE_FALSE(pool.has_value());
    CHECK(pool.status().code() == StatusCode::kInvalidArgument);
    CHECK(pool.status().message().find(std::to_string(bad)) != std::string::npos);
  }
  auto three = CpuThreadPool::create(3);
  REQUIRE(three.has_value());
  CHECK((*three)->threads() == 3);
  auto every = CpuThreadPool::create(0);
  REQUIRE(every.has_value());
  CHECK((*every)->threads() >= 1);
}

TEST_CASE("a Session asking for other threads than its shared pool's is refused") {
  auto model = onepool_test::load_generated_model("cnn_fp16_twin32.onnx", false);
  SessionOptions options;
  options.thread_pool = *CpuThreadPool::create(2);
  options.threads = 3;
  auto session = Session::create(model, options);
  REQUIRE_FALSE(session.has_value());
  CHECK(session.status().code() == StatusCode::kInvalidArgument);
  CHECK(session.status().message().find("threads is 3") != std::string::npos);
  CHECK(session.status().message().find("runs 2 threads") != std::string::npos);
  options.threads = 2;  // the pool's own count is fine
  CHECK(Session::create(model, options).has_value());
}

TEST_CASE("Sessions on a shared pool start no threads and keep the pool alive") {
  auto model = onepool_test::load_generated_model("cnn_fp16_twin32.onnx", false);
  SessionOptions shared;
  shared.thread_pool = *CpuThreadPool::create(3);
  std::vector<std::unique_ptr<Session>> sessions;
  sessions.push_back(make_session(model, shared));  // whatever a first Session starts, once
  const int with_pool = process_threads();
  for (int i = 0; i < 3; ++i) sessions.push_back(make_session(model, shared));
  CHECK(process_threads() == with_pool);  // three more Sessions, not one new thread
  shared.thread_pool.reset();             // the Sessions hold the pool now
  const std::vector<std::byte> first = run_bytes(*sessions[0], *model, 0);
  CHECK(run_bytes(*sessions[3], *model, 0) == first);

  SessionOptions own;  // the check can fail: a Session with threads of its own starts them
  own.threads = 3;
  sessions.push_back(make_session(model, own));
  CHECK(process_threads() == with_pool + 2);
}

TEST_CASE("Sessions running at once on a shared pool give the bits of Sessions with own threads") {
  auto model = onepool_test::load_generated_model("cnn_fp16_twin32.onnx", false);
  constexpr int kSessions = 3;
  constexpr int kRuns = 6;
  // Expected: one Session with its own two threads, run alone.
  SessionOptions own;
  own.threads = 2;
  auto reference = make_session(model, own);
  std::vector<std::vector<std::byte>> expected;
  for (int s = 0; s < kSessions; ++s) expected.push_back(run_bytes(*reference, *model, s));
  REQUIRE(expected[0] != expected[1]);  // the variants differ, so a mix-up would show

  SessionOptions shared;
  shared.thread_pool = *CpuThreadPool::create(2);
  std::vector<std::unique_ptr<Session>> sessions;
  for (int s = 0; s < kSessions; ++s) sessions.push_back(make_session(model, shared));
  std::atomic<int> mismatches{0};
  std::vector<std::thread> callers;
  for (int s = 0; s < kSessions; ++s) {
    callers.emplace_back([&, s] {
      for (int run = 0; run < kRuns; ++run) {
        if (run_bytes(*sessions[static_cast<size_t>(s)], *model, s) !=
            expected[static_cast<size_t>(s)]) {
          mismatches.fetch_add(1);
        }
      }
    });
  }
  for (auto& caller : callers) caller.join();
  CHECK(mismatches.load() == 0);
}

}  // namespace
