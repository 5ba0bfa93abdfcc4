#include "tools/onepool/bench_report.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "onepool/version.h"
#include "tools/onepool/host_info.h"

namespace onepool::cli {

namespace {

nlohmann::json latency_json(const LatencyStats& s) {
  return {{"min", s.min}, {"mean", s.mean}, {"stddev", s.stddev}, {"cv", s.cv},  {"p50", s.p50},
          {"p90", s.p90}, {"p95", s.p95},   {"p99", s.p99},       {"max", s.max}};
}

nlohmann::json input_shapes_json(const Model& model) {
  nlohmann::json shapes = nlohmann::json::object();
  for (const TensorInfo& info : model.inputs()) {
    shapes[info.name] = std::vector<int64_t>(info.shape.begin(), info.shape.end());
  }
  return shapes;
}

nlohmann::json streams_json(const BenchSummary& summary) {
  nlohmann::json streams = nlohmann::json::array();
  for (const LatencyStats& s : summary.per_stream) {
    streams.push_back(
        {{"runs", s.iterations}, {"p50_ms", s.p50}, {"p99_ms", s.p99}, {"mean_ms", s.mean}});
  }
  return streams;
}

nlohmann::json phases_json(const BenchSummary& summary) {
  const LoadedSession& loaded = *summary.loaded;
  const SessionTimings& timings = loaded.session->timings();
  const TimedRuns& first = summary.runs->streams.front();
  return {{"load", loaded.load_ms},       {"prepare", timings.prepare_ms},
          {"plan", timings.plan_ms},      {"allocate", timings.allocate_ms},
          {"session", loaded.session_ms}, {"first_run", first.first_run_ms},
          {"warmup", first.warmup_ms},    {"timed", 1000 * summary.all.elapsed_s}};
}

// pool_bytes is one Session's pool (each stream has one); peak_rss_bytes is the process's VmHWM
// (null where unknown).
nlohmann::json memory_json(const LoadedSession& loaded) {
  const Plan& plan = loaded.session->plan();
  const std::optional<size_t> peak_rss = peak_rss_bytes();
  return {{"pool_bytes", plan.pool_bytes},
          {"lower_bound_bytes", plan.lower_bound_bytes},
          {"naive_bytes", plan.naive_bytes},
          {"weights_bytes", loaded.model->weights_bytes()},
          {"peak_rss_bytes", peak_rss ? nlohmann::json(*peak_rss) : nlohmann::json(nullptr)}};
}

Status write_text(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return make_status(StatusCode::kNotFound, "cannot write ", what, " '", path, "'");
  return Status::ok();
}

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", ms);
  return text;
}

}  // namespace

Status write_report(const std::string& path, const BenchSummary& summary) {
  const LoadedSession& loaded = *summary.loaded;
  nlohmann::json report = {
      {"schema_version", 1},
      {"onepool_version", ONEPOOL_VERSION_STRING},
      {"machine", {{"cpu", cpu_model_name()}, {"logical_cores", logical_cores()}}},
      {"model", summary.model_path},
      {"device", loaded.session->device().to_string()},
      {"input_shapes", input_shapes_json(*loaded.model)},
      {"threads", summary.threads},
      {"streams", summary.per_stream.size()},
      {"warmup", {{"runs", summary.budget.warmup}, {"ms", summary.budget.warmup_ms}}},
      {"latency_ms", latency_json(summary.all)},
      {"iterations", summary.all.iterations},
      {"throughput_per_s", summary.all.throughput_per_s},
      {"phases_ms", phases_json(summary)},
  };
  if (summary.per_stream.size() > 1) report["per_stream"] = streams_json(summary);
  report.update(memory_json(loaded));  // top-level keys, as before
  return write_text(path, report.dump(2) + "\n", "report");
}

Status write_times(const std::string& path, const StreamsRun& runs) {
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (json) {
    nlohmann::json streams = nlohmann::json::array();
    for (const TimedRuns& stream : runs.streams) streams.push_back(stream.samples_ms);
    return write_text(path, nlohmann::json{{"unit", "ms"}, {"streams", streams}}.dump() + "\n",
                      "times");
  }
  std::string text;
  for (size_t i = 0; i < runs.streams.size(); ++i) {
    for (double ms : runs.streams[i].samples_ms) {
      text += runs.streams.size() > 1 ? std::to_string(i) + " " + ms_text(ms) : ms_text(ms);
      text += "\n";
    }
  }
  return write_text(path, text, "times");
}

}  // namespace onepool::cli
