// ThreadPool: every index of every parallel_for runs exactly once, over many back-to-back calls,
// with more threads than cores, when one part is slow (the others must not run it twice or skip
// it, and the next call must not start before it ends), and with several callers at once; and
// each thread takes its own part first, so consecutive calls keep each part on one thread.
#include "runtime/cpu/thread_pool.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

namespace onepool::cpu {
namespace {

// Runs `calls` parallel_for calls of `count` items; returns false on any index not hit once.
bool every_index_once(ThreadPool& pool, int calls, int64_t count) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
  for (int call = 0; call < calls; ++call) {
    for (auto& hit : hits) hit.store(0, std::memory_order_relaxed);
    pool.parallel_for(count, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    });
    for (const auto& hit : hits) {
      if (hit.load() != 1) return false;
    }
  }
  return true;
}

TEST_CASE("every index runs exactly once, for 1 to 8 threads") {
  for (int threads : {1, 2, 3, 4, 8}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    CHECK(every_index_once(pool, 2000, 37));
    CHECK(every_index_once(pool, 200, 1000));
    CHECK(every_index_once(pool, 500, 2));  // fewer items than threads
  }
}

TEST_CASE("a slow part delays the call's return, not its correctness") {
  ThreadPool pool(4);
  for (int call = 0; call < 20; ++call) {
    std::atomic<int> finished{0};
    pool.parallel_for(4, 1, [&](int64_t begin, int64_t) {
      if (begin == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      finished.fetch_add(1);
    });
    CHECK(finished.load() == 4);  // parallel_for returned only after every part ended
  }
}

TEST_CASE("min_chunk limits the split") {
  ThreadPool pool(4);
  std::atomic<int> ranges{0};
  pool.parallel_for(10, 8, [&](int64_t, int64_t) { ranges.fetch_add(1); });
  CHECK(ranges.load() == 2);  // ceil(10 / 8)
}

TEST_CASE("callers sharing one pool each get every index once") {
  // Sessions sharing a CpuThreadPool call parallel_for at the same time: one borrows the
  // workers, the others run their own parts; none may lose, repeat or mix up a part.
  ThreadPool pool(3);
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int caller = 0; caller < 3; ++caller) {
    callers.emplace_back([&, caller] {
      if (!every_index_once(pool, 300, 41 + caller)) failures.fetch_add(1);
    });
  }
  for (auto& caller : callers) caller.join();
  CHECK(failures.load() == 0);
}

TEST_CASE("a caller that finds the workers busy keeps the part boundaries") {
  ThreadPool pool(2);
  std::atomic<bool> holding{false};
  std::atomic<bool> release{false};
  std::thread holder([&] {
    pool.parallel_for(2, 1, [&](int64_t begin, int64_t) {
      if (begin != 0) return;
      holding.store(true);
      while (!release.load()) std::this_thread::yield();
    });
  });
  while (!holding.load()) std::this_thread::yield();
  // The workers are taken: this call runs inline, still as parts [0, 5) and [5, 10).
  std::vector<std::pair<int64_t, int64_t>> ranges;
  pool.parallel_for(10, 1, [&](int64_t begin, int64_t end) { ranges.emplace_back(begin, end); });
  release.store(true);
  holder.join();
  const std::vector<std::pair<int64_t, int64_t>> expected{{0, 5}, {5, 10}};
  CHECK(ranges == expected);
}

// Each part waits (up to 10 s) until every part has started, so no thread can finish its own part
// and take another: which thread runs which part is then decided by the claiming order alone.
TEST_CASE("each thread runs its own part: the caller part 0, worker i part i") {
  constexpr int kThreads = 3;
  constexpr int kCalls = 200;
  ThreadPool pool(kThreads);
  const std::thread::id caller = std::this_thread::get_id();
  int caller_ran_part_0 = 0;
  int workers_stable = 0;
  std::vector<std::thread::id> first_owners(kThreads);
  for (int call = 0; call < kCalls; ++call) {
    std::atomic<int> started{0};
    std::vector<std::thread::id> owners(kThreads);
    pool.parallel_for(kThreads, 1, [&](int64_t begin, int64_t) {
      owners[static_cast<size_t>(begin)] = std::this_thread::get_id();
      started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < kThreads && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
    });
    if (owners[0] == caller) ++caller_ran_part_0;
    if (call == 0) first_owners = owners;
    if (owners == first_owners) ++workers_stable;
  }
  CHECK(caller_ran_part_0 == kCalls);
  CHECK(workers_stable == kCalls);  // parts 1 and 2 stay with the same workers
}

// parallel_for_balanced: kPartsPerThread chunks a thread, every index once over many calls and
// thread counts (also with fewer items than chunks).
TEST_CASE("parallel_for_balanced runs every index once in its smaller chunks") {
  for (int threads : {1, 2, 3, 8}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    for (const int64_t count : {int64_t{1}, int64_t{5}, int64_t{97}, int64_t{1000}}) {
      CAPTURE(count);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      std::atomic<int> chunks{0};
      for (int call = 0; call < 200; ++call) {
        pool.parallel_for_balanced(count, 1, [&](int64_t begin, int64_t end) {
          chunks.fetch_add(1);
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
        });
      }
      for (const auto& hit : hits) REQUIRE(hit.load() == 200);
      const int64_t expected_chunks =
          std::min<int64_t>(count, int64_t{threads} * ThreadPool::kPartsPerThread);
      CHECK(chunks.load() == 200 * (threads == 1 ? 1 : expected_chunks));
    }
  }
}

// A thread held up in its first chunk (a core the machine gives to other work): the other thread
// runs the rest of the held thread's chunks, from the end of its run, instead of waiting.
TEST_CASE("parallel_for_balanced: the free thread takes a held-up thread's chunks") {
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  int worker_held = 0;
  for (int call = 0; call < 20; ++call) {
    std::vector<std::thread::id> owners(8);
    std::atomic<int> finished{0};
    pool.parallel_for_balanced(8, 1, [&](int64_t begin, int64_t) {
      owners[static_cast<size_t>(begin)] = std::this_thread::get_id();
      // The caller's own chunks take a while, so the worker has started its first by then.
      if (begin < 4) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      if (begin == 4) {  // the worker's first chunk waits until the other seven have run
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (finished.load() < 7 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      }
      finished.fetch_add(1);
    });
    if (owners[4] == caller) continue;  // the worker started late and the caller took chunk 4 too
    ++worker_held;
    // The worker sat in chunk 4 until the rest were done: the caller ran the rest of its run.
    CHECK(owners[5] == caller);
    CHECK(owners[6] == caller);
    CHECK(owners[7] == caller);
  }
  // The worker starts chunk 4 first unless the machine left it unscheduled for the caller's 8 ms.
  CHECK(worker_held >= 1);
}

// BusyScope: each part's time lands on the slot of the thread that ran it. Every part waits
// until all have started, so each thread holds its own (the caller part 0, worker i part i); a
// part lasts at least 2 ms. Calls made outside a scope, or run inline at one thread, count on the
// caller's slot only while a scope lives.
TEST_CASE("BusyScope counts each part on the slot of the thread that ran it") {
  constexpr int kThreads = 3;
  ThreadPool pool(kThreads);
  std::vector<int64_t> busy(kThreads, 0);
  const auto held_parts = [&] {
    std::atomic<int> started{0};
    pool.parallel_for(kThreads, 1, [&](int64_t, int64_t) {
      started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < kThreads && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    });
  };
  held_parts();  // no scope: nothing counted
  CHECK(std::all_of(busy.begin(), busy.end(), [](int64_t ns) { return ns == 0; }));
  {
    const ThreadPool::BusyScope scope(busy.data(), kThreads);
    held_parts();
  }
  for (int slot = 0; slot < kThreads; ++slot) {
    CAPTURE(slot);
    CHECK(busy[static_cast<size_t>(slot)] >= 2'000'000);
  }
  held_parts();  // the scope ended: the counters stay as they were
  const std::vector<int64_t> after = busy;
  held_parts();
  CHECK(busy == after);
  ThreadPool inline_pool(1);
  int64_t alone = 0;
  {
    const ThreadPool::BusyScope scope(&alone, 1);
    inline_pool.parallel_for(
        4, 1, [](int64_t, int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); });
  }
  CHECK(alone >= 1'000'000);
}

}  // namespace
}  // namespace onepool::cpu
