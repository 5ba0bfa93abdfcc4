// onepool::CpuThreadPool: the public handle of a cpu::ThreadPool that Sessions share.
#include <thread>

#include "onepool/thread_pool.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool {
namespace {
constexpr int kMaxThreads = 4096;
}

Expected<std::shared_ptr<CpuThreadPool>> CpuThreadPool::create(int threads) {
  if (threads < 0 || threads > kMaxThreads) {
    return make_status(StatusCode::kInvalidArgument, "CpuThreadPool::create: threads is ", threads,
                       "; expected 1 to ", kMaxThreads, ", or 0 for every hardware thread");
  }
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::shared_ptr<CpuThreadPool>(new CpuThreadPool(threads));
}

CpuThreadPool::CpuThreadPool(int threads) : workers_(std::make_unique<cpu::ThreadPool>(threads)) {}

CpuThreadPool::~CpuThreadPool() = default;

int CpuThreadPool::threads() const { return workers_->thread_count(); }

}  // namespace onepool
