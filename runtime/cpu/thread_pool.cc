#include "runtime/cpu/thread_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onepool::cpu {

namespace {
// How long a worker waits for the next parallel region, and the caller for the last part, by
// spinning before it sleeps on the condition variable. A time, not a count of pause instructions:
// a pause takes about 40 ns on a Sapphire Rapids core and 18 on a Zen 5 one, where 4000 of them
// (72 us) let the worker fall asleep inside ResNet-50's runs at two threads and every wake-up
// cost a node the other core's share: its runs' median was 1.14x their minimum (ONNX Runtime's
// 1.07x); spinning 2 ms brought the median from 21.8-27.2 ms to 21.5-24.7 in four alternated
// pairs of runs. A worker left idle spins at most this long after a Session's last run.
constexpr auto kSpinTime = std::chrono::microseconds(2000);
// Pauses between reads of the clock (a read costs about as much as one pause).
constexpr int kPausesPerClockRead = 32;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until ready() holds or kSpinTime has passed; returns ready().
template <class Ready>
bool spin_until(const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (;;) {
    for (int pause = 0; pause < kPausesPerClockRead; ++pause) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

// The counters of the BusyScope living on this thread (ThreadPool::BusyScope), or nullptr.
thread_local int64_t* t_busy_ns = nullptr;
thread_local int t_busy_slots = 0;

// Claim-word values (ThreadPool::claims_).
uint64_t open_claim(uint64_t generation) { return 2 * generation; }
uint64_t taken_claim(uint64_t generation) { return 2 * generation + 1; }
}  // namespace

ThreadPool::BusyScope::BusyScope(int64_t* busy_ns, int slots)
    : previous_ns_(t_busy_ns), previous_slots_(t_busy_slots) {
  t_busy_ns = busy_ns;
  t_busy_slots = busy_ns != nullptr ? slots : 0;
}

ThreadPool::BusyScope::~BusyScope() {
  t_busy_ns = previous_ns_;
  t_busy_slots = previous_slots_;
}

void ThreadPool::run_range(RangeFn range_fn, const void* fn, int64_t begin, int64_t end,
                           int64_t* busy, int slots, int self) {
  if (busy == nullptr || self >= slots) {
    range_fn(fn, begin, end);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  range_fn(fn, begin, end);
  busy[self] +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
}

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(0, threads - 1);
  const int claim_words = (workers + 1) * kPartsPerThread;
  claims_ = std::make_unique<std::atomic<uint64_t>[]>(static_cast<size_t>(claim_words));
  for (int part = 0; part < claim_words; ++part) claims_[part].store(0, std::memory_order_relaxed);
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this, i] { worker_loop(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true, std::memory_order_release);
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

bool ThreadPool::claim_and_run(uint64_t generation, int part, int self) {
  uint64_t expected = open_claim(generation);
  if (claims_[part].load(std::memory_order_relaxed) != expected ||
      !claims_[part].compare_exchange_strong(expected, taken_claim(generation),
                                             std::memory_order_acq_rel,
                                             std::memory_order_relaxed)) {
    return false;  // taken, or a newer generation opened it
  }
  const int parts = parts_.load(std::memory_order_relaxed);
  const Share share = contiguous_share(count_, part, parts);
  if (share.begin < share.end) {
    run_range(range_fn_, fn_, share.begin, share.end, busy_ns_, busy_slots_, self);
  }
  if (done_parts_.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) {
    std::lock_guard<std::mutex> lock(mutex_);
    work_done_.notify_one();
  }
  return true;
}

// A thread's own parts: part `self` when there is at most one per thread, else its contiguous
// run of them. Then the rest, from the last part down: another thread works through its own run
// from the front, so a taker and an owner meet in the middle without contending all along.
void ThreadPool::run_claimed_parts(uint64_t generation, int self) {
  const int parts = parts_.load(std::memory_order_acquire);
  const Share own = parts <= thread_count() ? Share{self, std::min(self + 1, parts)}
                                            : contiguous_share(parts, self, thread_count());
  for (int64_t part = own.begin; part < own.end; ++part) {
    claim_and_run(generation, static_cast<int>(part), self);
  }
  for (int part = parts - 1; part >= 0; --part) {
    if (part < own.begin || part >= own.end) claim_and_run(generation, part, self);
  }
}

void ThreadPool::wait_until_done(int parts) {
  if (spin_until([&] { return done_parts_.load(std::memory_order_acquire) == parts; })) return;
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [&] { return done_parts_.load(std::memory_order_acquire) == parts; });
}

void ThreadPool::run_parts_inline(int parts, int64_t count, RangeFn range_fn, const void* fn) {
  for (int part = 0; part < parts; ++part) {
    const Share share = contiguous_share(count, part, parts);
    if (share.begin < share.end) {
      run_range(range_fn, fn, share.begin, share.end, t_busy_ns, t_busy_slots, 0);
    }
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
  busy_ns_ = t_busy_ns;
  busy_slots_ = t_busy_slots;
  parts_.store(parts, std::memory_order_relaxed);
  done_parts_.store(0, std::memory_order_relaxed);
  const uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
  for (int part = 0; part < parts; ++part) {
    claims_[part].store(open_claim(generation), std::memory_order_relaxed);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.store(generation, std::memory_order_release);
  }
  work_ready_.notify_all();
  run_claimed_parts(generation, 0);  // the caller works too, then waits for parts still running
  wait_until_done(parts);
}

uint64_t ThreadPool::wait_for_work(uint64_t seen) {
  const auto work_or_stop = [&] {
    return generation_.load(std::memory_order_acquire) != seen ||
           stopping_.load(std::memory_order_acquire);
  };
  if (spin_until(work_or_stop)) return generation_.load(std::memory_order_acquire);
  std::unique_lock<std::mutex> lock(mutex_);
  work_ready_.wait(lock, [&] {
    return stopping_.load(std::memory_order_acquire) ||
           generation_.load(std::memory_order_acquire) != seen;
  });
  return generation_.load(std::memory_order_acquire);
}

void ThreadPool::worker_loop(int self) {
  uint64_t seen = 0;
  for (;;) {
    seen = wait_for_work(seen);
    if (stopping_.load(std::memory_order_acquire)) return;
    run_claimed_parts(seen, self);
  }
}

}  // namespace onepool::cpu
