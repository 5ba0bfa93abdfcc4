// onepool run | bench | compare: load a model, feed inputs, run, report.
#include <chrono>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tools/onepool/cli_common.h"
#include "tools/onepool/cmd_bench_sweep.h"
#include "tools/onepool/commands.h"
#include "tools/onepool/latency_stats.h"
#include "tools/onepool/profile_report.h"
#include "tools/onepool/tensor_compare.h"
#include "tools/onepool/tensor_files.h"

namespace onepool::cli {

namespace {

struct InputFlags {
  std::vector<std::string> inputs;  // name:file
  std::string inputs_dir;
  uint64_t seed = 0;
  std::string val_range;
};

struct RunFlags {
  ModelFlags model;
  InputFlags input;
  int warmup = 0;
  int iterations = 1;
  double duration_s = 0;
  int print_outputs = 8;
  std::string save_outputs;
  std::string report;
  std::string ref;
  double atol = 1e-4;
  double rtol = 1e-3;
  SweepFlags sweep;  // bench only
  std::string profile_json;  // bench only: Chrome trace of the profiled runs
};

// Runs traced into --profile-json at most (the trace grows with runs x nodes).
constexpr size_t kMaxTracedRuns = 20;

// A `--shapes` range without a sweep runs at the top of the range (said on the first line).
Expected<RunFlags> with_ranges_at_top(const RunFlags& flags) {
  RunFlags resolved = flags;
  ONEPOOL_ASSIGN_OR_RETURN(resolved.model.shapes, top_of_range_shapes(flags.model.shapes));
  if (resolved.model.shapes != flags.model.shapes) {
    std::printf("note:      --shapes has ranges and no --shapes-sweep: running at the top of "
                "each range\n");
  }
  return resolved;
}

void add_input_flags(CLI::App& command, InputFlags& flags) {
  command.add_option("--inputs", flags.inputs, "name:file.bin|file.npy (repeatable)");
  command.add_option("--inputs-dir", flags.inputs_dir, "ONNX layout: DIR/input_0.pb, ...");
  command.add_option("--seed", flags.seed, "seed for random inputs")->capture_default_str();
  command.add_option("--val-range", flags.val_range,
                     "random value range lo,hi (default 0,1 for floats, 0,10 for integers)");
}

Expected<std::pair<double, double>> parse_range(const std::string& text, DType dtype) {
  const bool is_float = dtype == DType::kFloat32 || dtype == DType::kFloat64;
  if (text.empty()) return std::pair<double, double>(0.0, is_float ? 1.0 : 10.0);
  const size_t comma = text.find(',');
  try {
    if (comma == std::string::npos) throw std::invalid_argument(text);
    const double low = std::stod(text.substr(0, comma));
    const double high = std::stod(text.substr(comma + 1));
    if (!(low < high)) throw std::invalid_argument(text);
    return std::pair<double, double>(low, high);
  } catch (const std::exception&) {
    return make_status(StatusCode::kInvalidArgument, "--val-range '", text,
                       "': expected lo,hi with lo < hi");
  }
}

// Inputs from --inputs files, --inputs-dir, or seeded random data, in model input order.
Expected<std::vector<HostTensor>> gather_inputs(const Model& model, const InputFlags& flags) {
  const auto& infos = model.inputs();
  std::vector<HostTensor> tensors(infos.size());
  std::vector<bool> given(infos.size(), false);
  if (!flags.inputs_dir.empty()) {
    ONEPOOL_ASSIGN_OR_RETURN(auto from_dir, read_pb_directory(flags.inputs_dir, "input_"));
    if (from_dir.size() != infos.size()) {
      return make_status(StatusCode::kInvalidArgument, "'", flags.inputs_dir, "' holds ",
                         from_dir.size(), " input_*.pb files; the model has ", infos.size(),
                         " inputs");
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      tensors[i] = std::move(from_dir[i]);
      given[i] = true;
    }
  }
  for (const std::string& item : flags.inputs) {
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return make_status(StatusCode::kInvalidArgument, "--inputs '", item,
                         "': expected name:file");
    }
    const std::string name = item.substr(0, colon);
    const int index = model.input_index(name);
    if (index < 0) {
      std::string names;
      for (const auto& info : infos) names += " '" + info.name + "'";
      return make_status(StatusCode::kInvalidArgument, "--inputs: the model has no input '", name,
                         "'; its inputs are:", names);
    }
    ONEPOOL_ASSIGN_OR_RETURN(tensors[static_cast<size_t>(index)],
                             read_input_file(item.substr(colon + 1), infos[static_cast<size_t>(index)]));
    given[static_cast<size_t>(index)] = true;
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    if (given[i]) continue;
    ONEPOOL_ASSIGN_OR_RETURN(auto range, parse_range(flags.val_range, infos[i].dtype));
    tensors[i] = random_tensor(infos[i], flags.seed + i, range.first, range.second);
  }
  return tensors;
}

std::vector<TensorView> views_of(std::vector<HostTensor>& tensors) {
  std::vector<TensorView> views;
  for (auto& tensor : tensors) {
    views.push_back(TensorView{tensor.data.data(), tensor.dtype, tensor.shape, Device{}});
  }
  return views;
}

std::vector<HostTensor> make_output_tensors(const Model& model) {
  std::vector<HostTensor> outputs;
  for (const auto& info : model.outputs()) outputs.push_back(empty_tensor(info));
  return outputs;
}

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
                               std::span<const TensorView> outputs, const RunFlags& flags) {
  TimedRuns runs;
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < std::max(1, flags.warmup + 1); ++i) {
    const auto start = Clock::now();
    ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
    if (i == 0) runs.first_run_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
  session.reset_profile();  // the profile covers the timed runs only
  const bool tracing = !flags.profile_json.empty();
  const auto begin = Clock::now();
  for (int i = 0;; ++i) {
    const double elapsed_s = std::chrono::duration<double>(Clock::now() - begin).count();
    if (i >= flags.iterations && elapsed_s >= flags.duration_s) break;
    const auto start = Clock::now();
    ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
    runs.samples_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (tracing && runs.traced.size() < kMaxTracedRuns) {
      trace_last_run(session, std::chrono::duration<double, std::micro>(start - begin).count(),
                     runs);
    }
  }
  return runs;
}

void print_outputs(const Model& model, const std::vector<HostTensor>& outputs, int values) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorInfo& info = model.outputs()[i];
    std::printf("output %-20s %-8s %-18s %s\n", info.name.c_str(), dtype_name(info.dtype).c_str(),
                info.shape.to_string().c_str(), summarize_tensor(outputs[i], values).c_str());
  }
}

Status write_report(const std::string& path, const LoadedSession& loaded, const TimedRuns& runs,
                    const LatencyStats& stats, const RunFlags& flags) {
  const Plan& plan = loaded.session->plan();
  const SessionTimings& timings = loaded.session->timings();
  nlohmann::json report = {
      {"schema_version", 1},
      {"model", flags.model.model_path},
      {"device", loaded.session->device().to_string()},
      {"threads", flags.model.threads},
      {"latency_ms",
       {{"min", stats.min}, {"mean", stats.mean}, {"p50", stats.p50}, {"p90", stats.p90},
        {"p95", stats.p95}, {"p99", stats.p99}, {"max", stats.max}}},
      {"iterations", stats.iterations},
      {"throughput_per_s", stats.throughput_per_s},
      {"pool_bytes", plan.pool_bytes},
      {"lower_bound_bytes", plan.lower_bound_bytes},
      {"naive_bytes", plan.naive_bytes},
      {"weights_bytes", loaded.model->weights_bytes()},
      {"phases_ms",
       {{"load", loaded.load_ms}, {"prepare", timings.prepare_ms}, {"plan", timings.plan_ms},
        {"allocate", timings.allocate_ms}, {"session", loaded.session_ms},
        {"first_run", runs.first_run_ms}}},
  };
  std::ofstream out(path);
  out << report.dump(2) << "\n";
  if (!out) return make_status(StatusCode::kNotFound, "cannot write report '", path, "'");
  return Status::ok();
}

Status run_or_bench(const RunFlags& given_flags, bool is_bench) {
  if (is_bench && !given_flags.sweep.shapes_file.empty()) {
    SweepFlags sweep = given_flags.sweep;
    sweep.report = given_flags.report;
    return run_shape_sweep(given_flags.model, sweep, given_flags.input.seed);
  }
  ONEPOOL_ASSIGN_OR_RETURN(const RunFlags flags, with_ranges_at_top(given_flags));
  ONEPOOL_ASSIGN_OR_RETURN(LoadedSession loaded, load_session(flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs, gather_inputs(*loaded.model, flags.input));
  std::vector<HostTensor> outputs = make_output_tensors(*loaded.model);
  std::vector<TensorView> input_views = views_of(inputs);
  std::vector<TensorView> output_views = views_of(outputs);
  ONEPOOL_ASSIGN_OR_RETURN(TimedRuns runs, timed_runs(*loaded.session, input_views, output_views, flags));
  const LatencyStats stats = compute_latency_stats(runs.samples_ms);
  if (flags.model.profile) print_profile(loaded.session->profile(), stats.mean);
  if (!flags.profile_json.empty()) {
    ONEPOOL_RETURN_IF_ERROR(
        write_chrome_trace(flags.profile_json, loaded.session->profile(), runs.traced));
    std::printf("trace:     %zu runs written to %s (chrome://tracing, Perfetto)\n",
                runs.traced.size(), flags.profile_json.c_str());
  }
  std::printf("first run: %.3f ms\n", runs.first_run_ms);
  if (!is_bench || flags.model.verbosity > 0) print_outputs(*loaded.model, outputs, flags.print_outputs);
  std::printf("%s\n", format_latency(stats).c_str());
  const Plan& plan = loaded.session->plan();
  std::printf("summary:   pool %s | weights %s | pool/LB %.3f%s\n",
              format_bytes(plan.pool_bytes).c_str(),
              format_bytes(loaded.model->weights_bytes()).c_str(),
              plan.lower_bound_bytes ? static_cast<double>(plan.pool_bytes) /
                                           static_cast<double>(plan.lower_bound_bytes)
                                     : 1.0,
              plan.optimal ? " (optimal)" : "");
  if (!flags.save_outputs.empty()) {
    ONEPOOL_RETURN_IF_ERROR(save_outputs(flags.save_outputs, loaded.model->outputs(), outputs));
    std::printf("saved outputs to %s\n", flags.save_outputs.c_str());
  }
  if (!flags.report.empty()) {
    ONEPOOL_RETURN_IF_ERROR(write_report(flags.report, loaded, runs, stats, flags));
    std::printf("report written to %s\n", flags.report.c_str());
  }
  return Status::ok();
}

// Runs the model on --ref's inputs and compares with its outputs; false on any mismatch.
Expected<bool> compare_with_reference(const RunFlags& given_flags) {
  ONEPOOL_ASSIGN_OR_RETURN(const RunFlags flags, with_ranges_at_top(given_flags));
  ONEPOOL_ASSIGN_OR_RETURN(LoadedSession loaded, load_session(flags.model));
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> expected;
  if (flags.ref == "cpu") {
    ONEPOOL_ASSIGN_OR_RETURN(inputs, gather_inputs(*loaded.model, flags.input));
    RunFlags cpu_flags = flags;
    cpu_flags.model.device = "cpu";
    std::printf("reference: cpu backend\n");
    ONEPOOL_ASSIGN_OR_RETURN(LoadedSession reference, load_session(cpu_flags.model));
    expected = make_output_tensors(*reference.model);
    std::vector<TensorView> in = views_of(inputs);
    std::vector<TensorView> out = views_of(expected);
    ONEPOOL_RETURN_IF_ERROR(reference.session->run(in, out));
  } else {
    InputFlags input_flags = flags.input;
    input_flags.inputs_dir = flags.ref;
    ONEPOOL_ASSIGN_OR_RETURN(inputs, gather_inputs(*loaded.model, input_flags));
    ONEPOOL_ASSIGN_OR_RETURN(expected, read_pb_directory(flags.ref, "output_"));
    if (expected.size() != loaded.model->outputs().size()) {
      return make_status(StatusCode::kInvalidArgument, "'", flags.ref, "' holds ",
                         expected.size(), " output_*.pb files; the model has ",
                         loaded.model->outputs().size(), " outputs");
    }
  }
  std::vector<HostTensor> outputs = make_output_tensors(*loaded.model);
  std::vector<TensorView> in = views_of(inputs);
  std::vector<TensorView> out = views_of(outputs);
  ONEPOOL_RETURN_IF_ERROR(loaded.session->run(in, out));
  bool all_match = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Comparison c = compare_tensors(outputs[i], expected[i], flags.atol, flags.rtol);
    const std::string& name = loaded.model->outputs()[i].name;
    if (!c.problem.empty()) {
      std::printf("MISMATCH %s: %s\n", name.c_str(), c.problem.c_str());
    } else {
      std::printf("%s %s: max abs diff %.3g, %lld of %lld elements outside atol %.1g + rtol %.1g",
                  c.match ? "match   " : "MISMATCH", name.c_str(), c.max_abs_diff,
                  static_cast<long long>(c.mismatches),
                  static_cast<long long>(outputs[i].element_count()), flags.atol, flags.rtol);
      if (!c.match) {
        std::printf(" (first at %lld: got %.7g, expected %.7g)",
                    static_cast<long long>(c.first_mismatch), c.first_actual, c.first_expected);
      }
      std::printf("\n");
    }
    all_match = all_match && c.match;
  }
  std::printf("compare: %s\n", all_match ? "PASS" : "FAIL");
  return all_match;
}

}  // namespace

void register_run_commands(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand("run", "run a model once and summarize its outputs");
  add_model_flags(*run, flags->model);
  add_input_flags(*run, flags->input);
  run->add_option("--iterations", flags->iterations, "timed iterations")->capture_default_str();
  run->add_option("--warmup", flags->warmup, "untimed iterations first")->capture_default_str();
  run->add_option("--print-outputs", flags->print_outputs, "values to print per output")
      ->capture_default_str();
  run->add_option("--save-outputs", flags->save_outputs, "write outputs (raw .bin + outputs.json)");
  run->callback([flags, &exit_code] {
    const Status status = run_or_bench(*flags, false);
    exit_code = status.is_ok() ? 0 : report_error(status);
  });

  auto bench_flags = std::make_shared<RunFlags>();
  bench_flags->warmup = 5;
  bench_flags->iterations = 50;
  CLI::App* bench = app.add_subcommand("bench", "measure latency percentiles and throughput");
  add_model_flags(*bench, bench_flags->model);
  add_input_flags(*bench, bench_flags->input);
  bench->add_option("--warmup", bench_flags->warmup, "untimed iterations")->capture_default_str();
  bench->add_option("--iterations", bench_flags->iterations, "timed iterations (minimum)")
      ->capture_default_str();
  bench->add_option("--duration", bench_flags->duration_s, "run at least this many seconds");
  bench->add_option("--report", bench_flags->report, "write a JSON report");
  bench->add_option("--shapes-sweep", bench_flags->sweep.shapes_file,
                    "one shape set per line (--shapes syntax): run them all on one session "
                    "within the --shapes ranges, e.g. x:1x3x[320..1280:32]x[320..1280:32]");
  bench->add_option("--mode", bench_flags->sweep.mode,
                    "sweep pool: static (planned at the top of the ranges) or dynamic")
      ->check(CLI::IsMember({"static", "dynamic"}))
      ->capture_default_str();
  bench->add_option("--cache", bench_flags->sweep.cache, "sweep: specializations kept")
      ->capture_default_str();
  bench->add_option("--sweep-io", bench_flags->sweep.io_dir,
                    "sweep: line i reads DIR/<i>/inputs/<input>.bin when present and saves "
                    "its outputs to DIR/<i>/onepool");
  bench->add_option("--runs-per-shape", bench_flags->sweep.runs_per_shape,
                    "sweep: timed runs of each shape")
      ->capture_default_str();
  bench->add_flag("--profile", bench_flags->model.profile,
                  "time every node: per-node table sorted by time, and per op type");
  bench->add_option("--profile-json", bench_flags->profile_json,
                    "write Chrome trace events of the first timed runs (implies node timing)");
  bench->callback([bench_flags, &exit_code] {
    if (!bench_flags->profile_json.empty()) bench_flags->model.profile = true;
    const Status status = run_or_bench(*bench_flags, true);
    exit_code = status.is_ok() ? 0 : report_error(status);
  });

  auto compare_flags = std::make_shared<RunFlags>();
  CLI::App* compare = app.add_subcommand("compare", "compare outputs with a reference");
  add_model_flags(*compare, compare_flags->model);
  add_input_flags(*compare, compare_flags->input);
  compare->add_option("--ref", compare_flags->ref, "DIR (input_*.pb, output_*.pb) or cpu")
      ->required();
  compare->add_option("--atol", compare_flags->atol, "absolute tolerance")->capture_default_str();
  compare->add_option("--rtol", compare_flags->rtol, "relative tolerance")->capture_default_str();
  compare->callback([compare_flags, &exit_code] {
    Expected<bool> matched = compare_with_reference(*compare_flags);
    if (!matched) {
      exit_code = report_error(matched.status());
      return;
    }
    exit_code = *matched ? 0 : 1;
  });
}

}  // namespace onepool::cli
