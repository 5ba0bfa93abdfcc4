// Flags and steps shared by the subcommands that load a model and run it.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onepool/onepool.h"
#include "onepool/plan.h"
#include "onepool/version.h"
#include "planner/core/byte_units.h"  // format_bytes: every byte count the CLI prints

namespace onepool::cli {

/// Model + session flags common to run, bench and compare.
struct ModelFlags {
  std::string model_path;
  std::vector<std::string> shapes;  // repeatable --shapes
  std::vector<std::string> dims;    // repeatable --dim
  std::vector<std::string> values;  // repeatable --values (shape inputs)
  std::vector<std::string> bounds;  // repeatable --bound (Loop scan output lengths)
  std::string device = "cpu";
  std::string optimize = "all";
  std::string algorithm = "auto";
  size_t alignment = 256;
  std::string schedule = "model";
  std::string aliasing = "on";
  std::string workspaces = "fit";
  std::vector<std::string> external;  // repeatable --external (caller-buffer inputs/outputs)
  double plan_budget_ms = 100.0;
  int threads = 0;
  bool shared_threads = false;  // bench --streams, serve --sessions: one CpuThreadPool for all
  std::string cpu_isa = "auto";
  std::string load_plan;
  std::string save_plan;
  int verbosity = 0;
  bool no_cuda_graph = false;
  bool tf32 = false;
  bool profile = false;              // bench --profile / --profile-json: time every node
  std::string debug_perturb;         // compare --debug-perturb NODE (SessionOptions)
  double debug_perturb_value = 1.0;  // compare --debug-perturb-value
};

/// Adds the ModelFlags options to a subcommand.
void add_model_flags(CLI::App& command, ModelFlags& flags);

/// The --values option's help (run, bench, compare, serve and plan share it).
inline constexpr const char* kValuesFlagHelp =
    "values of shape inputs (inputs a node needs to know a shape: Reshape's shape, Slice's "
    "starts, ReduceSum's axes, Resize's scales...), bound at load: name:1,2,3 entries separated "
    "by ';', e.g. axes:1;scales:1,1,2,2 (repeatable)";

/// Parses --shapes, --dim, --values and --bound into LoadOptions.
Expected<LoadOptions> make_load_options(const ModelFlags& flags);
/// Parses --bound values (name=N) into `bounds`; a name given twice is an error.
Status parse_bound_flags(const std::vector<std::string>& texts,
                         std::map<std::string, int64_t>* bounds);

/// The --external option's help (run, bench, compare and plan share it).
inline constexpr const char* kExternalFlagHelp =
    "graph inputs/outputs that live in the caller's buffers instead of the pool (no pool bytes, "
    "no copies; shown as external in the plan): inputs, outputs, all, or tensor names, "
    "comma-separated (repeatable)";
/// Applies --external values to `options` (PlanOptions::external_*): "inputs", "outputs",
/// "all", "none" or tensor names, comma-separated. An empty item is an error.
Status parse_external_flags(const std::vector<std::string>& texts, PlanOptions& options);
/// The external tensors' names in plan order, comma-separated, or "none" (provenance).
std::string external_tensor_names(const Plan& plan);

/// The SessionOptions the flags ask for (no plan_override: load_session reads --load-plan), with
/// a new CpuThreadPool of --threads threads under --shared-threads.
Expected<SessionOptions> make_session_options(const ModelFlags& flags);

struct LoadedSession {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Session> session;
  std::shared_ptr<CpuThreadPool> thread_pool;  // --shared-threads: the pool every Session uses
  double load_ms = 0.0;
  double session_ms = 0.0;
};

/// Reads a saved plan (--load-plan); errors name the file.
Expected<Plan> read_plan_file(const std::string& path);

/// A saved plan (--load-plan) must belong to this model, input shapes, device and options: an
/// error naming every field that differs. A schema_version 1 file records none of them: a
/// warning on stderr, and ok.
Status check_saved_plan(const Plan& saved, const ModelFlags& flags, const Model& model);

/// Loads the model and creates a Session, printing the effective configuration first.
Expected<LoadedSession> load_session(const ModelFlags& flags);

/// Prints "error: <message>" to stderr and returns 1.
int report_error(const Status& status);

/// Copies the planner options of `flags` (ModelFlags, PlanFlags) and this build's version into
/// a plan's provenance.
template <class Flags>
void set_planner_provenance(const Flags& flags, PlanProvenance& provenance) {
  provenance.algorithm = flags.algorithm;
  provenance.alignment = flags.alignment;
  provenance.aliasing = flags.aliasing;
  provenance.schedule = flags.schedule;
  provenance.optimize = flags.optimize;
  provenance.workspaces = flags.workspaces;
  provenance.onepool_version = ONEPOOL_VERSION_STRING;
}

}  // namespace onepool::cli
