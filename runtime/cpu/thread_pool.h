// A fixed pool of worker threads for data-parallel kernels. parallel_for never allocates.
// A Session owns one, or several Sessions share one (onepool::CpuThreadPool). Callers may call
// parallel_for at the same time: the first takes the workers (a try-lock); one that finds them
// taken runs its parts itself, in order, with the same part boundaries, so what each part
// computes (and its bits) never depends on which thread ran it or whether the workers were free.
//
// Kernels call parallel_for once per node, so the hand-off latency matters as much as the work:
// workers and the caller spin briefly (about 50 µs) on atomics before they block on a condition
// variable, which keeps small models from paying a futex wake-up per node. Parts are claimed, not
// assigned, but each thread claims its own part first: the caller part 0, worker i part i + 1.
// Consecutive nodes split the same way therefore run each part on the same core, so a node reads
// the rows the previous one wrote from its own core's caches (two cores on different L3 caches
// read another core's freshly written lines about three times slower). A thread done with its own
// part takes any part still unclaimed, so a worker the OS has descheduled (a busy machine) never
// stalls a node: its part is run by the others.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace onepool::cpu {

/// Items [begin, end) of a range split into contiguous shares.
struct Share {
  int64_t begin = 0;
  int64_t end = 0;
};

/// The share of `count` items that part `part` of `parts` takes: [part * count / parts,
/// (part + 1) * count / parts), sizes differing by at most one. The thread pool splits every
/// parallel_for this way, and kernels that cut their own rows use it too, so that consecutive
/// nodes give a core the same rows.
inline Share contiguous_share(int64_t count, int64_t part, int64_t parts) {
  return Share{count * part / parts, count * (part + 1) / parts};
}

class ThreadPool {
 public:
  /// While one lives on a thread, the parallel_for calls that thread makes add each part's
  /// duration (steady_clock nanoseconds) to busy_ns[slot] of the thread that ran it (the caller
  /// 0, worker i i + 1; slots past `slots` are not counted). A profiler's per-node counters: set
  /// around one node on the Session's calling thread, so Sessions sharing a pool each count their
  /// own calls. Each slot is written by one thread at a time; read them once the calls returned.
  class BusyScope {
   public:
    BusyScope(int64_t* busy_ns, int slots);
    ~BusyScope();
    BusyScope(const BusyScope&) = delete;
    BusyScope& operator=(const BusyScope&) = delete;

   private:
    int64_t* previous_ns_;
    int previous_slots_;
  };

  /// `threads` total workers including the caller; 1 means run everything inline.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int thread_count() const { return static_cast<int>(workers_.size()) + 1; }
  static constexpr int64_t kMaxParts = 0xffff;  // parts per call at most (and thread_count())
  static constexpr int kPartsPerThread = 4;     // parallel_for_balanced's chunks per thread

  /// Calls fn(begin, end) over [0, count) split into contiguous chunks, one per thread, and
  /// waits. `fn` must be callable as fn(int64_t, int64_t). Chunks below `min_chunk` items are
  /// not split further.
  template <class Fn>
  void parallel_for(int64_t count, int64_t min_chunk, const Fn& fn) {
    split(count, min_chunk, 1, &fn);
  }

  /// As parallel_for, in kPartsPerThread smaller chunks per thread: each thread runs its own
  /// contiguous run of chunks (thread t the t-th run, as parallel_for would split), then takes
  /// chunks still unclaimed from the ends of the others' runs. When a core is slowed (a shared
  /// machine's other load), the other core does more of the node instead of waiting for it. For
  /// long nodes whose items are independent (a GEMM's column tiles): which thread runs a chunk
  /// never changes what it computes.
  template <class Fn>
  void parallel_for_balanced(int64_t count, int64_t min_chunk, const Fn& fn) {
    split(count, min_chunk, kPartsPerThread, &fn);
  }

 private:
  using RangeFn = void (*)(const void* fn, int64_t begin, int64_t end);
  template <class Fn>
  static void call_range(const void* fn, int64_t begin, int64_t end) {
    (*static_cast<const Fn*>(fn))(begin, end);
  }
  template <class Fn>
  void split(int64_t count, int64_t min_chunk, int parts_per_thread, const Fn* fn) {
    if (count <= 0) return;
    const int64_t max_parts = min_chunk > 0 ? (count + min_chunk - 1) / min_chunk : count;
    const int parts = static_cast<int>(
        std::min<int64_t>({int64_t{thread_count()} * parts_per_thread, max_parts, kMaxParts}));
    if (parts <= 1 || workers_.empty()) {
      run_parts_inline(1, count, &call_range<Fn>, fn);
      return;
    }
    run_parts(parts, count, &call_range<Fn>, fn);
  }
  void run_parts(int parts, int64_t count, RangeFn range_fn, const void* fn);
  /// Runs [begin, end) on slot `self`, adding its duration to busy[self] when busy is set.
  static void run_range(RangeFn range_fn, const void* fn, int64_t begin, int64_t end, int64_t* busy,
                        int slots, int self);
  /// The parts of run_parts one after the other on the calling thread (counted on slot 0 under a
  /// BusyScope).
  static void run_parts_inline(int parts, int64_t count, RangeFn range_fn, const void* fn);
  void worker_loop(int self);
  /// Claims and runs parts of `generation`, part `self` first, until none is left (or a newer
  /// generation started).
  void run_claimed_parts(uint64_t generation, int self);
  /// Claims part `part` of `generation` and runs it on slot `self`; false when it was taken.
  bool claim_and_run(uint64_t generation, int part, int self);
  void wait_until_done(int parts);
  uint64_t wait_for_work(uint64_t seen);

  std::vector<std::thread> workers_;
  std::mutex turn_;  // held by the caller whose parts the workers run (see run_parts)
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  std::atomic<uint64_t> generation_{0};
  /// One claim word per part (thread_count() * kPartsPerThread of them): 2 g while part p of
  /// generation g is open, 2 g + 1 once claimed. A
  /// claim is one compare-exchange from 2 g, so a worker still holding an old generation can
  /// never claim a part of the next one (the caller opens the parts before publishing g).
  std::unique_ptr<std::atomic<uint64_t>[]> claims_;
  std::atomic<int> parts_{0};
  std::atomic<int> done_parts_{0};
  std::atomic<bool> stopping_{false};
  // Written by the caller holding turn_ before the generation is published; read by whoever claims
  // a part.
  int64_t count_ = 0;
  RangeFn range_fn_ = nullptr;
  const void* fn_ = nullptr;
  int64_t* busy_ns_ = nullptr;  // the caller's BusyScope counters, or nullptr
  int busy_slots_ = 0;
};

}  // namespace onepool::cpu
