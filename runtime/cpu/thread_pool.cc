#include "runtime/cpu/thread_pool.h"

#include <algorithm>

namespace onepool::cpu {

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
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_part(int part) {
  const int64_t begin = count_ * part / parts_;
  const int64_t end = count_ * (part + 1) / parts_;
  if (begin < end) range_fn_(fn_, begin, end);
}

void ThreadPool::run_parts(int parts, int64_t count, RangeFn range_fn, const void* fn) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    parts_ = parts;
    count_ = count;
    range_fn_ = range_fn;
    fn_ = fn;
    pending_ = parts - 1;
    ++generation_;
  }
  work_ready_.notify_all();
  run_part(0);  // the caller takes part 0
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [this] { return pending_ == 0; });
}

void ThreadPool::worker_loop(int worker_index) {
  uint64_t seen = 0;
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex_);
    work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    if (worker_index >= parts_) continue;  // fewer parts than threads this time
    lock.unlock();
    run_part(worker_index);
    lock.lock();
    if (--pending_ == 0) work_done_.notify_one();
  }
}

}  // namespace onepool::cpu
