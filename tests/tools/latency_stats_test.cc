// Latency statistics: the unit that keeps a duration's digits, the standard deviation and CV
// with the instability warning, and throughput from the wall time rather than the samples.
#include "tools/onepool/latency_stats.h"

#include <doctest/doctest.h>

namespace onepool::cli {

// Each duration in the unit where it reads at least 1: 400 ns, 24.131 µs, 168.933 ms, 12.346 s.
TEST_CASE("latency stats: durations keep their digits") {
  CHECK(format_duration(0.0004) == "400.0 ns");
  CHECK(format_duration(0.024131) == "24.131 µs");
  CHECK(format_duration(168.9334) == "168.933 ms");
  CHECK(format_duration(12345.6) == "12.346 s");
}

// Runs of 0.4 to 0.6 µs: the whole latency line is in ns ("min 400.0"), never "0.000 ms".
TEST_CASE("latency stats: sub-microsecond runs print in ns") {
  const LatencyStats stats = compute_latency_stats({0.0004, 0.0005, 0.0006});
  const std::string text = format_latency(stats);
  CHECK(text.rfind("latency ns: min 400.0 | mean 500.0 | p50 500.0", 0) == 0);
  CHECK(text.find("0.000") == std::string::npos);
}

// 1, 1, 1, 1, 10 ms: mean 2.8, sample stddev sqrt(64.8 / 4) = 4.025, CV 143.7%: unstable.
// Ten runs of 1.00 and 1.05 ms: CV 2.6%, no warning. One run: no stddev, no warning.
TEST_CASE("latency stats: stddev, CV and the instability warning") {
  const LatencyStats spiky = compute_latency_stats({1, 1, 1, 1, 10});
  CHECK(spiky.mean == doctest::Approx(2.8));
  CHECK(spiky.stddev == doctest::Approx(4.0249).epsilon(1e-4));
  CHECK(spiky.cv == doctest::Approx(1.4375).epsilon(1e-3));
  CHECK(stability_warning(spiky).rfind("unstable: CV 143.7% > 10% (stddev 4.025 ms", 0) == 0);
  const LatencyStats steady = compute_latency_stats({1, 1.05, 1, 1.05, 1, 1.05, 1, 1.05, 1, 1.05});
  CHECK(steady.cv == doctest::Approx(0.0257).epsilon(1e-2));
  CHECK(stability_warning(steady).empty());
  const LatencyStats one = compute_latency_stats({5});
  CHECK(one.stddev == 0);
  CHECK(stability_warning(one).empty());
}

// Four runs of 1 ms inside 8 ms of wall time: 500 inferences/s (not the 1000 the samples' sum
// gives); without a wall time the samples' sum is used.
TEST_CASE("latency stats: throughput over the wall time") {
  const LatencyStats timed = compute_latency_stats({1, 1, 1, 1}, 0.008);
  CHECK(timed.throughput_per_s == doctest::Approx(500));
  CHECK(format_latency(timed).find("throughput: 500.0 inferences/s (4 runs in 8.000 ms)") !=
        std::string::npos);
  CHECK(compute_latency_stats({1, 1, 1, 1}).throughput_per_s == doctest::Approx(1000));
}

}  // namespace onepool::cli
