#include "runtime/cpu/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onepool::cpu {

namespace {
constexpr int kSpinIterations = 4000;  // about 50 µs of pause instructions

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

uint64_t pack_ticket(uint64_t generation, int parts, int next) {
  return (generation << 32) | (static_cast<uint64_t>(parts) << 16) | static_cast<uint64_t>(next);
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(0, threads - 1);
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true, std::memory_order_release);
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_claimed_parts(uint64_t generation) {
  uint64_t ticket = ticket_.load(std::memory_order_acquire);
  for (;;) {
    if ((ticket >> 32) != (generation & 0xffffffffu)) return;  // a newer generation
    const auto parts = static_cast<int>((ticket >> 16) & 0xffffu);
    const auto next = static_cast<int>(ticket & 0xffffu);
    if (next >= parts) return;  // every part is claimed
    if (!ticket_.compare_exchange_weak(ticket, ticket + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      continue;  // someone else claimed it: `ticket` now holds the current value
    }
    const int64_t begin = count_ * next / parts;
    const int64_t end = count_ * (next + 1) / parts;
    if (begin < end) range_fn_(fn_, begin, end);
    if (done_parts_.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) {
      std::lock_guard<std::mutex> lock(mutex_);
      work_done_.notify_one();
    }
    ticket = ticket_.load(std::memory_order_acquire);
  }
}

void ThreadPool::wait_until_done(int parts) {
  for (int spin = 0; spin < kSpinIterations; ++spin) {
    if (done_parts_.load(std::memory_order_acquire) == parts) return;
    cpu_relax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [&] { return done_parts_.load(std::memory_order_acquire) == parts; });
}

void ThreadPool::run_parts_inline(int parts, int64_t count, RangeFn range_fn, const void* fn) {
  for (int part = 0; part < parts; ++part) {
    const int64_t begin = count * part / parts;
    const int64_t end = count * (part + 1) / parts;
    if (begin < end) range_fn(fn, begin, end);
  }
}

void ThreadPool::run_parts(int parts, int64_t count, RangeFn range_fn, const void* fn) {
  // Another caller (a Session sharing this pool) has the workers: rather than wait for them,
  // this caller does its own parts. No busy thread waits, and no core gets two of them.
  std::unique_lock<std::mutex> turn(turn_, std::try_to_lock);
  if (!turn.owns_lock()) {
    run_parts_inline(parts, count, range_fn, fn);
    return;
  }
  count_ = count;
  range_fn_ = range_fn;
  fn_ = fn;
  done_parts_.store(0, std::memory_order_relaxed);
  const uint64_t generation = (generation_.load(std::memory_order_relaxed) + 1) & 0xffffffffu;
  ticket_.store(pack_ticket(generation, parts, 0), std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.store(generation, std::memory_order_release);
  }
  work_ready_.notify_all();
  run_claimed_parts(generation);  // the caller works too, then waits for parts still running
  wait_until_done(parts);
}

uint64_t ThreadPool::wait_for_work(uint64_t seen) {
  for (int spin = 0; spin < kSpinIterations; ++spin) {
    const uint64_t generation = generation_.load(std::memory_order_acquire);
    if (generation != seen || stopping_.load(std::memory_order_acquire)) return generation;
    cpu_relax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  work_ready_.wait(lock, [&] {
    return stopping_.load(std::memory_order_acquire) ||
           generation_.load(std::memory_order_acquire) != seen;
  });
  return generation_.load(std::memory_order_acquire);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_work(seen);
    if (stopping_.load(std::memory_order_acquire)) return;
    run_claimed_parts(seen);
  }
}

}  // namespace onepool::cpu
