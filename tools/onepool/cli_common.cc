#include "tools/onepool/cli_common.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "onepool/version.h"
#include "planner/analysis/external_io.h"
#include "planner/core/flag_split.h"
#include "planner/core/shape_binding.h"
#include "planner/core/shape_input_flag.h"
#include "planner/render/plan_dump.h"
#include "planner/render/plan_provenance.h"

namespace onepool::cli {

namespace {
double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : " ") + item;
  return text.empty() ? "(none)" : text;
}

// What a plan made now for this model and these flags belongs to.
Expected<PlanProvenance> current_provenance(const ModelFlags& flags, const Model& model) {
  PlanProvenance provenance;
  provenance.model_path = flags.model_path;
  ONEPOOL_ASSIGN_OR_RETURN(provenance.model_hash, hash_model_file(flags.model_path));
  std::vector<std::pair<std::string, Shape>> inputs;
  for (const TensorInfo& input : model.inputs()) inputs.emplace_back(input.name, input.shape);
  provenance.input_shapes = format_input_shapes(inputs);
  ONEPOOL_ASSIGN_OR_RETURN(Device device, Device::parse(flags.device));
  provenance.device = device.to_string();
  set_planner_provenance(flags, provenance);
  PlanOptions plan_options;
  ONEPOOL_RETURN_IF_ERROR(parse_external_flags(flags.external, plan_options));
  ONEPOOL_ASSIGN_OR_RETURN(const std::vector<uint8_t> external,
                           find_external_values(model.graph(), plan_options));
  provenance.external = describe_external_values(model.graph(), external);
  return provenance;
}

}  // namespace

Expected<Plan> read_plan_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_status(StatusCode::kNotFound, "cannot open plan file '", path, "'");
  std::stringstream text;
  text << in.rdbuf();
  Expected<Plan> plan = Plan::from_json(text.str());
  if (!plan) return plan.status().with_context(str_cat("plan file '", path, "'"));
  return plan;
}

// Checked field by field before the Session looks at a single offset.
Status check_saved_plan(const Plan& saved, const ModelFlags& flags, const Model& model) {
  const std::string source = str_cat("plan file '", flags.load_plan, "'");
  if (!saved.provenance.known()) {
    std::fprintf(stderr,
                 "warning: %s records no model, shapes or options (an older plan file): not "
                 "checked against this model; save it again to record them\n",
                 source.c_str());
    return Status::ok();
  }
  ONEPOOL_ASSIGN_OR_RETURN(PlanProvenance current, current_provenance(flags, model));
  return check_plan_provenance(saved.provenance, current, source);
}

void add_model_flags(CLI::App& command, ModelFlags& flags) {
  command.add_option("model", flags.model_path, "ONNX model file")->required();
  command.add_option("--shapes", flags.shapes,
                     "input shapes, e.g. x:1x3x224x224 or x:[1,3,224,224] (repeatable)");
  command.add_option("--dim", flags.dims, "symbolic dim value, e.g. batch=8 (repeatable)");
  command.add_option("--values", flags.values, kValuesFlagHelp);
  command.add_option("--bound", flags.bounds,
                     "the most elements a data-dependent length may take: a Loop's scan output "
                     "(iterations), TopK's outputs (K) or Range's output, when not known at "
                     "load, e.g. tokens=256; runs return the actual shape (repeatable)");
  command.add_option("--device", flags.device, "cpu or cuda:N (never a silent fallback)")
      ->capture_default_str();
  command.add_option("--optimize", flags.optimize, "graph optimizations: none|basic|all")
      ->capture_default_str();
  command.add_option("--algorithm", flags.algorithm, "placement algorithm")->capture_default_str();
  command.add_option("--alignment", flags.alignment, "pool alignment in bytes")
      ->capture_default_str();
  command.add_option("--schedule", flags.schedule, "execution order: model|memory")
      ->check(CLI::IsMember({"model", "memory"}))
      ->capture_default_str();
  command
      .add_option("--aliasing", flags.aliasing,
                  "views, in-place ops and Concat in place share storage: on|off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  command
      .add_option("--workspaces", flags.workspaces,
                  "kernel scratch: fit (the least, grown where the pool has room) or fast "
                  "(what kernels prefer; the pool may grow)")
      ->check(CLI::IsMember({"fit", "fast"}))
      ->capture_default_str();
  command.add_option("--external", flags.external, kExternalFlagHelp);
  command
      .add_option("--plan-budget", flags.plan_budget_ms,
                  "time budget of the searching planners, in ms")
      ->capture_default_str();
  command.add_option("--threads", flags.threads, "CPU threads (0 = all)")->capture_default_str();
  command
      .add_option("--cpu-isa", flags.cpu_isa,
                  "CPU: widest instruction set for the kernels: auto|avx512|avx2|portable")
      ->check(CLI::IsMember({"auto", "avx512", "avx2", "portable"}))
      ->capture_default_str();
  command.add_option("--load-plan", flags.load_plan, "use a saved plan (JSON)");
  command.add_option("--save-plan", flags.save_plan, "save the plan as JSON");
  command.add_flag("-v", flags.verbosity, "more output (-vv for more)");
  command.add_flag("--no-cuda-graph", flags.no_cuda_graph,
                   "CUDA: launch kernels one by one instead of replaying a CUDA graph");
  command.add_flag("--tf32", flags.tf32, "CUDA: allow TF32 tensor-core GEMMs");
}

Expected<LoadOptions> make_load_options(const ModelFlags& flags) {
  LoadOptions options;
  options.optimize = flags.optimize;
  options.schedule = flags.schedule;
  for (const auto& text : flags.shapes) {
    ONEPOOL_ASSIGN_OR_RETURN(auto shapes, parse_shapes_flag(text));
    for (auto& shape : shapes) options.input_shapes.push_back(std::move(shape));
  }
  for (const auto& text : flags.dims) {
    ONEPOOL_ASSIGN_OR_RETURN(auto dim, parse_dim_flag(text));
    options.dims.push_back(std::move(dim));
  }
  for (const auto& text : flags.values) {
    ONEPOOL_RETURN_IF_ERROR(parse_values_flag(text, &options.shape_input_values));
  }
  ONEPOOL_RETURN_IF_ERROR(parse_bound_flags(flags.bounds, &options.bounds));
  return options;
}

Status parse_bound_flags(const std::vector<std::string>& texts,
                         std::map<std::string, int64_t>* bounds) {
  for (const auto& text : texts) {
    ONEPOOL_ASSIGN_OR_RETURN(auto bound, parse_bound_flag(text));
    if (!bounds->emplace(bound).second) {
      return make_status(StatusCode::kInvalidArgument, "--bound '", bound.first,
                         "' is given twice");
    }
  }
  return Status::ok();
}

Status parse_external_flags(const std::vector<std::string>& texts, PlanOptions& options) {
  for (const std::string& text : texts) {
    for (const std::string& item : split_text(text, ',')) {
      if (item.empty()) {
        return make_status(StatusCode::kInvalidArgument, "--external '", text,
                           "': empty name (expected inputs, outputs, all, none or tensor names, "
                           "comma-separated)");
      }
      if (item == "none") continue;
      if (item == "inputs" || item == "all") options.external_inputs = true;
      if (item == "outputs" || item == "all") options.external_outputs = true;
      if (item != "inputs" && item != "outputs" && item != "all") {
        options.external_tensors.push_back(item);
      }
    }
  }
  return Status::ok();
}

std::string external_tensor_names(const Plan& plan) {
  std::string names;
  for (const PlannedTensor& tensor : plan.tensors) {
    if (tensor.external) names += str_cat(names.empty() ? "" : ",", tensor.name);
  }
  return names.empty() ? "none" : names;
}

Expected<SessionOptions> make_session_options(const ModelFlags& flags) {
  SessionOptions options;
  ONEPOOL_ASSIGN_OR_RETURN(options.device, Device::parse(flags.device));
  options.threads = flags.threads;
  if (flags.shared_threads) {
    ONEPOOL_ASSIGN_OR_RETURN(options.thread_pool, CpuThreadPool::create(flags.threads));
  }
  ONEPOOL_ASSIGN_OR_RETURN(options.cpu_isa, parse_cpu_isa(flags.cpu_isa));
  options.plan.algorithm = flags.algorithm;
  options.plan.alignment = flags.alignment;
  options.plan.aliasing = flags.aliasing == "on";
  options.plan.fast_workspaces = flags.workspaces == "fast";
  options.plan.budget_ms = flags.plan_budget_ms;
  options.plan.threads = flags.threads;
  ONEPOOL_RETURN_IF_ERROR(parse_external_flags(flags.external, options.plan));
  options.cuda_graph = !flags.no_cuda_graph;
  options.tf32 = flags.tf32;
  options.profile = flags.profile;
  options.debug_perturb_node = flags.debug_perturb;
  options.debug_perturb_value = flags.debug_perturb_value;
  return options;
}

Expected<LoadedSession> load_session(const ModelFlags& flags) {
  std::printf("model:     %s\n", flags.model_path.c_str());
  std::printf("shapes:    %s\n", join(flags.shapes).c_str());
  std::printf("dims:      %s\n", join(flags.dims).c_str());
  if (!flags.values.empty()) std::printf("values:    %s\n", join(flags.values).c_str());
  std::printf("device:    %s   threads: %d   optimize: %s   algorithm: %s   alignment: %zu\n",
              flags.device.c_str(), flags.threads, flags.optimize.c_str(), flags.algorithm.c_str(),
              flags.alignment);
  ONEPOOL_ASSIGN_OR_RETURN(LoadOptions load_options, make_load_options(flags));
  ONEPOOL_ASSIGN_OR_RETURN(SessionOptions session_options, make_session_options(flags));
  LoadedSession loaded;
  loaded.thread_pool = session_options.thread_pool;
  auto start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(loaded.model, Model::load(flags.model_path, load_options));
  loaded.load_ms = elapsed_ms(start);
  for (const std::string& warning : loaded.model->warnings()) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  Plan saved_plan;
  if (!flags.load_plan.empty()) {
    ONEPOOL_ASSIGN_OR_RETURN(saved_plan, read_plan_file(flags.load_plan));
    ONEPOOL_RETURN_IF_ERROR(check_saved_plan(saved_plan, flags, *loaded.model));
    session_options.plan_override = &saved_plan;
  }
  start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(loaded.session, Session::create(loaded.model, session_options));
  loaded.session_ms = elapsed_ms(start);
  if (!flags.save_plan.empty()) {
    Plan saved = loaded.session->plan();
    ONEPOOL_ASSIGN_OR_RETURN(saved.provenance, current_provenance(flags, *loaded.model));
    std::ofstream out(flags.save_plan, std::ios::binary);
    out << saved.to_json();
    if (!out) return make_status(StatusCode::kNotFound, "cannot write '", flags.save_plan, "'");
  }
  const LoadTimings& load = loaded.model->timings();
  const SessionTimings& session = loaded.session->timings();
  std::printf("optimize:  %s\n", loaded.model->optimization_summary().c_str());
  std::printf(
      "phases:    load %.1f ms (import %.1f, optimize %.1f, pack %.1f) | session %.1f ms "
      "(prepare %.1f, plan %.1f, allocate %.1f)\n",
      loaded.load_ms, load.import_ms, load.optimize_ms, load.pack_ms, loaded.session_ms,
      session.prepare_ms, session.plan_ms, session.allocate_ms);
  const Plan& plan = loaded.session->plan();
  std::printf("memory:    pool %s | lower bound %s | naive %s | weights %s\n",
              format_bytes(plan.pool_bytes).c_str(), format_bytes(plan.lower_bound_bytes).c_str(),
              format_bytes(plan.naive_bytes).c_str(),
              format_bytes(loaded.model->weights_bytes()).c_str());
  const std::string external = describe_external_tensors(plan);
  if (!external.empty()) std::printf("external:  %s\n", external.c_str());
  return loaded;
}

int report_error(const Status& status) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 1;
}

}  // namespace onepool::cli
