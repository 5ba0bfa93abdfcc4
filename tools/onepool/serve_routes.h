// InferenceServer: the KServe v2 / Open Inference Protocol HTTP routes over one SessionPool, or
// over DynamicSessions that take every input shape inside declared ranges (serve_slots.h).
//
// Routes: GET /v2/health/live, /v2/health/ready, /v2, /v2/models/{m}[/versions/{v}],
// .../ready, .../config, .../stats, /metrics; POST /v2/models/{m}[/versions/{v}]/infer (JSON
// tensors or Triton binary tensor data). Every error is a JSON body {"error": "..."} with 400
// (bad request), 404 (unknown model or path), 405 (known path, other method; with Allow), 408
// (request not received in time), 411 (no Content-Length), 413 (body over the limit), 415
// (multipart body), 431 (headers too large), 503 (all Sessions busy for longer than the queue
// timeout, or too many connections or buffered bytes) or 500; no handler lets an exception
// escape, and the server keeps serving after any error.
//
// Connections are read by an event-driven front (serve_front.h): a request reaches a worker
// thread only once it is complete, so slow or idle clients hold no thread, and health probes
// have their own workers.
//
// Thread-safety: bind(), serve() and stop() may be called from different threads (stop() from
// any thread but a request handler, while serve() blocks); requests are handled on internal
// threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "onepool/session_pool.h"
#include "onepool/status.h"
#include "tools/onepool/serve_slots.h"

namespace onepool::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                                ///< 0..65535; 0: any free port (see bind())
  std::string model_name;                         ///< the {m} in the routes; required
  size_t max_body_bytes = 64u << 20;              ///< larger request bodies get 413
  std::chrono::milliseconds queue_timeout{1000};  ///< wait for a Session, then 503
  size_t http_threads = 0;  ///< workers for POST (inference); 0: max(8, 2 × sessions)
  std::chrono::milliseconds header_timeout{5000};      ///< request line + headers, then 408
  std::chrono::milliseconds read_timeout{30000};       ///< the whole request, then 408
  std::chrono::milliseconds write_timeout{30000};      ///< the whole response, then closed
  std::chrono::milliseconds keep_alive_timeout{5000};  ///< idle connection, then closed
  size_t max_connections = 512;                        ///< more at once get 503
};

class InferenceServerImpl;

class InferenceServer {
 public:
  /// Takes ownership of `pool`; fails on an empty model name, a zero body limit, a port outside
  /// 0..65535 or a non-positive time-out.
  static Expected<std::unique_ptr<InferenceServer>> create(std::unique_ptr<SessionPool> pool,
                                                           const ServeOptions& options);
  /// The same over any slots (fixed shapes or shape ranges).
  static Expected<std::unique_ptr<InferenceServer>> create(std::unique_ptr<InferenceSlots> slots,
                                                           const ServeOptions& options);
  ~InferenceServer();  // stops serving
  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  /// Binds host:port (any free port when port is 0) and returns the bound port.
  Expected<int> bind();
  /// Serves until stop(); call after bind(). Blocks the calling thread.
  Status serve();
  /// Makes serve() return; safe from any thread.
  void stop();
  /// True once serve() accepts connections.
  bool is_running() const;

 private:
  explicit InferenceServer(std::unique_ptr<InferenceServerImpl> impl);
  std::unique_ptr<InferenceServerImpl> impl_;
};

}  // namespace onepool::serve
