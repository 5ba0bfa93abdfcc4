// HttpFront: an httplib::Server whose connections wait in one epoll thread until a whole request
// (headers and body) has arrived; only then does a worker thread run httplib on it.
//
// Why: httplib gives each connection a worker from accept to close, and its read time-out is per
// recv(), so a client sending one header byte per 0.2 s, a POST that never sends its body, or an
// idle keep-alive connection each hold a worker; as many of them as workers stall the server,
// health probes included. Here such a connection costs a descriptor and a buffer until its
// deadline, then gets 408 and is closed.
//
// Step 1. httplib accepts (its loop; bind() callers then raise the listen backlog to SOMAXCONN).
// Step 2. The front thread reads without blocking until the request is complete. It answers by
//         itself, and closes, on: headers not complete within header_timeout or the request
//         within read_timeout (408), a missing/invalid Content-Length for a body (400, 411), a
//         body over max_body_bytes (413), headers over max_header_bytes (431), too many
//         connections or too many body bytes buffered at once (503).
// Step 3. A worker of the request's lane runs httplib's request processing on the buffered
//         bytes and writes the response within write_timeout; a keep-alive connection then
//         goes back to step 2. Lanes: POST (inference) and everything else (health, metadata,
//         metrics), so a probe never queues behind inference requests.
//
// Cost: one front thread, `post_threads + other_threads` workers; memory bounded by
// max_connections × max_header_bytes plus max_buffered_bytes of bodies.
//
// Ownership and thread-safety: the front owns every accepted socket until it closes it.
// Register handlers before serving; call stop_connections() from any thread but a worker; the
// destructor stops everything.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace onepool::serve {

struct HttpFrontOptions {
  std::chrono::milliseconds header_timeout{5000};      ///< request line and headers
  std::chrono::milliseconds read_timeout{30000};       ///< the whole request, body included
  std::chrono::milliseconds write_timeout{30000};      ///< the whole response
  std::chrono::milliseconds keep_alive_timeout{5000};  ///< idle between two requests
  size_t max_header_bytes = 64u << 10;
  size_t max_body_bytes = 64u << 20;
  size_t max_buffered_bytes = 256u << 20;  ///< bodies held by the front and workers at once
  size_t max_connections = 512;            ///< open connections; more get 503
  size_t post_threads = 8;
  size_t other_threads = 2;
  /// Called (on the front thread) for every response the front writes itself.
  std::function<void(int status, double seconds)> on_front_response;
};

class HttpFront : public httplib::Server {
 public:
  using Clock = std::chrono::steady_clock;

  explicit HttpFront(HttpFrontOptions options);
  ~HttpFront() override;
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  /// After bind_to_port()/bind_to_any_port(): httplib listens with a backlog of 5, which drops
  /// connections under a burst; this re-listens with SOMAXCONN. False if not bound.
  bool raise_backlog();
  /// Closes every connection and joins the front and the workers; idempotent.
  void stop_connections();
  /// On a handler's thread: when the first byte of the request being handled arrived.
  static Clock::time_point request_start();

 private:
  struct Connection;
  class Lane;
  // httplib calls this (from its accept loop, through an inline task queue) for each accepted
  // socket: the socket joins the front instead of occupying a worker.
  bool process_and_close_socket(socket_t sock) override;

  void front_loop();
  void adopt(std::unique_ptr<Connection> connection, Clock::time_point now);
  void read_ready(Connection& connection, Clock::time_point now);
  // Step 2: dispatches `connection` once it holds a whole request, or answers it (reject).
  void advance(Connection& connection, Clock::time_point now);
  void reject(Connection& connection, int status, const std::string& message,
              Clock::time_point now);
  void expire(Clock::time_point now);
  void dispatch(int fd);
  void close_connection(int fd);
  void run_request(std::unique_ptr<Connection> connection);
  void wake() const;

  HttpFrontOptions options_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread front_;
  std::unique_ptr<Lane> post_lane_;
  std::unique_ptr<Lane> other_lane_;

  std::mutex mutex_;                                   // guards the four members below
  std::vector<std::unique_ptr<Connection>> incoming_;  // accepted or back from a worker
  bool stopping_ = false;
  size_t buffered_bytes_ = 0;
  size_t open_connections_ = 0;  // in the front, queued or being answered

  // Front thread only.
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;
};

}  // namespace onepool::serve
