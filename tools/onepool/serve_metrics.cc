#include "tools/onepool/serve_metrics.h"

#include <chrono>
#include <sstream>

namespace onepool::serve {

namespace {

uint64_t unix_ms_now() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

void add(uint64_t& count, uint64_t& ns, uint64_t value_ns) {
  ++count;
  ns += value_ns;
}

}  // namespace

void ServeMetrics::record_request(int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_by_status_[status];
  size_t bucket = 0;
  while (bucket < kBucketSeconds.size() && seconds > kBucketSeconds[bucket]) ++bucket;
  ++bucket_counts_[bucket];
  duration_sum_s_ += seconds;
  ++duration_count_;
}

void ServeMetrics::record_success(const InferencePhases& phases) {
  std::lock_guard<std::mutex> lock(mutex_);
  add(success_.count, success_.ns, phases.total_ns);
  add(queue_.count, queue_.ns, phases.queue_ns);
  add(input_.count, input_.ns, phases.input_ns);
  add(infer_.count, infer_.ns, phases.infer_ns);
  add(output_.count, output_.ns, phases.output_ns);
  last_inference_ms_ = unix_ms_now();
}

void ServeMetrics::record_failure(uint64_t total_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  add(fail_.count, fail_.ns, total_ns);
}

std::string ServeMetrics::prometheus_text(const PoolGauges& gauges) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  out << "# HELP onepool_requests_total HTTP requests by response status.\n"
      << "# TYPE onepool_requests_total counter\n";
  for (const auto& [status, count] : requests_by_status_) {
    out << "onepool_requests_total{status=\"" << status << "\"} " << count << "\n";
  }
  out << "# HELP onepool_request_duration_seconds HTTP request latency.\n"
      << "# TYPE onepool_request_duration_seconds histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBucketSeconds.size(); ++i) {
    cumulative += bucket_counts_[i];
    out << "onepool_request_duration_seconds_bucket{le=\"" << kBucketSeconds[i] << "\"} "
        << cumulative << "\n";
  }
  cumulative += bucket_counts_.back();
  out << "onepool_request_duration_seconds_bucket{le=\"+Inf\"} " << cumulative << "\n"
      << "onepool_request_duration_seconds_sum " << duration_sum_s_ << "\n"
      << "onepool_request_duration_seconds_count " << duration_count_ << "\n";
  out << "# HELP onepool_pool_bytes Bytes of all Sessions' static pools together.\n"
      << "# TYPE onepool_pool_bytes gauge\n"
      << "onepool_pool_bytes " << gauges.pool_bytes << "\n"
      << "# HELP onepool_sessions Sessions in the pool.\n"
      << "# TYPE onepool_sessions gauge\n"
      << "onepool_sessions " << gauges.sessions << "\n"
      << "# HELP onepool_sessions_busy Sessions running a request now.\n"
      << "# TYPE onepool_sessions_busy gauge\n"
      << "onepool_sessions_busy " << gauges.sessions_busy << "\n";
  return out.str();
}

nlohmann::json ServeMetrics::triton_stats(const std::string& model_name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto duration = [](const Duration& d) {
    return nlohmann::json{{"count", d.count}, {"ns", d.ns}};
  };
  nlohmann::json stats = {
      {"success", duration(success_)},     {"fail", duration(fail_)},
      {"queue", duration(queue_)},         {"compute_input", duration(input_)},
      {"compute_infer", duration(infer_)}, {"compute_output", duration(output_)}};
  nlohmann::json model = {{"name", model_name},
                          {"version", "1"},
                          {"last_inference", last_inference_ms_},
                          {"inference_count", success_.count},
                          {"execution_count", success_.count},
                          {"inference_stats", std::move(stats)}};
  return {{"model_stats", nlohmann::json::array({std::move(model)})}};
}

}  // namespace onepool::serve
