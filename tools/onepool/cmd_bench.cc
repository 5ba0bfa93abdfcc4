// onepool bench: flags checked up front, warm-up by count and time, timed runs on one or more
// Sessions (--streams), latency statistics with a stability warning, throughput over the wall
// time, node profiles, a JSON report and the raw times; shape sweeps in cmd_bench_sweep.cc.
#include "tools/onepool/cmd_bench.h"

#include <cstdio>

#include "onepool/version.h"
#include "tools/onepool/bench_report.h"
#include "tools/onepool/bench_streams.h"
#include "tools/onepool/cli_common.h"
#include "tools/onepool/cmd_bench_sweep.h"
#include "tools/onepool/flag_checks.h"
#include "tools/onepool/host_info.h"
#include "tools/onepool/latency_stats.h"
#include "tools/onepool/memory_report.h"
#include "tools/onepool/npy_shapes.h"
#include "tools/onepool/profile_report.h"
#include "tools/onepool/run_inputs.h"

namespace onepool::cli {

namespace {

struct BenchFlags {
  ModelFlags model;
  InputFlags input;
  RunBudget budget;
  int streams = 1;
  std::string report;
  std::string export_times;
  SweepFlags sweep;
  std::string profile_json;  // Chrome trace of the profiled runs
};

// Runs traced into --profile-json at most (the trace grows with runs x nodes).
constexpr size_t kMaxTracedRuns = 20;

Status check_combinations(const BenchFlags& flags) {
  const bool sweep = !flags.sweep.shapes_file.empty();
  if (flags.streams > 1 && (flags.model.profile || !flags.profile_json.empty())) {
    return make_status(StatusCode::kInvalidArgument,
                       "--profile and --profile-json time one Session: drop --streams");
  }
  if (flags.budget.paced && (flags.streams > 1 || flags.budget.duration_s > 0 || sweep)) {
    return make_status(StatusCode::kInvalidArgument, "--paced times one Session on request: drop ",
                       sweep               ? "--shapes-sweep"
                       : flags.streams > 1 ? "--streams"
                                           : "--duration");
  }
  if (sweep && (flags.streams > 1 || !flags.export_times.empty())) {
    return make_status(StatusCode::kInvalidArgument,
                       "--shapes-sweep runs one DynamicSession and prints its own times: drop ",
                       flags.streams > 1 ? "--streams" : "--export-times");
  }
  return Status::ok();
}

// Every numeric flag, before anything is loaded.
Status check_bench_flags(const BenchFlags& flags) {
  ONEPOOL_RETURN_IF_ERROR(check_model_flags(flags.model));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--iterations", flags.budget.iterations, 1));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--warmup", flags.budget.warmup, 0));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--warmup-ms", flags.budget.warmup_ms, 0));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--duration", flags.budget.duration_s, 0));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--streams", flags.streams, 1));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--runs-per-shape", flags.sweep.runs_per_shape, 1));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--cache", static_cast<double>(flags.sweep.cache), 1));
  return check_combinations(flags);
}

void print_setup(const BenchFlags& flags) {
  std::printf("machine:   %s, %d logical cores | onepool %s\n", cpu_model_name().c_str(),
              logical_cores(), ONEPOOL_VERSION_STRING);
  if (flags.streams == 1) return;
  if (flags.model.shared_threads) {
    std::printf(
        "streams:   %d Sessions of one Model (weights shared, a pool each) on %d threads, "
        "sharing one pool of %d CPU thread(s)\n",
        flags.streams, flags.streams, flags.model.threads);
    return;
  }
  std::printf(
      "streams:   %d Sessions of one Model (weights shared, a pool each) on %d threads, "
      "%d CPU thread(s) per Session\n",
      flags.streams, flags.streams, flags.model.threads);
}

void print_stream_lines(const BenchSummary& summary) {
  for (size_t i = 0; i < summary.per_stream.size(); ++i) {
    const LatencyStats& s = summary.per_stream[i];
    std::printf("stream %-3zu p50 %s | p99 %s | %zu runs\n", i, format_duration(s.p50).c_str(),
                format_duration(s.p99).c_str(), s.iterations);
  }
}

void print_results(const BenchSummary& summary) {
  const TimedRuns& first = summary.runs->streams.front();
  std::printf("first run: %s | warm-up: %d runs in %s\n",
              format_duration(first.first_run_ms).c_str(), first.warmup_runs,
              format_duration(first.warmup_ms).c_str());
  if (summary.per_stream.size() > 1) print_stream_lines(summary);
  std::printf("%s%s\n", summary.per_stream.size() > 1 ? "all streams:\n" : "",
              format_latency(summary.all).c_str());
  const std::string warning = stability_warning(summary.all);
  if (!warning.empty()) {
    std::fflush(stdout);
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
}

BenchSummary summarize(const BenchFlags& flags, const LoadedSession& loaded,
                       const StreamsRun& runs) {
  BenchSummary summary;
  summary.loaded = &loaded;
  summary.model_path = flags.model.model_path;
  summary.threads = flags.model.threads;
  summary.budget = flags.budget;
  summary.runs = &runs;
  std::vector<double> all_ms;
  for (const TimedRuns& stream : runs.streams) {
    summary.per_stream.push_back(compute_latency_stats(stream.samples_ms, stream.elapsed_s));
    all_ms.insert(all_ms.end(), stream.samples_ms.begin(), stream.samples_ms.end());
  }
  const double elapsed_s = runs.streams.size() == 1 ? runs.streams[0].elapsed_s : runs.elapsed_s;
  summary.all = compute_latency_stats(std::move(all_ms), elapsed_s);
  return summary;
}

Status write_files(const BenchFlags& flags, const BenchSummary& summary) {
  if (!flags.profile_json.empty()) {
    const std::vector<ProfiledRun>& traced = summary.runs->streams.front().traced;
    ONEPOOL_RETURN_IF_ERROR(
        write_chrome_trace(flags.profile_json, summary.loaded->session->profile(), traced));
    std::printf("trace:     %zu runs written to %s (chrome://tracing, Perfetto)\n", traced.size(),
                flags.profile_json.c_str());
  }
  if (!flags.export_times.empty()) {
    ONEPOOL_RETURN_IF_ERROR(write_times(flags.export_times, *summary.runs));
    std::printf("times:     %zu latencies written to %s\n", summary.all.iterations,
                flags.export_times.c_str());
  }
  if (!flags.report.empty()) {
    ONEPOOL_RETURN_IF_ERROR(write_report(flags.report, summary));
    std::printf("report written to %s\n", flags.report.c_str());
  }
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
  ONEPOOL_ASSIGN_OR_RETURN(flags.model, with_npy_shapes(flags.model, flags.input.inputs));
  // Streams on threads of their own split the cores; streams sharing a pool share all of them.
  flags.model.threads =
      resolve_threads(flags.model.threads, flags.model.shared_threads ? 1 : flags.streams);
  ONEPOOL_ASSIGN_OR_RETURN(LoadedSession loaded, load_session(flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs,
                           gather_inputs(*loaded.model, flags.input));
  const std::vector<TensorView> input_views = views_of(inputs);
  print_setup(flags);
  ModelFlags extra_flags = flags.model;
  extra_flags.shared_threads = false;  // the streams join the first Session's pool instead
  ONEPOOL_ASSIGN_OR_RETURN(SessionOptions options, make_session_options(extra_flags));
  options.thread_pool = loaded.thread_pool;
  const size_t traced = flags.profile_json.empty() ? 0 : kMaxTracedRuns;
  ONEPOOL_ASSIGN_OR_RETURN(StreamsRun runs, run_streams(loaded, options, flags.streams, input_views,
                                                        flags.budget, traced));
  const BenchSummary summary = summarize(flags, loaded, runs);
  if (flags.model.profile) print_profile(loaded.session->profile(), summary.all.mean);
  if (flags.model.verbosity > 0) print_output_summaries(*loaded.model, runs.outputs, 8);
  print_results(summary);
  print_memory_summary(loaded, static_cast<size_t>(flags.streams));
  return write_files(flags, summary);
}

void add_sweep_flags(CLI::App& bench, SweepFlags& sweep) {
  bench.add_option("--shapes-sweep", sweep.shapes_file,
                   "one shape set per line (--shapes syntax): run them all on one session "
                   "within the --shapes ranges, e.g. x:1x3x[320..1280:32]x[320..1280:32]");
  bench
      .add_option("--mode", sweep.mode,
                  "sweep pool: static (planned at the top of the ranges) or dynamic")
      ->check(CLI::IsMember({"static", "dynamic"}))
      ->capture_default_str();
  bench.add_option("--cache", sweep.cache, "sweep: specializations kept")->capture_default_str();
  bench.add_option("--sweep-io", sweep.io_dir,
                   "sweep: line i reads DIR/<i>/inputs/<input>.bin when present and saves "
                   "its outputs to DIR/<i>/onepool");
  bench.add_option("--runs-per-shape", sweep.runs_per_shape, "sweep: timed runs of each shape")
      ->capture_default_str();
}

void add_timing_flags(CLI::App& bench, BenchFlags& flags) {
  bench.add_option("--warmup", flags.budget.warmup, "untimed runs after the first")
      ->capture_default_str();
  bench
      .add_option("--warmup-ms", flags.budget.warmup_ms,
                  "and warm up until this many milliseconds have passed")
      ->capture_default_str();
  bench.add_option("--iterations", flags.budget.iterations, "timed runs (per stream; minimum)")
      ->capture_default_str();
  bench.add_option("--duration", flags.budget.duration_s,
                   "and time runs for at least this "
                   "many seconds");
  bench
      .add_option("--streams", flags.streams,
                  "Sessions of one Model run at once, one thread each (--threads 0 shares the "
                  "cores among them)")
      ->capture_default_str();
  bench.add_flag("--paced", flags.budget.paced,
                 "after the warm-up, run on request: each line N on stdin times N runs and "
                 "prints 'paced: MS ...'; end of stdin ends the timing (--iterations unused)");
  bench.add_flag("--shared-threads", flags.model.shared_threads,
                 "the --streams Sessions share one pool of --threads threads (0 = all cores) "
                 "instead of each starting its own");
}

}  // namespace

void register_bench_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* bench = app.add_subcommand("bench", "measure latency percentiles and throughput");
  add_model_flags(*bench, flags->model);
  add_input_flags(*bench, flags->input);
  add_timing_flags(*bench, *flags);
  bench->add_option("--report", flags->report, "write a JSON report");
  bench->add_option("--export-times", flags->export_times,
                    "write every timed run's latency in ms: one per line, or JSON for *.json");
  add_sweep_flags(*bench, flags->sweep);
  bench->add_flag("--profile", flags->model.profile,
                  "time every node: per-node table sorted by time, and per op type");
  bench->add_option("--profile-json", flags->profile_json,
                    "write Chrome trace events of the first timed runs (implies node timing)");
  bench->callback([flags, &exit_code] {
    if (Status usage = check_bench_flags(*flags); !usage.is_ok()) {
      exit_code = report_usage_error(usage);
      return;
    }
    if (!flags->profile_json.empty()) flags->model.profile = true;
    const Status status = run_bench(*flags);
    exit_code = status.is_ok() ? 0 : report_error(status);
  });
}

}  // namespace onepool::cli
