// CpuThreadPool: CPU threads that several Sessions in one process share.
#pragma once

#include <memory>

#include "onepool/status.h"

namespace onepool {

namespace cpu {
class ThreadPool;
}

/// CPU threads for every Session of a process, as ONNX Runtime's global thread pools: give one
/// pool to each Session (SessionOptions::thread_pool) and N Sessions share its threads instead
/// of starting N sets of their own.
///
/// A pool of T threads starts T - 1 workers; the T-th is whichever thread calls Session::run.
/// For each node it splits, a run borrows the workers when no other Session holds them, and
/// otherwise does that node's parts on its calling thread alone rather than wait. So C Sessions
/// running at once keep at most C + T - 1 threads busy, and a Session running alone is as fast
/// as with threads of its own. Outputs are the same bits either way: a kernel splits its work by
/// the pool's thread count, whichever threads then do the parts.
///
/// Thread-safe. Each Session holds a reference, so the pool lives as long as its last Session.
class CpuThreadPool {
 public:
  /// `threads`: the workers plus the calling thread, 1 to 4096; 0 for every hardware thread.
  /// kInvalidArgument outside that range.
  static Expected<std::shared_ptr<CpuThreadPool>> create(int threads = 0);
  ~CpuThreadPool();
  CpuThreadPool(const CpuThreadPool&) = delete;
  CpuThreadPool& operator=(const CpuThreadPool&) = delete;

  /// T: the threads a Session using this pool splits its nodes over.
  int threads() const;
  /// The pool the CPU kernels run on (internal to OnePool).
  cpu::ThreadPool& workers() const { return *workers_; }

 private:
  explicit CpuThreadPool(int threads);
  std::unique_ptr<cpu::ThreadPool> workers_;
};

}  // namespace onepool
