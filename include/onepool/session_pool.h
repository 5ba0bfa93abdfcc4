// SessionPool: a fixed number of Sessions over one shared Model, checked out per request.
//
// Usage:
//   auto pool = SessionPool::create(model, SessionOptions{}, 4);  // 4 pools, allocated once
//   auto lease = (*pool)->acquire(std::chrono::milliseconds(100));  // waits at most 100 ms
//   if (!lease) return lease.status();  // kResourceExhausted: every Session busy
//   Status status = lease->session().run(inputs, outputs);
//   // the Session goes back to the pool when `lease` leaves scope
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "onepool/model.h"
#include "onepool/session.h"
#include "onepool/status.h"

namespace onepool {

/// Owns `size()` Sessions of one Model (weights shared, one pool each) and lends them out one
/// request at a time with back-pressure. Thread-safe: acquire() may be called from any thread;
/// each leased Session is used by its holder alone. The SessionPool must outlive its Leases.
class SessionPool {
 public:
  /// Exclusive use of one Session until destroyed (RAII; move-only); then it goes back to the pool.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    Session& session() const;
    /// Which of the pool's Sessions this is (0 .. size()-1).
    size_t index() const { return index_; }

   private:
    friend class SessionPool;
    Lease(SessionPool* pool, size_t index) : pool_(pool), index_(index) {}
    void release();

    SessionPool* pool_ = nullptr;
    size_t index_ = 0;
  };

  /// Creates `count` (>= 1) Sessions with `options`; fails with the first Session's error, or
  /// kInvalidArgument for count 0 or a caller-owned pool shared by more than one Session.
  static Expected<std::unique_ptr<SessionPool>> create(std::shared_ptr<const Model> model,
                                                       const SessionOptions& options, size_t count);
  SessionPool(const SessionPool&) = delete;
  SessionPool& operator=(const SessionPool&) = delete;

  /// Waits up to `timeout` for a free Session; kResourceExhausted
  /// "busy: all N sessions in use for T ms" when none came free in time.
  Expected<Lease> acquire(std::chrono::milliseconds timeout);

  /// Number of Sessions.
  size_t size() const { return sessions_.size(); }
  /// Sessions leased out right now (a snapshot).
  size_t busy() const;
  /// Total pool memory: size() × plan().pool_bytes.
  size_t pool_bytes() const { return pool_bytes_; }
  /// The plan every Session shares in shape (the first Session's).
  const Plan& plan() const { return sessions_.front()->plan(); }
  /// The device every Session runs on.
  Device device() const { return sessions_.front()->device(); }
  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& shared_model() const { return model_; }

 private:
  SessionPool() = default;
  void give_back(size_t index);

  std::shared_ptr<const Model> model_;
  std::vector<std::unique_ptr<Session>> sessions_;
  size_t pool_bytes_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<size_t> free_;  // indices of idle Sessions (a stack: the warmest is reused first)
};

}  // namespace onepool
