// The timing loop of `onepool bench`: a first run, warm-up by count and by time, timed runs by
// count and by time, and a progress line on stderr for long benchmarks.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <span>
#include <thread>
#include <vector>

#include "onepool/session.h"
#include "tools/onepool/profile_report.h"

namespace onepool::cli {

/// How long to warm up and how long to measure. Each pair is "at least both".
struct RunBudget {
  int warmup = 5;         ///< untimed runs after the first
  double warmup_ms = 0;   ///< ... and until this much time has passed
  int iterations = 50;    ///< timed runs
  double duration_s = 0;  ///< ... and until this much time has passed
  /// Timed runs on request instead of `iterations`: each line of stdin holding a count N runs N
  /// more and answers one line on stdout, "paced: " and their milliseconds; the end of stdin ends
  /// the timing. A driver alternates them with another runtime's runs (bench/compare_ort), so a
  /// shared machine's load falls on both alike.
  bool paced = false;
};

/// The most runs one paced request may ask for.
constexpr long kMaxPacedRuns = 1000000;

/// One Session's runs. Times in milliseconds, unrounded.
struct TimedRuns {
  double first_run_ms = 0;                           ///< the first run after creation (caches cold)
  int warmup_runs = 0;                               ///< untimed runs after the first
  double warmup_ms = 0;                              ///< their wall time
  std::vector<double> samples_ms;                    ///< each timed run
  double elapsed_s = 0;                              ///< wall time of the timed runs, loop included
  std::chrono::steady_clock::time_point begin, end;  ///< of the timed runs
  std::vector<ProfiledRun> traced;  ///< node timelines of the first timed runs (--profile-json)
};

/// Counts timed runs across threads for the progress line (relaxed: a count, no ordering).
using RunCounter = std::atomic<size_t>;

/// The first run and the warm-up of `budget`; the profile is reset afterwards.
Status warm_up(Session& session, std::span<const TensorView> inputs,
               std::span<const TensorView> outputs, const RunBudget& budget, TimedRuns& runs);

/// The timed runs of `budget`, each counted in `counter`; the node timelines of the first
/// `traced_runs` are kept (reading the profile allocates, so only between runs).
Status measure(Session& session, std::span<const TensorView> inputs,
               std::span<const TensorView> outputs, const RunBudget& budget, size_t traced_runs,
               RunCounter& counter, TimedRuns& runs);

/// Seconds a benchmark runs before the progress line appears.
constexpr double kProgressAfterS = 3.0;

/// Prints "progress: ..." on stderr while a benchmark runs past kProgressAfterS: every second
/// rewritten in place on a terminal, every 5 s as a new line otherwise. A thread polls `counter`
/// (no cost in the timed loop beyond one relaxed increment); the destructor stops it.
class ProgressReporter {
 public:
  ProgressReporter(const RunBudget& budget, int streams, const RunCounter& counter);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

 private:
  void loop();
  void print(double elapsed_s);

  RunBudget budget_;
  int streams_;
  const RunCounter& counter_;
  bool terminal_;
  bool printed_ = false;
  std::atomic<bool> stop_{false};
  std::chrono::steady_clock::time_point start_;
  std::thread thread_;
};

}  // namespace onepool::cli
