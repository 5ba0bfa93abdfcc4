// `onepool plan MODEL.onnx | --records FILE.csv`: the static memory plan, as a per-tensor table,
// an address × step chart and a summary (or JSON / CSV), optionally written to a file.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onepool/model.h"
#include "onepool/plan.h"
#include "onepool/session.h"
#include "onepool/version.h"
#include "planner/algo/algorithms.h"
#include "planner/analysis/build_plan.h"
#include "planner/core/shape_binding.h"
#include "planner/core/shape_input_flag.h"
#include "planner/render/plan_diff.h"
#include "planner/render/plan_dump.h"
#include "planner/render/plan_html.h"
#include "planner/render/plan_provenance.h"
#include "planner/render/records_csv.h"
#include "runtime/cpu/cpu_backend.h"
#include "tools/onepool/cli_common.h"
#include "tools/onepool/commands.h"
#include "tools/onepool/shape_ranges.h"

namespace onepool::cli {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kChartWidth = 100;
constexpr int kChartHeight = 60;

struct PlanFlags {
  std::string model_path;
  std::string records_path;
  std::vector<std::string> shapes;  // repeatable --shapes
  std::vector<std::string> dims;    // repeatable --dim
  std::vector<std::string> values;  // repeatable --values (shape inputs)
  std::vector<std::string> bounds;  // repeatable --bound (Loop scan output lengths)
  std::string algorithm = "auto";
  size_t alignment = 256;
  std::string optimize = "all";
  std::string schedule = "model";
  std::string aliasing = "on";
  std::string workspaces = "fit";
  std::vector<std::string> external;  // repeatable --external
  std::string device = "cpu";         // whose kernels declare the workspaces
  double plan_budget_ms = 100.0;
  int threads = 0;              // placement threads (0: one per core)
  std::string format = "text";  // text: summary, chart, peak tensors; table: text + every tensor
  bool table = false;           // --table / -v: the per-tensor table in the text view
  std::string output_path;
  std::vector<std::string> diff_paths;  // --diff A.json B.json
};

struct PlannedSource {
  Plan plan;
  LoadOptions load;       // as `run` loads the model: the parsed --shapes, --dim, --values, --bound
  double load_ms = 0.0;   // model import + shape inference, or CSV parsing
  double build_ms = 0.0;  // liveness + placement + verification
  std::string graph_note;      // what the optimizer changed and how workspaces were found
  std::string input_shapes;    // bound input shapes, for the JSON's provenance
  bool ranges_at_top = false;  // --shapes gave ranges, planned at their top (as static mode)
  std::string device = "cpu";  // whose kernels' workspaces the plan holds
};

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", ms);
  return text;
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The LoadOptions `run` would use for these flags; `shapes`: the --shapes values with each range
// at its top.
Expected<LoadOptions> load_options(const PlanFlags& flags, const std::vector<std::string>& shapes) {
  LoadOptions options;
  options.optimize = flags.optimize;
  options.schedule = flags.schedule;
  for (const std::string& text : shapes) {
    ONEPOOL_ASSIGN_OR_RETURN(auto shapes, parse_shapes_flag(text));
    for (auto& shape : shapes) options.input_shapes.push_back(std::move(shape));
  }
  for (const std::string& text : flags.dims) {
    ONEPOOL_ASSIGN_OR_RETURN(auto dim, parse_dim_flag(text));
    options.dims.push_back(std::move(dim));
  }
  for (const std::string& text : flags.values) {
    ONEPOOL_RETURN_IF_ERROR(parse_values_flag(text, &options.shape_input_values));
  }
  ONEPOOL_RETURN_IF_ERROR(parse_bound_flags(flags.bounds, &options.bounds));
  return options;
}

Expected<PlanOptions> plan_options(const PlanFlags& flags) {
  PlanOptions options;
  ONEPOOL_RETURN_IF_ERROR(parse_external_flags(flags.external, options));
  options.algorithm = flags.algorithm;
  options.alignment = flags.alignment;
  options.aliasing = flags.aliasing == "on";
  options.fast_workspaces = flags.workspaces == "fast";
  options.budget_ms = flags.plan_budget_ms;
  options.threads = flags.threads;
  return options;
}

// The plan of a model OnePool cannot run on the CPU (some node has no kernel): those nodes are
// planned without a workspace, so the planner still shows the memory of the rest.
Expected<Plan> plan_without_some_kernels(const Model& model, const PlanOptions& options,
                                         std::string& kernels_note) {
  int unsupported = 0;
  const NodeMemoryNeeds needs = cpu::memory_needs(model.graph(), &unsupported);
  kernels_note += str_cat(" (", unsupported, " node(s) without one: this model cannot run)");
  return build_plan(model.graph(), options, needs);
}

// The model as `run` loads it (Model::load) and the plan its Session would use (Plan::build, on
// --device's backend): one pipeline for plan and run.
Expected<PlannedSource> plan_model(const PlanFlags& flags) {
  PlannedSource source;
  // Ranges in --shapes ([lo..hi:step]) plan at the top of each range: the plan a static-mode
  // DynamicSession allocates at creation.
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<std::string> top_shapes,
                           top_of_range_shapes(flags.shapes));
  source.ranges_at_top = top_shapes != flags.shapes;
  ONEPOOL_ASSIGN_OR_RETURN(source.load, load_options(flags, top_shapes));
  SessionOptions options;
  ONEPOOL_ASSIGN_OR_RETURN(options.device, Device::parse(flags.device));
  ONEPOOL_ASSIGN_OR_RETURN(options.plan, plan_options(flags));
  auto start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model,
                           Model::load(flags.model_path, source.load));
  source.load_ms = elapsed_ms(start);
  for (const std::string& warning : model->warnings()) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  std::vector<std::pair<std::string, Shape>> inputs;
  for (const TensorInfo& input : model->inputs()) inputs.emplace_back(input.name, input.shape);
  source.input_shapes = format_input_shapes(inputs);
  source.device = options.device.to_string();
  std::string kernels_note = str_cat("workspaces from the ", source.device, " kernels");
  start = std::chrono::steady_clock::now();
  Expected<Plan> plan = Plan::build(*model, options);
  if (!plan && plan.status().code() == StatusCode::kUnsupported &&
      options.device.kind == DeviceKind::kCpu) {
    plan = plan_without_some_kernels(*model, options.plan, kernels_note);
  }
  if (!plan) return plan.status();
  source.plan = std::move(plan).value();
  source.build_ms = elapsed_ms(start);
  source.graph_note =
      str_cat("optimize ", flags.optimize, ": ", model->optimization_summary(), "; ", kernels_note);
  return source;
}

Expected<PlannedSource> plan_records(const PlanFlags& flags) {
  PlannedSource source;
  auto start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(RecordsFile file, load_records_csv(flags.records_path));
  source.load_ms = elapsed_ms(start);
  if (!flags.external.empty()) {
    return make_status(StatusCode::kInvalidArgument,
                       "--external needs a model: usage records have no graph inputs or outputs");
  }
  start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(const PlanOptions options, plan_options(flags));
  ONEPOOL_ASSIGN_OR_RETURN(source.plan, build_plan_from_records(file.records, file.ids, options));
  source.build_ms = elapsed_ms(start);
  return source;
}

std::string configuration_text(const PlanFlags& flags, const PlannedSource& source) {
  std::string shapes = format_shapes_flag(source.load.input_shapes);
  std::string dims;
  for (const auto& [name, value] : source.load.dims) {
    dims += str_cat(dims.empty() ? "" : ",", name, "=", value);
  }
  std::string values;
  for (const auto& [name, given] : source.load.shape_input_values) {
    values += str_cat(values.empty() ? "" : ";", format_values_entry(name, given));
  }
  const bool from_records = !flags.records_path.empty();
  return str_cat(
      from_records ? "records:    " : "model:      ",
      from_records ? flags.records_path : flags.model_path, "\n",
      "shapes:     ", shapes.empty() ? "(model's own)" : shapes,
      source.ranges_at_top ? " (the top of the --shapes ranges)" : "", "\n",
      "dims:       ", dims.empty() ? "(none)" : dims, "\n",
      values.empty() ? "" : str_cat("values:     ", values, "\n"),
      "algorithm:  ", source.plan.algorithm, "\n",
      source.graph_note.empty() ? "" : "graph:      ", source.graph_note,
      source.graph_note.empty() ? "" : "\n", "alignment:  ", source.plan.alignment, " bytes\n",
      from_records ? "load:       " : "load+shape inference: ", ms_text(source.load_ms), "\n");
}

PlanHtmlOptions html_options(const PlanFlags& flags) {
  PlanHtmlOptions options;
  options.source = flags.records_path.empty() ? flags.model_path : flags.records_path;
  options.title = std::filesystem::path(options.source).stem().string();
  return options;
}

// What the plan belongs to, for --load-plan to check (plans from records belong to no model).
Expected<PlanProvenance> plan_provenance(const PlanFlags& flags, const PlannedSource& source) {
  PlanProvenance provenance;
  if (flags.model_path.empty()) return provenance;
  provenance.model_path = flags.model_path;
  ONEPOOL_ASSIGN_OR_RETURN(provenance.model_hash, hash_model_file(flags.model_path));
  provenance.input_shapes = source.input_shapes;
  provenance.device = source.device;  // whose kernels' workspaces the plan holds
  set_planner_provenance(flags, provenance);
  provenance.external = external_tensor_names(source.plan);
  return provenance;
}

// `verdict`: the plan's verification, run once (plans are large: 100,000 records).
Expected<std::string> render(const PlanFlags& flags, PlannedSource& source, const Status& verdict) {
  Plan& plan = source.plan;
  if (flags.format == "json") {
    ONEPOOL_ASSIGN_OR_RETURN(plan.provenance, plan_provenance(flags, source));
    return plan.to_json() + "\n";
  }
  if (flags.format == "html") return render_plan_html(plan, html_options(flags));
  if (flags.format == "csv") return render_plan_csv(plan);
  const std::string chart = render_plan_chart(plan, kChartWidth, kChartHeight);
  const std::string summary = render_plan_summary(plan, source.build_ms, &verdict);
  if (flags.format == "ascii") return chart + "\n" + summary;
  if (flags.table || flags.format == "table") {
    return configuration_text(flags, source) + "\n" + render_plan_table(plan) + "\n" + chart +
           "\n" + summary;
  }
  const std::string hint = str_cat("all ", plan.tensors.size(),
                                   " tensors (op, shape, offset, steps): add --table or -v\n");
  return configuration_text(flags, source) + "\n" + chart + hint + "\n" + summary;
}

Status write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return make_status(StatusCode::kNotFound, "cannot write '", path, "'");
  return Status::ok();
}

int report(const Status& status, int code) {
  std::cerr << "error: " << status.message() << "\n";
  return code;
}

Status check_usage(const PlanFlags& flags) {
  if (flags.model_path.empty() == flags.records_path.empty()) {
    return make_status(StatusCode::kInvalidArgument,
                       "give exactly one of MODEL.onnx or --records FILE.csv");
  }
  const bool model_flags = !flags.shapes.empty() || !flags.dims.empty() || !flags.values.empty();
  if (!flags.records_path.empty() && model_flags) {
    return make_status(StatusCode::kInvalidArgument,
                       "--shapes, --dim and --values apply to a model, not to --records");
  }
  if (flags.alignment == 0 || (flags.alignment & (flags.alignment - 1)) != 0) {
    return make_status(StatusCode::kInvalidArgument, "--alignment must be a power of two, got ",
                       flags.alignment);
  }
  return Status::ok();
}

Expected<Plan> read_plan_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_status(StatusCode::kNotFound, "cannot open plan file '", path, "'");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Expected<Plan> plan = Plan::from_json(text);
  if (!plan) {
    return plan.status().with_context(str_cat(
        "plan file '", path, "' (expected JSON from `plan --format json` or `run --save-plan`)"));
  }
  return plan;
}

// `plan --diff A.json B.json`: both saved plans, compared; exit 0 whether or not they differ.
int run_diff(const PlanFlags& flags) {
  if (!flags.model_path.empty() || !flags.records_path.empty()) {
    return report(make_status(StatusCode::kInvalidArgument,
                              "--diff compares two saved plans: give no MODEL.onnx or --records"),
                  kExitUsage);
  }
  auto a = read_plan_json(flags.diff_paths[0]);
  if (!a) return report(a.status(), kExitFailure);
  auto b = read_plan_json(flags.diff_paths[1]);
  if (!b) return report(b.status(), kExitFailure);
  PlanDiffOptions options;
  options.a_label = flags.diff_paths[0];
  options.b_label = flags.diff_paths[1];
  const std::string text = render_plan_diff(diff_plans(*a, *b), options);
  if (flags.output_path.empty()) {
    std::cout << text;
    return 0;
  }
  if (Status written = write_file(flags.output_path, text); !written.is_ok()) {
    return report(written, kExitFailure);
  }
  std::cout << "wrote the plan diff to " << flags.output_path << "\n";
  return 0;
}

int run_plan(const PlanFlags& flags) {
  if (!flags.diff_paths.empty()) return run_diff(flags);
  if (Status usage = check_usage(flags); !usage.is_ok()) return report(usage, kExitUsage);
  auto source = flags.records_path.empty() ? plan_model(flags) : plan_records(flags);
  if (!source) return report(source.status(), kExitFailure);
  // build_plan verified it already: only a failure is checked again, for its message.
  const Status verdict = source->plan.verified ? Status::ok() : source->plan.verify();
  const Expected<std::string> rendered = render(flags, *source, verdict);
  if (!rendered) return report(rendered.status(), kExitFailure);
  const std::string& text = *rendered;
  if (flags.output_path.empty()) {
    std::cout << text;
  } else {
    if (Status written = write_file(flags.output_path, text); !written.is_ok()) {
      return report(written, kExitFailure);
    }
    std::cout << "wrote the " << flags.format << " plan to " << flags.output_path << "\n";
  }
  return verdict.is_ok() ? 0 : report(verdict, kExitFailure);
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : all_algorithms()) names.emplace_back(info.name);
  return names;
}

}  // namespace

void register_plan_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* command = app.add_subcommand(
      "plan", "Plan every intermediate tensor into one static pool and show the plan");
  command->add_option("model", flags->model_path, "MODEL.onnx");
  command->add_option("--records", flags->records_path,
                      "plan usage records from a CSV (id,lower,upper,size) instead of a model");
  command
      ->add_option("--shapes", flags->shapes,
                   "input shapes: name:1x3x224x224[,name:...] (repeatable); a range "
                   "[lo..hi:step] plans at its top")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--dim", flags->dims, "symbolic dim value: name=N (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      ->add_option("--bound", flags->bounds,
                   "the most elements a data-dependent length may take: a Loop's scan output "
                   "(iterations), TopK's outputs (K) or Range's output, when not known at "
                   "load, e.g. tokens=256 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--values", flags->values, kValuesFlagHelp)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command->add_option("--algorithm", flags->algorithm, "placement algorithm")
      ->check(CLI::IsMember(algorithm_names()))
      ->capture_default_str();
  command->add_option("--alignment", flags->alignment, "offset and size alignment in bytes")
      ->capture_default_str();
  command->add_option("--optimize", flags->optimize, "graph optimizations first: none|basic|all")
      ->capture_default_str();
  command->add_option("--schedule", flags->schedule, "execution order: model|memory")
      ->check(CLI::IsMember({"model", "memory"}))
      ->capture_default_str();
  command
      ->add_option("--aliasing", flags->aliasing,
                   "views, in-place ops and Concat in place share storage: on|off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  command
      ->add_option("--workspaces", flags->workspaces,
                   "kernel scratch: fit (the least, grown where the pool has room) or fast "
                   "(what kernels prefer; the pool may grow)")
      ->check(CLI::IsMember({"fit", "fast"}))
      ->capture_default_str();
  command->add_option("--external", flags->external, kExternalFlagHelp);
  command
      ->add_option("--device", flags->device,
                   "plan with this backend's kernels and workspaces: cpu or cuda:N (a CUDA plan "
                   "needs the device, as a Session does)")
      ->capture_default_str();
  command
      ->add_option("--plan-budget", flags->plan_budget_ms,
                   "time budget of the searching planners, in ms")
      ->capture_default_str();
  command
      ->add_option("--threads", flags->threads,
                   "threads placing a large plan (0: one per core); the plan is the same for "
                   "every value")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      ->add_option(
          "--format", flags->format,
          "output format (text: configuration, chart, tensors live at the peak, summary; table: "
          "the same with every tensor; html: address x step chart with hover, open in a browser)")
      ->check(CLI::IsMember({"text", "table", "ascii", "json", "csv", "html"}))
      ->capture_default_str();
  command->add_flag("--table,-v", flags->table,
                    "text view: list every tensor (name, op, dtype, shape, bytes, offset, steps), "
                    "not only those live at the peak");
  command->add_option("-o,--output", flags->output_path,
                      "write the output to FILE (html: one self-contained page to open offline)");
  command
      ->add_option("--diff", flags->diff_paths,
                   "compare two saved plans (JSON from --format json or run --save-plan): "
                   "--diff A.json B.json, without MODEL")
      ->expected(2);
  command->callback([flags, &exit_code] { exit_code = run_plan(*flags); });
}

}  // namespace onepool::cli
