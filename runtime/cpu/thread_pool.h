// A fixed pool of worker threads for data-parallel kernels. parallel_for never allocates.
// One ThreadPool per Session; run() is called by one thread at a time (the Session's user).
//
// Kernels call parallel_for once per node, so the hand-off latency matters as much as the work:
// workers and the caller spin briefly (about 50 µs) on atomics before they block on a condition
// variable, which keeps small models from paying a futex wake-up per node.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace onepool::cpu {

class ThreadPool {
 public:
  /// `threads` total workers including the caller; 1 means run everything inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int thread_count() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(begin, end) over [0, count) split into contiguous chunks, one per thread, and
  /// waits. `fn` must be callable as fn(int64_t, int64_t). Chunks below `min_chunk` items are
  /// not split further.
  template <class Fn>
  void parallel_for(int64_t count, int64_t min_chunk, const Fn& fn) {
    if (count <= 0) return;
    const int64_t max_parts = min_chunk > 0 ? (count + min_chunk - 1) / min_chunk : count;
    const int parts = static_cast<int>(std::min<int64_t>(thread_count(), max_parts));
    if (parts <= 1) {
      fn(int64_t{0}, count);
      return;
    }
    run_parts(parts, count, &call_range<Fn>, &fn);
  }

 private:
  using RangeFn = void (*)(const void* fn, int64_t begin, int64_t end);
  template <class Fn>
  static void call_range(const void* fn, int64_t begin, int64_t end) {
    (*static_cast<const Fn*>(fn))(begin, end);
  }
  void run_parts(int parts, int64_t count, RangeFn range_fn, const void* fn);
  void worker_loop(int worker_index);
  void run_part(int part);
  uint64_t wait_for_work(uint64_t seen);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stopping_{false};
  // Written by the caller before generation_ is published; read by workers after they see it.
  int parts_ = 0;
  int64_t count_ = 0;
  RangeFn range_fn_ = nullptr;
  const void* fn_ = nullptr;
};

}  // namespace onepool::cpu
