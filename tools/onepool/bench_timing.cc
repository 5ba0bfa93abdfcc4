#include "tools/onepool/bench_timing.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace onepool::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

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

// One timed run, counted and traced.
Status timed_run(Session& session, std::span<const TensorView> inputs,
                 std::span<const TensorView> outputs, Clock::time_point begin, size_t traced_runs,
                 RunCounter& counter, TimedRuns& runs) {
  const auto start = Clock::now();
  ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
  runs.samples_ms.push_back(ms_between(start, Clock::now()));
  counter.fetch_add(1, std::memory_order_relaxed);
  if (runs.traced.size() < traced_runs) {
    trace_last_run(session, 1000 * ms_between(begin, start), runs);
  }
  return Status::ok();
}

// The run count of one paced request ("N" and a newline, blanks around it allowed).
Expected<long> parse_paced_request(const char* line) {
  char* end = nullptr;
  errno = 0;
  const long count = std::strtol(line, &end, 10);
  while (end != nullptr && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) ++end;
  if (end == line || end == nullptr || *end != '\0' || errno != 0 || count < 1 ||
      count > kMaxPacedRuns) {
    std::string text(line);  // only for the message: a good line allocates nothing
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return make_status(StatusCode::kInvalidArgument,
                       "--paced: each line of stdin must be a run count from 1 to ", kMaxPacedRuns,
                       ", got '", text, "'");
  }
  return count;
}

// Answers each request on stdin with its runs' milliseconds, until stdin ends.
Status measure_paced(Session& session, std::span<const TensorView> inputs,
                     std::span<const TensorView> outputs, size_t traced_runs, RunCounter& counter,
                     TimedRuns& runs) {
  const auto begin = Clock::now();
  char line[64];
  while (std::fgets(line, sizeof line, stdin) != nullptr) {
    if (std::strchr(line, '\n') == nullptr && !std::feof(stdin)) {
      return make_status(StatusCode::kInvalidArgument,
                         "--paced: a line of stdin is longer than a run count");
    }
    ONEPOOL_ASSIGN_OR_RETURN(const long count, parse_paced_request(line));
    const size_t first = runs.samples_ms.size();
    for (long i = 0; i < count; ++i) {
      ONEPOOL_RETURN_IF_ERROR(
          timed_run(session, inputs, outputs, begin, traced_runs, counter, runs));
    }
    std::printf("paced:");
    for (size_t i = first; i < runs.samples_ms.size(); ++i) {
      std::printf(" %.6f", runs.samples_ms[i]);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (runs.samples_ms.empty()) {
    return make_status(StatusCode::kInvalidArgument,
                       "--paced: stdin ended before any run was asked for");
  }
  runs.begin = begin;
  runs.end = Clock::now();
  // The time spent running, not waiting for requests: throughput stays runs per second of runs.
  double busy_ms = 0;
  for (const double ms : runs.samples_ms) busy_ms += ms;
  runs.elapsed_s = busy_ms / 1000;
  return Status::ok();
}

}  // namespace

Status warm_up(Session& session, std::span<const TensorView> inputs,
               std::span<const TensorView> outputs, const RunBudget& budget, TimedRuns& runs) {
  auto start = Clock::now();
  ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
  auto now = Clock::now();
  runs.first_run_ms = ms_between(start, now);
  start = now;
  while (runs.warmup_runs < budget.warmup || ms_between(start, now) < budget.warmup_ms) {
    ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
    now = Clock::now();
    ++runs.warmup_runs;
  }
  runs.warmup_ms = ms_between(start, now);
  session.reset_profile();  // the profile covers the timed runs only
  return Status::ok();
}

Status measure(Session& session, std::span<const TensorView> inputs,
               std::span<const TensorView> outputs, const RunBudget& budget, size_t traced_runs,
               RunCounter& counter, TimedRuns& runs) {
  if (budget.paced) return measure_paced(session, inputs, outputs, traced_runs, counter, runs);
  runs.samples_ms.reserve(static_cast<size_t>(budget.iterations));
  const auto begin = Clock::now();
  auto now = begin;
  while (runs.samples_ms.size() < static_cast<size_t>(budget.iterations) ||
         ms_between(begin, now) < 1000 * budget.duration_s) {
    ONEPOOL_RETURN_IF_ERROR(timed_run(session, inputs, outputs, begin, traced_runs, counter, runs));
    now = Clock::now();
  }
  runs.begin = begin;
  runs.end = now;
  runs.elapsed_s = ms_between(begin, now) / 1000;
  return Status::ok();
}

ProgressReporter::ProgressReporter(const RunBudget& budget, int streams, const RunCounter& counter)
    : budget_(budget),
      streams_(streams),
      counter_(counter),
      terminal_(::isatty(::fileno(stderr)) == 1),
      start_(Clock::now()),
      thread_([this] { loop(); }) {}

ProgressReporter::~ProgressReporter() {
  stop_ = true;
  thread_.join();
  if (printed_ && terminal_) std::fprintf(stderr, "\n");
}

void ProgressReporter::loop() {
  if (budget_.paced) return;  // the driver on stdin decides how many runs there are
  const double every_s = terminal_ ? 1.0 : 5.0;
  double next_s = kProgressAfterS;
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const double elapsed_s = ms_between(start_, Clock::now()) / 1000;
    if (elapsed_s < next_s) continue;
    print(elapsed_s);
    next_s += every_s;
  }
}

void ProgressReporter::print(double elapsed_s) {
  const size_t runs = counter_.load(std::memory_order_relaxed);
  const long long goal = static_cast<long long>(budget_.iterations) * streams_;
  std::fprintf(stderr, "%sprogress:  %.0f s, %zu timed runs (at least %lld", terminal_ ? "\r" : "",
               elapsed_s, runs, goal);
  if (budget_.duration_s > 0) std::fprintf(stderr, " and %.1f s", budget_.duration_s);
  std::fprintf(stderr, ")");
  if (runs == 0) std::fprintf(stderr, "; warming up");
  std::fprintf(stderr, terminal_ ? "   " : "\n");
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace onepool::cli
