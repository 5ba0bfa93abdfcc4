// The in-process server tests' shared parts: the generated mlp.onnx at batch 1, and an
// InferenceServer started on 127.0.0.1 (any free port) on a thread of its own.
#pragma once

#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "onepool/model.h"
#include "tools/onepool/serve_routes.h"

namespace onepool::serve {

/// mlp.onnx of ONEPOOL_MODELS_DIR with batch=1, or nullptr (said with a MESSAGE) when missing.
inline std::shared_ptr<const Model> load_mlp_batch1() {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  const std::string path = str_cat(dir ? dir : "", "/mlp.onnx");
  if (dir == nullptr || !std::filesystem::exists(path)) {
    MESSAGE("skipped: " << path << " not found (set ONEPOOL_MODELS_DIR)");
    return nullptr;
  }
  LoadOptions options;
  options.dims.push_back({"batch", 1});
  auto model = Model::load(path, options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

/// `made` (InferenceServer::create's result) bound to a free port and serving on its own thread
/// until destruction, which stops and joins it.
class ServerThread {
 public:
  explicit ServerThread(Expected<std::unique_ptr<InferenceServer>> made) {
    REQUIRE_MESSAGE(made.has_value(), made.status().to_string());
    server_ = std::move(*made);
    auto bound = server_->bind();
    REQUIRE_MESSAGE(bound.has_value(), bound.status().to_string());
    port_ = *bound;
    thread_ = std::thread([this] { (void)server_->serve(); });
    for (int i = 0; i < 500 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(server_->is_running());
  }
  ~ServerThread() {
    server_->stop();
    thread_.join();
  }
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;

  int port() const { return port_; }
  /// A client of this server with 60 s read and write time-outs.
  httplib::Client client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
    client.set_write_timeout(60, 0);
    return client;
  }

 private:
  std::unique_ptr<InferenceServer> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace onepool::serve
