#include "onepool/session_pool.h"

#include <limits>
#include <utility>

namespace onepool {

SessionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), index_(other.index_) {}

SessionPool::Lease& SessionPool::Lease::operator=(Lease&& other) noexcept {
  if (this == &other) return *this;
  release();
  pool_ = std::exchange(other.pool_, nullptr);
  index_ = other.index_;
  return *this;
}

SessionPool::Lease::~Lease() { release(); }

Session& SessionPool::Lease::session() const { return *pool_->sessions_[index_]; }

void SessionPool::Lease::release() {
  if (pool_ == nullptr) return;
  std::exchange(pool_, nullptr)->give_back(index_);
}

Expected<std::unique_ptr<SessionPool>> SessionPool::create(std::shared_ptr<const Model> model,
                                                           const SessionOptions& options,
                                                           size_t count) {
  if (count == 0) {
    return make_status(StatusCode::kInvalidArgument,
                       "SessionPool: expected at least 1 session, got 0");
  }
  if (options.pool != nullptr && count > 1) {
    return make_status(StatusCode::kInvalidArgument, "SessionPool: a caller-owned pool (",
                       options.pool_capacity, " bytes) cannot back ", count, " sessions");
  }
  std::unique_ptr<SessionPool> pool(new SessionPool());
  pool->model_ = model;
  for (size_t i = 0; i < count; ++i) {
    Expected<std::unique_ptr<Session>> session = Session::create(model, options);
    if (!session) return session.status().with_context(str_cat("SessionPool session ", i));
    pool->sessions_.push_back(std::move(session).value());
  }
  const size_t per_session = pool->sessions_.front()->plan().pool_bytes;
  if (per_session != 0 && count > std::numeric_limits<size_t>::max() / per_session) {
    return make_status(StatusCode::kOutOfRange, "SessionPool: ", count, " sessions x ", per_session,
                       " pool bytes overflows size_t");
  }
  pool->pool_bytes_ = count * per_session;
  // Reverse order so that session 0 is handed out first.
  for (size_t i = count; i > 0; --i) pool->free_.push_back(i - 1);
  return pool;
}

Expected<SessionPool::Lease> SessionPool::acquire(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!returned_.wait_for(lock, timeout, [this] { return !free_.empty(); })) {
    return make_status(StatusCode::kResourceExhausted, "busy: all ", sessions_.size(),
                       " sessions in use for ", timeout.count(), " ms");
  }
  const size_t index = free_.back();
  free_.pop_back();
  return Lease(this, index);
}

size_t SessionPool::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.size() - free_.size();
}

void SessionPool::give_back(size_t index) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(index);
  }
  returned_.notify_one();
}

}  // namespace onepool
