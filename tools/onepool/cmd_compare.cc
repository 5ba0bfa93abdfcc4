// onepool compare: the candidate (the model as the flags configure it) against a reference run
// or saved outputs, output by output; with --layerwise, the first node whose output diverges.
#include "tools/onepool/cmd_compare.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "tools/onepool/cli_common.h"
#include "tools/onepool/flag_checks.h"
#include "tools/onepool/layerwise.h"
#include "tools/onepool/npy_shapes.h"
#include "tools/onepool/run_inputs.h"
#include "tools/onepool/tensor_compare.h"
#include "tools/onepool/tensor_files.h"

namespace onepool::cli {

namespace {

struct CompareFlags {
  ModelFlags model;
  InputFlags input;
  std::string ref;
  double atol = 1e-4;
  double rtol = 1e-3;
  bool layerwise = false;
  bool validate = false;
};

enum class RefKind { kReference, kDevice, kDirectory };

RefKind ref_kind(const std::string& ref) {
  if (ref == "reference") return RefKind::kReference;
  if (Device::parse(ref)) return RefKind::kDevice;
  return RefKind::kDirectory;
}

// What the comparison holds the candidate against: outputs by name, and the model that made
// them (none for saved outputs).
struct Reference {
  std::shared_ptr<const Model> model;
  std::vector<std::string> names;
  std::vector<HostTensor> outputs;
  double run_ms = 0.0;
};

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

Status check_compare_flags(const CompareFlags& flags) {
  ONEPOOL_RETURN_IF_ERROR(check_model_flags(flags.model));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--atol", flags.atol, 0.0));
  ONEPOOL_RETURN_IF_ERROR(check_at_least("--rtol", flags.rtol, 0.0));
  if (flags.layerwise && ref_kind(flags.ref) == RefKind::kDirectory) {
    return make_status(StatusCode::kInvalidArgument, "--layerwise needs a reference run (--ref ",
                       "reference, cpu or cuda:N), not saved outputs ('", flags.ref, "')");
  }
  return Status::ok();
}

// The reference run's flags: --ref reference is the plainest configuration OnePool has (no
// graph optimization, every tensor its own bytes, one thread, CPU); --ref DEVICE is the
// candidate's configuration on that device. Never perturbed, never a saved plan.
ModelFlags reference_flags(const CompareFlags& flags) {
  ModelFlags ref = flags.model;
  ref.load_plan.clear();
  ref.save_plan.clear();
  ref.debug_perturb.clear();
  ref.profile = false;
  if (ref_kind(flags.ref) == RefKind::kDevice) {
    ref.device = flags.ref;
    return ref;
  }
  ref.device = "cpu";
  ref.optimize = "none";
  ref.schedule = "model";
  ref.algorithm = "linear";
  ref.aliasing = "off";
  ref.workspaces = "fit";
  ref.external.clear();  // every input and output copied through the pool
  ref.threads = 1;
  return ref;
}

void print_reference(const CompareFlags& flags, const ModelFlags& ref) {
  if (ref_kind(flags.ref) == RefKind::kDevice) {
    std::printf("reference: %s, otherwise the candidate's configuration\n", ref.device.c_str());
    if (ref.device == flags.model.device) {
      std::printf(
          "note:      the same device and configuration run twice: this checks only "
          "that runs repeat; --ref reference is an independent check\n");
    }
    return;
  }
  std::printf(
      "reference: cpu, --optimize none --algorithm linear --aliasing off (every tensor "
      "its own bytes) --threads 1; the same CPU kernels (OnePool has no second set)\n");
}

// Views of `inputs` (in `order`'s input order) in `model`'s input order, matched by name.
Expected<std::vector<TensorView>> feeds_for(const Model& model, const Model& order,
                                            std::vector<HostTensor>& inputs) {
  std::vector<TensorView> given = views_of(inputs);
  std::vector<TensorView> feeds;
  for (const TensorInfo& info : model.inputs()) {
    const int at = order.input_index(info.name);
    if (at < 0) {
      return make_status(StatusCode::kInvalidArgument, "the reference model has an input '",
                         info.name, "' the candidate does not");
    }
    feeds.push_back(given[static_cast<size_t>(at)]);
  }
  return feeds;
}

// One run of `session` (over `model`) on `inputs` (in `order`'s input order); the outputs in
// model order.
Expected<Reference> run_session(Session& session, std::shared_ptr<const Model> model,
                                const Model& order, std::vector<HostTensor>& inputs) {
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<TensorView> feeds, feeds_for(*model, order, inputs));
  Reference ran;
  ran.outputs = make_output_tensors(*model);
  std::vector<TensorView> out = views_of(ran.outputs);
  const auto start = std::chrono::steady_clock::now();
  ONEPOOL_RETURN_IF_ERROR(session.run(feeds, out));
  ran.run_ms = elapsed_ms(start);
  keep_actual_shapes(session, ran.outputs);
  for (const TensorInfo& info : model->outputs()) ran.names.push_back(info.name);
  ran.model = std::move(model);
  return ran;
}

// run_session on a new Session of `model`.
Expected<Reference> run_once(std::shared_ptr<const Model> model, const SessionOptions& options,
                             const Model& order, std::vector<HostTensor>& inputs) {
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(model, options));
  return run_session(*session, std::move(model), order, inputs);
}

// Loads the model as `flags` say (every intermediate an output when `layerwise`) and runs it.
Expected<Reference> load_and_run(const ModelFlags& flags, bool layerwise, const Model& order,
                                 std::vector<HostTensor>& inputs) {
  ONEPOOL_ASSIGN_OR_RETURN(LoadOptions load, make_load_options(flags));
  ONEPOOL_ASSIGN_OR_RETURN(SessionOptions options, make_session_options(flags));
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, Model::load(flags.model_path, load));
  if (layerwise) {
    ONEPOOL_ASSIGN_OR_RETURN(model, with_intermediate_outputs(*model, load));
  }
  return run_once(std::move(model), options, order, inputs);
}

// The inputs both runs get: the data set's for --ref DIR, else --inputs / seeded random data.
Expected<std::vector<HostTensor>> compare_inputs(const CompareFlags& flags, const Model& model) {
  if (ref_kind(flags.ref) != RefKind::kDirectory) return gather_inputs(model, flags.input);
  InputFlags from_dir = flags.input;
  from_dir.inputs_dir = flags.ref;
  return gather_inputs(model, from_dir);
}

Expected<Reference> make_reference(const CompareFlags& flags, const Model& candidate,
                                   std::vector<HostTensor>& inputs) {
  if (ref_kind(flags.ref) != RefKind::kDirectory) {
    const ModelFlags ref = reference_flags(flags);
    print_reference(flags, ref);
    return load_and_run(ref, flags.layerwise, candidate, inputs);
  }
  std::printf("reference: saved outputs in %s\n", flags.ref.c_str());
  Reference saved;
  ONEPOOL_ASSIGN_OR_RETURN(saved.outputs, read_pb_directory(flags.ref, "output_"));
  if (saved.outputs.size() != candidate.outputs().size()) {
    return make_status(StatusCode::kInvalidArgument, "'", flags.ref, "' holds ",
                       saved.outputs.size(), " output_*.pb files; the model has ",
                       candidate.outputs().size(), " outputs");
  }
  for (const TensorInfo& info : candidate.outputs()) saved.names.push_back(info.name);
  return saved;
}

// One line per output: match or MISMATCH with the largest difference; true when it matches.
bool report_comparison(const std::string& name, const HostTensor& actual,
                       const HostTensor* expected, const CompareFlags& flags) {
  if (expected == nullptr) {
    std::printf("MISMATCH %s: the reference has no output of that name\n", name.c_str());
    return false;
  }
  const Comparison c = compare_tensors(actual, *expected, flags.atol, flags.rtol);
  if (!c.problem.empty()) {
    std::printf("MISMATCH %s: %s\n", name.c_str(), c.problem.c_str());
    return false;
  }
  std::printf("%s %s: max abs diff %.3g, %lld of %lld elements outside atol %.1g + rtol %.1g",
              c.match ? "match   " : "MISMATCH", name.c_str(), c.max_abs_diff,
              static_cast<long long>(c.mismatches), static_cast<long long>(actual.element_count()),
              flags.atol, flags.rtol);
  if (!c.match) {
    std::printf(" (first at %lld: got %.7g, expected %.7g)",
                static_cast<long long>(c.first_mismatch), c.first_actual, c.first_expected);
  }
  std::printf("\n");
  return c.match;
}

const HostTensor* find_output(const Reference& reference, const std::string& name) {
  for (size_t i = 0; i < reference.names.size(); ++i) {
    if (reference.names[i] == name) return &reference.outputs[i];
  }
  return nullptr;
}

bool compare_outputs(const Reference& candidate, const Reference& reference,
                     const CompareFlags& flags) {
  bool all_match = true;
  for (size_t i = 0; i < candidate.outputs.size(); ++i) {
    const std::string& name = candidate.names[i];
    all_match =
        report_comparison(name, candidate.outputs[i], find_output(reference, name), flags) &&
        all_match;
  }
  return all_match;
}

// --validate: every candidate output finite; one line per output that is not.
bool validate_finite(const Reference& candidate) {
  bool all_finite = true;
  for (size_t i = 0; i < candidate.outputs.size(); ++i) {
    const NonFinite found = first_non_finite(candidate.outputs[i]);
    if (found.index < 0) continue;
    const char* what = std::isnan(found.value) ? "NaN" : found.value > 0 ? "+Inf" : "-Inf";
    std::printf("NON-FINITE %s: %s at index %lld\n", candidate.names[i].c_str(), what,
                static_cast<long long>(found.index));
    all_finite = false;
  }
  if (all_finite) std::printf("validate: every output is finite (no NaN, no Inf)\n");
  return all_finite;
}

// The first tensor that differs only element by element, when it is not the divergence itself.
void print_elementwise_note(const Divergence& d, const CompareFlags& flags) {
  if (!d.elementwise_found || (d.found && d.elementwise.tensor == d.tensor)) return;
  const TensorDifference& e = d.elementwise;
  std::printf(
      "layerwise: note: element by element (atol %.1g + rtol %.1g x |value|) the first "
      "difference is at node '%s' (%s), output '%s': max abs diff %.3g where the "
      "tensor's values reach %.3g\n",
      flags.atol, flags.rtol, e.node.c_str(), e.op.c_str(), e.tensor.c_str(), e.max_abs_diff,
      e.scale);
}

void print_divergence(const Divergence& d, const CompareFlags& flags) {
  if (flags.model.verbosity > 0) {
    for (const TensorDifference& t : d.tensors) {
      std::printf("  %-40s %-20s max abs diff %-10.3g largest |value| %.3g\n", t.tensor.c_str(),
                  t.op.c_str(), t.max_abs_diff, t.scale);
    }
  }
  std::printf(
      "layerwise: %d tensor(s) in both runs compared in the candidate's order%s; %d "
      "candidate tensor(s) skipped, the reference has none of that name (optimization "
      "renamed them)\n",
      d.compared, d.found ? " up to the first divergence" : "", d.candidate_only);
  print_elementwise_note(d, flags);
  if (!d.found) {
    std::printf(
        "layerwise: no divergence beyond atol %.1g + rtol %.1g x the tensor's largest "
        "|value|; largest max abs diff %.3g (%s)\n",
        flags.atol, flags.rtol, d.largest_diff, d.largest_at.c_str());
    return;
  }
  const Comparison& c = d.comparison;
  if (!c.problem.empty()) {
    std::printf("layerwise: first divergence at node '%s' (%s), output '%s': %s\n", d.node.c_str(),
                d.op.c_str(), d.tensor.c_str(), c.problem.c_str());
    return;
  }
  std::printf(
      "layerwise: first divergence at node '%s' (%s), output '%s': max abs diff %.3g, "
      "%lld element(s) outside atol %.1g + rtol %.1g x %.3g (the tensor's largest "
      "|value|), first at index %lld: got %.7g, expected %.7g (reference: %s)\n",
      d.node.c_str(), d.op.c_str(), d.tensor.c_str(), c.max_abs_diff,
      static_cast<long long>(c.mismatches), flags.atol, flags.rtol, d.scale,
      static_cast<long long>(c.first_mismatch), c.first_actual, c.first_expected,
      d.reference_node.c_str());
}

// --layerwise: the candidate again with every intermediate an output; true when none diverges.
Expected<bool> compare_layerwise(const CompareFlags& flags, const Model& candidate,
                                 std::vector<HostTensor>& inputs, const Reference& reference) {
  ONEPOOL_ASSIGN_OR_RETURN(LoadOptions load, make_load_options(flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(SessionOptions options, make_session_options(flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model,
                           with_intermediate_outputs(candidate, load));
  ONEPOOL_ASSIGN_OR_RETURN(Reference all, run_once(std::move(model), options, candidate, inputs));
  const Divergence d = first_divergence(*all.model, all.outputs, *reference.model,
                                        reference.outputs, flags.atol, flags.rtol);
  print_divergence(d, flags);
  return !d.found;
}

// Runs both sides and compares; false on a mismatch (or a NaN/Inf with --validate).
Expected<bool> run_comparison(const CompareFlags& given_flags) {
  CompareFlags flags = given_flags;
  ONEPOOL_ASSIGN_OR_RETURN(flags.model, with_ranges_at_top(given_flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(flags.model, with_npy_shapes(flags.model, flags.input.inputs));
  // Step 1. The candidate: the model as the flags configure it, and the inputs both runs get.
  ONEPOOL_ASSIGN_OR_RETURN(LoadedSession loaded, load_session(flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs, compare_inputs(flags, *loaded.model));
  // Step 2. The reference: a run (every intermediate an output with --layerwise) or saved files.
  ONEPOOL_ASSIGN_OR_RETURN(Reference reference, make_reference(flags, *loaded.model, inputs));
  // Step 3. The candidate's run, exactly as configured, compared output by output.
  ONEPOOL_ASSIGN_OR_RETURN(Reference candidate,
                           run_session(*loaded.session, loaded.model, *loaded.model, inputs));
  bool pass = compare_outputs(candidate, reference, flags);
  if (flags.validate) pass = validate_finite(candidate) && pass;
  // Step 4. The first node whose output diverges.
  if (flags.layerwise) {
    ONEPOOL_ASSIGN_OR_RETURN(const bool same,
                             compare_layerwise(flags, *loaded.model, inputs, reference));
    pass = same && pass;
  }
  std::printf("compare: %s (candidate run %.1f ms, reference run %.1f ms)\n",
              pass ? "PASS" : "FAIL", candidate.run_ms, reference.run_ms);
  return pass;
}

constexpr const char* kRefHelp =
    "reference: the same model with --optimize none, the plain plan (--algorithm linear "
    "--aliasing off: every tensor its own bytes) and 1 thread on the CPU, with the same kernels "
    "(OnePool has no second, naive set); cpu or cuda:N: the candidate's configuration on that "
    "device; DIR: saved inputs and outputs (input_*.pb, output_*.pb)";

void add_compare_options(CLI::App& compare, CompareFlags& flags) {
  compare.add_option("--ref", flags.ref, kRefHelp)
      ->option_text("reference|cpu|cuda:N|DIR")
      ->required();
  compare.add_option("--atol", flags.atol, "absolute tolerance")->capture_default_str();
  compare.add_option("--rtol", flags.rtol, "relative tolerance")->capture_default_str();
  compare.add_flag("--layerwise", flags.layerwise,
                   "make every intermediate an output in both runs and name the first node "
                   "(candidate's order) whose output differs beyond atol + rtol x the tensor's "
                   "largest |value| (the first element-by-element difference is noted; -v lists "
                   "every tensor compared); "
                   "tensors that optimization fused away exist only in the reference");
  compare.add_flag("--validate", flags.validate,
                   "fail when a candidate output holds a NaN or Inf (names the output and index)");
  compare
      .add_option("--debug-perturb", flags.model.debug_perturb,
                  "testing aid, a deliberately broken kernel: after node NODE runs in the "
                  "candidate, add --debug-perturb-value to its output 0's first element (CPU)")
      ->option_text("NODE");
  compare
      .add_option("--debug-perturb-value", flags.model.debug_perturb_value,
                  "what --debug-perturb adds (nan makes a NaN)")
      ->capture_default_str();
}

}  // namespace

void register_compare_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* compare = app.add_subcommand(
      "compare",
      "compare outputs with a reference; exit 0 match, 1 mismatch (or NaN/Inf with "
      "--validate), 2 usage error, 3 could not run");
  add_model_flags(*compare, flags->model);
  add_input_flags(*compare, flags->input);
  add_compare_options(*compare, *flags);
  compare->callback([flags, &exit_code] {
    if (Status usage = check_compare_flags(*flags); !usage.is_ok()) {
      exit_code = report_usage_error(usage);
      return;
    }
    Expected<bool> matched = run_comparison(*flags);
    if (!matched) {
      report_error(matched.status());
      exit_code = kExitCouldNotRun;
      return;
    }
    exit_code = *matched ? 0 : kExitMismatch;
  });
}

}  // namespace onepool::cli
