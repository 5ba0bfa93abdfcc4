// onepool run: load a model, feed inputs, run, report the outputs.
// (onepool bench lives in cmd_bench.cc, onepool compare in cmd_compare.cc.)
#include <chrono>
#include <cstdio>

#include "tools/onepool/cli_common.h"
#include "tools/onepool/cmd_bench.h"
#include "tools/onepool/cmd_compare.h"
#include "tools/onepool/commands.h"
#include "tools/onepool/flag_checks.h"
#include "tools/onepool/latency_stats.h"
#include "tools/onepool/memory_report.h"
#include "tools/onepool/npy_shapes.h"
#include "tools/onepool/run_inputs.h"
#include "tools/onepool/tensor_compare.h"
#include "tools/onepool/tensor_files.h"

namespace onepool::cli {

namespace {

struct RunFlags {
  ModelFlags model;
  InputFlags input;
  int warmup = 0;
  int iterations = 1;
  int print_outputs = 8;
  std::string save_outputs;
  std::string save_format = "npy";
};

// Runs `warmup` untimed and `iterations` timed runs; the per-run milliseconds.
Expected<std::vector<double>> timed_runs(Session& session, std::span<const TensorView> inputs,
                                         std::span<const TensorView> outputs,
                                         const RunFlags& flags) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < flags.warmup; ++i) ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
  std::vector<double> samples_ms;
  for (int i = 0; i < flags.iterations; ++i) {
    const auto start = Clock::now();
    ONEPOOL_RETURN_IF_ERROR(session.run(inputs, outputs));
    samples_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return samples_ms;
}

// One run: its latency. Several: min, mean and max (percentiles are bench's job).
std::string run_latency_text(const std::vector<double>& samples_ms, int warmup) {
  const std::string warmed =
      warmup > 0 ? str_cat(" after ", warmup, " warm-up runs") : ", the first after loading";
  if (samples_ms.size() == 1) {
    return str_cat("latency:   ", format_duration(samples_ms[0]), " (1 run", warmed,
                   "; onepool bench for percentiles)");
  }
  const LatencyStats stats = compute_latency_stats(samples_ms);
  return str_cat("latency:   min ", format_duration(stats.min), " | mean ",
                 format_duration(stats.mean), " | max ", format_duration(stats.max), " (",
                 samples_ms.size(), " runs", warmed, "; onepool bench for percentiles)");
}

Status check_run_flags(const RunFlags& flags) {
  ONEPOOL_RETURN_IF_ERROR(check_model_flags(flags.model));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--iterations", flags.iterations, 1));
  return check_at_least("--warmup", flags.warmup, 0);
}

Status run_model(const RunFlags& given_flags) {
  ONEPOOL_ASSIGN_OR_RETURN(ModelFlags model_flags, with_ranges_at_top(given_flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(model_flags, with_npy_shapes(model_flags, given_flags.input.inputs));
  ONEPOOL_ASSIGN_OR_RETURN(LoadedSession loaded, load_session(model_flags));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs,
                           gather_inputs(*loaded.model, given_flags.input));
  std::vector<HostTensor> outputs = make_output_tensors(*loaded.model);
  std::vector<TensorView> input_views = views_of(inputs);
  std::vector<TensorView> output_views = views_of(outputs);
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<double> samples_ms,
                           timed_runs(*loaded.session, input_views, output_views, given_flags));
  keep_actual_shapes(*loaded.session, outputs);
  print_output_summaries(*loaded.model, outputs, given_flags.print_outputs);
  std::printf("%s\n", run_latency_text(samples_ms, given_flags.warmup).c_str());
  print_memory_summary(loaded);
  if (!given_flags.save_outputs.empty()) {
    const OutputFileFormat format =
        given_flags.save_format == "bin" ? OutputFileFormat::kBin : OutputFileFormat::kNpy;
    ONEPOOL_RETURN_IF_ERROR(
        save_outputs(given_flags.save_outputs, loaded.model->outputs(), outputs, format));
    std::printf("saved outputs to %s (.%s + outputs.json)\n", given_flags.save_outputs.c_str(),
                given_flags.save_format.c_str());
  }
  return Status::ok();
}

void register_run(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand("run", "run a model once and summarize its outputs");
  add_model_flags(*run, flags->model);
  add_input_flags(*run, flags->input);
  run->add_option("--iterations", flags->iterations, "timed iterations")->capture_default_str();
  run->add_option("--warmup", flags->warmup, "untimed iterations first")->capture_default_str();
  run->add_option("--print-outputs", flags->print_outputs, "values to print per output")
      ->capture_default_str();
  run->add_option("--save-outputs", flags->save_outputs,
                  "write each output to DIR (plus DIR/outputs.json: name, dtype, shape, file)");
  run->add_option("--save-format", flags->save_format,
                  "npy (version 1.0, little-endian: np.load reads it) or bin (raw bytes)")
      ->check(CLI::IsMember({"npy", "bin"}))
      ->capture_default_str();
  run->callback([flags, &exit_code] {
    if (Status usage = check_run_flags(*flags); !usage.is_ok()) {
      exit_code = report_usage_error(usage);
      return;
    }
    const Status status = run_model(*flags);
    exit_code = status.is_ok() ? 0 : report_error(status);
  });
}

}  // namespace

void register_run_commands(CLI::App& app, int& exit_code) {
  register_run(app, exit_code);
  register_bench_command(app, exit_code);
  register_compare_command(app, exit_code);
}

}  // namespace onepool::cli
