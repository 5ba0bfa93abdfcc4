// onepool bench: warm-up, timed runs, latency percentiles, throughput, an optional JSON report,
// node profiles, and shape sweeps (cmd_bench_sweep.cc).
#include "tools/onepool/cmd_bench.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/onepool/cli_common.h"
#include "tools/onepool/cmd_bench_sweep.h"
#include "tools/onepool/latency_stats.h"
#include "tools/onepool/memory_report.h"
#include "tools/onepool/profile_report.h"
#include "tools/onepool/run_inputs.h"

namespace onepool::cli {

namespace {

struct BenchFlags {
  ModelFlags model;
  InputFlags input;
  int warmup = 5;
  int iterations = 50;
  double duration_s = 0;
  std::string report;
  SweepFlags sweep;
  std::string profile_json;  // Chrome trace of the profiled runs
};

// Runs traced into --profile-json at most (the trace grows with runs x nodes).
constexpr size_t kMaxTracedRuns = 20;

struct TimedRuns {
  double first_run_ms = 0;
  std::vector<double> samples_ms;
  std::vector<ProfiledRun> traced;  // --profile-json: the first timed runs' timelines
};

// Appends the last run's node timeline (read between runs: profile() allocates).
void trace_last_run(const Session& session, double start_us, TimedRuns& runs) {
  const SessionProfile profile = session.profile();
  ProfiledRun run;
  run.start_us = start_us;
  for (const NodeProfile& node : profile.nodes) {
    run.node_start_ms.push_back(node.last_start_ms);
    run.node_ms.push_back(node.last_ms);
  }
  runs.traced.push_back(std::move(run));
}

// Runs warmup + measured iterations (at least `iterations`, and until `duration_s` passes).
Expected<TimedRuns> timed_runs(Session& session, std::span<const TensorView> inputs,
                               std::span<const TensorView> outputs, const BenchFlags& flags) {
  TimedRuns runs;
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < std::max(1, flags.warmup + 1); ++i) {
    const auto start = Clock::now();
    ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
    if (i == 0)
      runs.first_run_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
  session.reset_profile();  // the profile covers the timed runs only
  const bool tracing = !flags.profile_json.empty();
  const auto begin = Clock::now();
  for (int i = 0;; ++i) {
    const double elapsed_s = std::chrono::duration<double>(Clock::now() - begin).count();
    if (i >= flags.iterations && elapsed_s >= flags.duration_s) break;
    const auto start = Clock::now();
    ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
    runs.samples_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (tracing && runs.traced.size() < kMaxTracedRuns) {
      trace_last_run(session, std::chrono::duration<double, std::micro>(start - begin).count(),
                     runs);
    }
  }
  return runs;
}

Status write_report(const std::string& path, const LoadedSession& loaded, const TimedRuns& runs,
                    const LatencyStats& stats, const BenchFlags& flags) {
  const Plan& plan = loaded.session->plan();
  const SessionTimings& timings = loaded.session->timings();
  nlohmann::json report = {
      {"schema_version", 1},
      {"model", flags.model.model_path},
      {"device", loaded.session->device().to_string()},
      {"threads", flags.model.threads},
      {"latency_ms",
       {{"min", stats.min},
        {"mean", stats.mean},
        {"p50", stats.p50},
        {"p90", stats.p90},
        {"p95", stats.p95},
        {"p99", stats.p99},
        {"max", stats.max}}},
      {"iterations", stats.iterations},
      {"throughput_per_s", stats.throughput_per_s},
      {"pool_bytes", plan.pool_bytes},
      {"lower_bound_bytes", plan.lower_bound_bytes},
      {"naive_bytes", plan.naive_bytes},
      {"weights_bytes", loaded.model->weights_bytes()},
      {"phases_ms",
       {{"load", loaded.load_ms},
        {"prepare", timings.prepare_ms},
        {"plan", timings.plan_ms},
        {"allocate", timings.allocate_ms},
        {"session", loaded.session_ms},
        {"first_run", runs.first_run_ms}}},
  };
  std::ofstream out(path);
  out << report.dump(2) << "\n";
  if (!out) return make_status(StatusCode::kNotFound, "cannot write report '", path, "'");
  return Status::ok();
}

Status run_bench(const BenchFlags& given_flags) {
  if (!given_flags.sweep.shapes_file.empty()) {
    SweepFlags sweep = given_flags.sweep;
    sweep.report = given_flags.report;
    return run_shape_sweep(given_flags.model, sweep, given_flags.input.seed);
  }
  BenchFlags flags = given_flags;
  ONEPOOL_ASSIGN_OR_RETURN(flags.model, with_ranges_at_top(given_flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(LoadedSession loaded, load_session(flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs,
                           gather_inputs(*loaded.model, flags.input));
  std::vector<HostTensor> outputs = make_output_tensors(*loaded.model);
  std::vector<TensorView> input_views = views_of(inputs);
  std::vector<TensorView> output_views = views_of(outputs);
  ONEPOOL_ASSIGN_OR_RETURN(TimedRuns runs,
                           timed_runs(*loaded.session, input_views, output_views, flags));
  const LatencyStats stats = compute_latency_stats(runs.samples_ms);
  if (flags.model.profile) print_profile(loaded.session->profile(), stats.mean);
  if (!flags.profile_json.empty()) {
    ONEPOOL_RETURN_IF_ERROR(
        write_chrome_trace(flags.profile_json, loaded.session->profile(), runs.traced));
    std::printf("trace:     %zu runs written to %s (chrome://tracing, Perfetto)\n",
                runs.traced.size(), flags.profile_json.c_str());
  }
  std::printf("first run: %.3f ms\n", runs.first_run_ms);
  if (flags.model.verbosity > 0) print_output_summaries(*loaded.model, outputs, 8);
  std::printf("%s\n", format_latency(stats).c_str());
  print_memory_summary(loaded);
  if (!flags.report.empty()) {
    ONEPOOL_RETURN_IF_ERROR(write_report(flags.report, loaded, runs, stats, flags));
    std::printf("report written to %s\n", flags.report.c_str());
  }
  return Status::ok();
}

}  // namespace

void register_bench_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* bench = app.add_subcommand("bench", "measure latency percentiles and throughput");
  add_model_flags(*bench, flags->model);
  add_input_flags(*bench, flags->input);
  bench->add_option("--warmup", flags->warmup, "untimed iterations")->capture_default_str();
  bench->add_option("--iterations", flags->iterations, "timed iterations (minimum)")
      ->capture_default_str();
  bench->add_option("--duration", flags->duration_s, "run at least this many seconds");
  bench->add_option("--report", flags->report, "write a JSON report");
  bench->add_option("--shapes-sweep", flags->sweep.shapes_file,
                    "one shape set per line (--shapes syntax): run them all on one session "
                    "within the --shapes ranges, e.g. x:1x3x[320..1280:32]x[320..1280:32]");
  bench
      ->add_option("--mode", flags->sweep.mode,
                   "sweep pool: static (planned at the top of the ranges) or dynamic")
      ->check(CLI::IsMember({"static", "dynamic"}))
      ->capture_default_str();
  bench->add_option("--cache", flags->sweep.cache, "sweep: specializations kept")
      ->capture_default_str();
  bench->add_option("--sweep-io", flags->sweep.io_dir,
                    "sweep: line i reads DIR/<i>/inputs/<input>.bin when present and saves "
                    "its outputs to DIR/<i>/onepool");
  bench
      ->add_option("--runs-per-shape", flags->sweep.runs_per_shape,
                   "sweep: timed runs of each shape")
      ->capture_default_str();
  bench->add_flag("--profile", flags->model.profile,
                  "time every node: per-node table sorted by time, and per op type");
  bench->add_option("--profile-json", flags->profile_json,
                    "write Chrome trace events of the first timed runs (implies node timing)");
  bench->callback([flags, &exit_code] {
    if (!flags->profile_json.empty()) flags->model.profile = true;
    const Status status = run_bench(*flags);
    exit_code = status.is_ok() ? 0 : report_error(status);
  });
}

}  // namespace onepool::cli
