// `onepool bench` through the binary: bad numbers rejected before loading, sub-microsecond
// latencies printed with their digits, the raw times, the report's facts about the machine,
// warm-up by time, the progress line, and several streams sharing one Model.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "onepool/version.h"
#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {

namespace {

// Runs `onepool bench <args>` (stdout and stderr together).
// `onepool bench <args>`, after `stdin_from | ` when that is given (a shell command).
CommandResult bench(const ScratchDir& dir, const std::string& args,
                    const std::string& stdin_from = "") {
  const std::string cli = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(cli.empty());
  const std::string pipe = stdin_from.empty() ? "" : stdin_from + " | ";
  return run_command(pipe + shell_quote(cli) + " bench " + args, dir.file("out.txt"));
}

// A Relu over x:[1,4] in `dir` (about a microsecond a run), quoted for the shell.
std::string tiny_model(const ScratchDir& dir) {
  write_relu_model(dir.file("relu.onnx"), {"1", "4"});
  return shell_quote(dir.file("relu.onnx"));
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_text(path)); }

std::string line_starting(const std::string& output, const std::string& prefix) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

// `onepool bench <args> --paced` with `requests` on its stdin (printf's escapes).
CommandResult paced_bench(const ScratchDir& dir, const std::string& requests,
                          const std::string& args) {
  return bench(dir, args + " --paced", "printf " + shell_quote(requests));
}

// The milliseconds of every "paced:" line, one list per line.
std::vector<std::vector<double>> paced_answers(const std::string& output) {
  std::vector<std::vector<double>> answers;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("paced:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    answers.emplace_back();
    for (double ms; fields >> ms;) answers.back().push_back(ms);
  }
  return answers;
}

}  // namespace

// Each bad value is a usage error (exit 2) that names the flag, the bound and the value, found
// before the model is opened: the model path does not exist, yet the error is about the flag.
TEST_CASE("bench: bad numeric flags are usage errors before the model loads") {
  ScratchDir dir("onepool_bench_flags");
  struct Bad {
    const char* flags;
    const char* expected;
  };
  const Bad cases[] = {
      {"--iterations 0", "--iterations must be at least 1, got 0"},
      {"--iterations -5", "--iterations must be at least 1, got -5"},
      {"--warmup -1", "--warmup must be at least 0, got -1"},
      {"--warmup-ms -3", "--warmup-ms must be at least 0, got -3"},
      {"--duration -1", "--duration must be at least 0, got -1"},
      {"--threads -2", "--threads must be at least 0, got -2"},
      {"--streams 0", "--streams must be at least 1, got 0"},
      {"--alignment 3", "--alignment must be a power of two, got 3"},
      {"--streams 2 --profile", "time one Session: drop --streams"},
      {"--paced --streams 2", "--paced times one Session on request: drop --streams"},
      {"--paced --duration 1", "--paced times one Session on request: drop --duration"},
  };
  for (const Bad& bad : cases) {
    CAPTURE(std::string(bad.flags));
    const CommandResult result = bench(dir, "/no/such/model.onnx " + std::string(bad.flags));
    CHECK(result.exit_code == 2);
    CHECK_MESSAGE(result.output.find(bad.expected) != std::string::npos, result.output);
    CHECK(result.output.find("model:") == std::string::npos);
  }
}

// A Relu over 4 floats runs in about a microsecond. The latency line picks the unit from the
// minimum (ns below 1 µs, µs below 1 ms), so the minimum reads at least 1 in it, never
// "0.000"; throughput is runs / wall time of the timed loop: the report's throughput times its
// timed milliseconds / 1000 gives back the 20,000 iterations.
TEST_CASE("bench: sub-microsecond runs keep their digits") {
  ScratchDir dir("onepool_bench_resolution");
  const CommandResult result =
      bench(dir, tiny_model(dir) + " --threads 1 --warmup 200 --iterations 20000 --report " +
                     shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const std::string latency = line_starting(result.output, "latency ");
  INFO(latency);
  std::smatch match;
  REQUIRE(std::regex_search(latency, match, std::regex("^latency (ns|µs|ms): min ([0-9.]+) ")));
  CHECK(match[1] != "ms");
  CHECK(std::stod(match[2]) >= 1.0);
  CHECK(latency.find(" 0.000") == std::string::npos);
  const nlohmann::json report = read_json(dir.file("r.json"));
  CHECK(report["iterations"] == 20000);
  const double runs = report["throughput_per_s"].get<double>() *
                      report["phases_ms"]["timed"].get<double>() / 1000.0;
  CHECK(runs == doctest::Approx(20000).epsilon(1e-9));
}

// --export-times: 300 timed runs give 300 lines of positive milliseconds, and the report's p50
// is the 150th smallest of them (nearest rank); a .json path holds the same 300 in streams[0].
TEST_CASE("bench: --export-times writes every timed run") {
  ScratchDir dir("onepool_bench_times");
  const std::string model = tiny_model(dir);
  const CommandResult text =
      bench(dir, model + " --iterations 300 --export-times " + shell_quote(dir.file("t.txt")) +
                     " --report " + shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(text.exit_code == 0, text.output);
  std::vector<double> times;
  std::istringstream lines(read_text(dir.file("t.txt")));
  for (double ms; lines >> ms;) times.push_back(ms);
  REQUIRE(times.size() == 300);
  CHECK(*std::min_element(times.begin(), times.end()) > 0);
  std::sort(times.begin(), times.end());
  const double p50 = read_json(dir.file("r.json"))["latency_ms"]["p50"].get<double>();
  CHECK(times[149] == doctest::Approx(p50).epsilon(1e-6));
  const CommandResult json =
      bench(dir, model + " --iterations 300 --export-times " + shell_quote(dir.file("t.json")));
  REQUIRE_MESSAGE(json.exit_code == 0, json.output);
  const nlohmann::json exported = read_json(dir.file("t.json"));
  CHECK(exported["unit"] == "ms");
  CHECK(exported["streams"].size() == 1);
  CHECK(exported["streams"][0].size() == 300);
}

// The report says what ran where: input shapes {"x": [1,4]}; threads resolved from the default
// 0 to the logical core count; the version `--version` prints; the CPU model and core count; a
// standard deviation and CV beside the percentiles.
TEST_CASE("bench: the report names shapes, threads, version and machine") {
  ScratchDir dir("onepool_bench_report");
  const CommandResult result =
      bench(dir, tiny_model(dir) + " --iterations 20 --report " + shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const nlohmann::json report = read_json(dir.file("r.json"));
  CHECK(report["input_shapes"] == nlohmann::json::parse(R"({"x": [1, 4]})"));
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CHECK(report["threads"] == cores);
  CHECK(report["onepool_version"] == ONEPOOL_VERSION_STRING);
  CHECK(report["machine"]["logical_cores"] == cores);
  CHECK_FALSE(report["machine"]["cpu"].get<std::string>().empty());
  CHECK(report["latency_ms"]["stddev"].get<double>() >= 0);
  CHECK(report["latency_ms"]["cv"].get<double>() >= 0);
  CHECK(result.output.find("spread:    stddev ") != std::string::npos);
}

// --warmup 0 --warmup-ms 300: the warm-up lasts at least 300 ms (phases_ms.warmup) and makes
// more than zero runs.
TEST_CASE("bench: --warmup-ms warms up for a duration") {
  ScratchDir dir("onepool_bench_warmup");
  const CommandResult result =
      bench(dir, tiny_model(dir) + " --warmup 0 --warmup-ms 300 " + "--iterations 5 --report " +
                     shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const nlohmann::json report = read_json(dir.file("r.json"));
  CHECK(report["phases_ms"]["warmup"].get<double>() >= 300.0);
  CHECK(report["warmup"]["ms"] == 300.0);
  CHECK(line_starting(result.output, "first run: ").find("warm-up: 0 runs") == std::string::npos);
}

// A benchmark that lasts 3.5 s prints a progress line on stderr (from 3 s on); a 20-run one
// does not.
TEST_CASE("bench: a progress line for long runs") {
  ScratchDir dir("onepool_bench_progress");
  const std::string model = tiny_model(dir);
  const CommandResult long_run = bench(dir, model + " --duration 3.5");
  REQUIRE_MESSAGE(long_run.exit_code == 0, long_run.output);
  CHECK(long_run.output.find("progress:  3 s, ") != std::string::npos);
  const CommandResult short_run = bench(dir, model + " --iterations 20");
  REQUIRE(short_run.exit_code == 0);
  CHECK(short_run.output.find("progress:") == std::string::npos);
}

// --streams 2 --iterations 40: two Sessions of one Model on two threads, each with at least 40
// timed runs and its own p50/p99 line; the report lists both, its iterations are their sum,
// each Session gets cores / 2 threads (at least 1), and throughput is the sum over the wall
// time of the timed phase.
TEST_CASE("bench: --streams runs Sessions side by side") {
  ScratchDir dir("onepool_bench_streams");
  const CommandResult result = bench(dir, tiny_model(dir) + " --streams 2 --iterations 40 " +
                                              "--report " + shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK(line_starting(result.output, "stream 0 ").find("p99 ") != std::string::npos);
  CHECK(line_starting(result.output, "stream 1 ").find("p50 ") != std::string::npos);
  const nlohmann::json report = read_json(dir.file("r.json"));
  REQUIRE(report["per_stream"].size() == 2);
  const int runs0 = report["per_stream"][0]["runs"], runs1 = report["per_stream"][1]["runs"];
  CHECK(runs0 >= 40);
  CHECK(runs1 >= 40);
  CHECK(report["iterations"] == runs0 + runs1);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CHECK(report["threads"] == std::max(1, cores / 2));
  const double runs = report["throughput_per_s"].get<double>() *
                      report["phases_ms"]["timed"].get<double>() / 1000.0;
  CHECK(runs == doctest::Approx(runs0 + runs1).epsilon(1e-9));
}

// --paced: each request line N times N runs and answers them at once, in order; the timed runs
// are exactly the requested ones (--iterations does not apply), and the report and the exported
// times hold those runs.
TEST_CASE("bench: --paced answers each request with its runs' times") {
  ScratchDir dir("onepool_bench_paced");
  const CommandResult result = paced_bench(dir, "2\\n3\\n",
                                           tiny_model(dir) + " --iterations 50 --export-times " +
                                               shell_quote(dir.file("t.txt")) + " --report " +
                                               shell_quote(dir.file("r.json")));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  const std::vector<std::vector<double>> answers = paced_answers(result.output);
  REQUIRE(answers.size() == 2);
  CHECK(answers[0].size() == 2);
  CHECK(answers[1].size() == 3);
  std::vector<double> exported;
  std::istringstream lines(read_text(dir.file("t.txt")));
  for (double ms; lines >> ms;) exported.push_back(ms);
  REQUIRE(exported.size() == 5);
  for (size_t i = 0; i < exported.size(); ++i) {
    const double answered = i < 2 ? answers[0][i] : answers[1][i - 2];
    CAPTURE(i);
    CHECK(answered > 0);
    CHECK(answered == doctest::Approx(exported[i]).epsilon(1e-5));
  }
  CHECK(read_json(dir.file("r.json"))["iterations"] == 5);
}

// A request that is not a run count from 1 up, or no request at all, fails with the line named.
TEST_CASE("bench: --paced refuses bad requests") {
  ScratchDir dir("onepool_bench_paced_bad");
  const std::string model = tiny_model(dir);
  struct Bad {
    const char* requests;
    const char* expected;
  };
  const Bad cases[] = {
      {"0\\n", "must be a run count from 1 to 1000000, got '0'"},
      {"2\\nabc\\n", "got 'abc'"},
      {"3x\\n", "got '3x'"},
      {"", "stdin ended before any run was asked for"},
  };
  for (const Bad& bad : cases) {
    CAPTURE(std::string(bad.requests));
    const CommandResult result = paced_bench(dir, bad.requests, model);
    CHECK(result.exit_code != 0);
    CHECK_MESSAGE(result.output.find(bad.expected) != std::string::npos, result.output);
  }
}

}  // namespace onepool::test
