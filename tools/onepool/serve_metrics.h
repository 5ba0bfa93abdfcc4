// Serving metrics: per-status request counters, a latency histogram and inference statistics,
// rendered as Prometheus text (GET /metrics) and Triton-style statistics (GET .../stats).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace onepool::serve {

/// Nanoseconds spent in each phase of one successful inference.
struct InferencePhases {
  uint64_t queue_ns = 0;   ///< waiting for a free Session
  uint64_t input_ns = 0;   ///< decoding the request into tensors
  uint64_t infer_ns = 0;   ///< Session::run
  uint64_t output_ns = 0;  ///< encoding the response
  uint64_t total_ns = 0;
};

/// Values read from the SessionPool when metrics are rendered.
struct PoolGauges {
  size_t pool_bytes = 0;
  size_t sessions = 0;
  size_t sessions_busy = 0;
};

/// Thread-safe counters (one mutex; every update is a few additions).
class ServeMetrics {
 public:
  /// Upper bounds (seconds) of the latency histogram buckets; +Inf is implicit.
  static constexpr std::array<double, 14> kBucketSeconds = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0};

  /// An HTTP request finished with `status` after `seconds`.
  void record_request(int status, double seconds);
  /// An inference request succeeded.
  void record_success(const InferencePhases& phases);
  /// An inference request failed after `total_ns`.
  void record_failure(uint64_t total_ns);

  /// Prometheus text exposition format 0.0.4.
  std::string prometheus_text(const PoolGauges& gauges) const;
  /// {"model_stats": [{name, version, inference_count, execution_count, inference_stats}]}.
  nlohmann::json triton_stats(const std::string& model_name) const;

 private:
  struct Duration {
    uint64_t count = 0;
    uint64_t ns = 0;
  };

  mutable std::mutex mutex_;
  std::map<int, uint64_t> requests_by_status_;
  std::array<uint64_t, kBucketSeconds.size() + 1> bucket_counts_{};  // last: above every bound
  double duration_sum_s_ = 0.0;
  uint64_t duration_count_ = 0;
  Duration success_, fail_, queue_, input_, infer_, output_;
  uint64_t last_inference_ms_ = 0;  // Unix epoch milliseconds
};

}  // namespace onepool::serve
