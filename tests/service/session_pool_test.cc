// SessionPool: leases, back-pressure ("busy" after the timeout) and pool-bytes accounting, on the
// generated mlp.onnx (x [batch,784] float32, batch=1).
#include "onepool/session_pool.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <latch>
#include <string>
#include <thread>
#include <vector>

namespace onepool {
namespace {

using std::chrono::milliseconds;

// The generated MLP with batch=1, or nullptr (and a MESSAGE) when the models are not generated.
std::shared_ptr<const Model> load_mlp() {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  const std::string path = str_cat(dir ? dir : "", "/mlp.onnx");
  if (dir == nullptr || !std::filesystem::exists(path)) {
    MESSAGE("skipped: " << path << " not found (set ONEPOOL_MODELS_DIR)");
    return nullptr;
  }
  LoadOptions options;
  options.dims.push_back({"batch", 1});
  auto model = Model::load(path, options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

// No model is needed to reject a pool of zero Sessions.
TEST_CASE("SessionPool rejects zero sessions") {
  auto pool = SessionPool::create(nullptr, SessionOptions{}, 0);
  REQUIRE_FALSE(pool.has_value());
  CHECK(pool.status().code() == StatusCode::kInvalidArgument);
  CHECK(pool.status().message().find("got 0") != std::string::npos);
}

// 2 Sessions: pool bytes = 2 × plan.pool_bytes; leases come back on destruction and on move-assign.
TEST_CASE("SessionPool leases return their Session") {
  auto model = load_mlp();
  if (!model) return;
  auto pool = SessionPool::create(model, SessionOptions{}, 2);
  REQUIRE_MESSAGE(pool.has_value(), pool.status().to_string());
  SessionPool& sessions = **pool;
  CHECK(sessions.size() == 2);
  CHECK(sessions.plan().pool_bytes > 0);
  CHECK(sessions.pool_bytes() == 2 * sessions.plan().pool_bytes);
  {
    auto first = sessions.acquire(milliseconds(10));
    REQUIRE(first.has_value());
    auto second = sessions.acquire(milliseconds(10));
    REQUIRE(second.has_value());
    CHECK(first->index() != second->index());
    CHECK(sessions.busy() == 2);
    SessionPool::Lease moved = std::move(*first);
    CHECK(sessions.busy() == 2);  // a move transfers, it does not return
    moved = std::move(*second);   // move-assign returns the Session `moved` held
    CHECK(sessions.busy() == 1);
  }
  CHECK(sessions.busy() == 0);
}

// 3 threads acquire at once from 2 Sessions with a 50 ms timeout; the 2 winners hold their
// leases until the loser has failed, so exactly one gets kResourceExhausted
// "busy: all 2 sessions in use for 50 ms".
TEST_CASE("SessionPool: the third concurrent acquire is busy") {
  auto model = load_mlp();
  if (!model) return;
  auto pool = SessionPool::create(model, SessionOptions{}, 2);
  REQUIRE_MESSAGE(pool.has_value(), pool.status().to_string());
  SessionPool& sessions = **pool;
  std::latch start(3);
  std::latch loser_done(1);
  std::atomic<int> granted{0};
  std::vector<Status> failures(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      auto lease = sessions.acquire(milliseconds(50));
      if (!lease) {
        failures[static_cast<size_t>(t)] = lease.status();
        loser_done.count_down();
        return;
      }
      ++granted;
      loser_done.wait();
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(granted.load() == 2);
  int busy = 0;
  for (const Status& status : failures) {
    if (status.is_ok()) continue;
    ++busy;
    CHECK(status.code() == StatusCode::kResourceExhausted);
    CHECK(status.message() == "busy: all 2 sessions in use for 50 ms");
  }
  CHECK(busy == 1);
  CHECK(sessions.busy() == 0);
  CHECK(sessions.acquire(milliseconds(0)).has_value());
}

}  // namespace
}  // namespace onepool
