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
}  // namespace

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(0, threads - 1);
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) {
    workers_.emplace_back([this, i] { worker_loop(i + 1); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true, std::memory_order_release);
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_part(int part) {
  if (part >= parts_) return;
  const int64_t begin = count_ * part / parts_;
  const int64_t end = count_ * (part + 1) / parts_;
  if (begin < end) range_fn_(fn_, begin, end);
}

void ThreadPool::run_parts(int parts, int64_t count, RangeFn range_fn, const void* fn) {
  parts_ = parts;
  count_ = count;
  range_fn_ = range_fn;
  fn_ = fn;
  // Every worker takes part in every generation (idle ones just check in), so no worker can lag
  // a generation behind and read the next generation's parameters.
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  work_ready_.notify_all();
  run_part(0);  // the caller takes part 0
  for (int spin = 0; spin < kSpinIterations; ++spin) {
    if (pending_.load(std::memory_order_acquire) == 0) return;
    cpu_relax();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
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

void ThreadPool::worker_loop(int worker_index) {
  uint64_t seen = 0;
  for (;;) {
    const uint64_t generation = wait_for_work(seen);
    if (stopping_.load(std::memory_order_acquire)) return;
    seen = generation;
    run_part(worker_index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      work_done_.notify_one();
    }
  }
}

}  // namespace onepool::cpu
