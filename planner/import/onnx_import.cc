// ONNX → Graph: the order of the import steps. Each step lives in its own planner/import_* file.
#include "planner/import/onnx_import.h"

#include <exception>
#include <mutex>
#include <set>

#include "planner/import/constant_folding.h"
#include "planner/import/import_attribute_checks.h"
#include "planner/import/import_bind.h"
#include "planner/import/import_bounds.h"
#include "planner/import/import_checks.h"
#include "planner/import/import_convert.h"
#include "planner/import/import_external_data.h"
#include "planner/import/import_inline_if.h"
#include "planner/import/import_model_file.h"
#include "planner/import/import_runtime_if.h"
#include "planner/import/import_runtime_loop.h"
#include "planner/import/import_runtime_scan.h"
#include "planner/import/import_shape_inputs.h"
#include "planner/import/import_slice_lengths.h"
#include "planner/import/import_topo_sort.h"

namespace onepool {

namespace {

// Unnamed nodes get "<op>_<index>" (their index in the model) so every message can name them.
void name_nodes(onnx::GraphProto* graph) {
  for (int n = 0; n < graph->node_size(); ++n) {
    auto* node = graph->mutable_node(n);
    if (node->name().empty()) node->set_name(str_cat(node->op_type(), "_", n));
  }
}

// value_info with symbolic dims would only fight the bound shapes; static entries may help ops
// ONNX cannot infer, so they stay.
void drop_symbolic_value_info(onnx::GraphProto* graph) {
  auto* infos = graph->mutable_value_info();
  int kept = 0;
  for (int i = 0; i < infos->size(); ++i) {
    bool is_static = infos->Get(i).type().tensor_type().has_shape();
    for (const auto& dim : infos->Get(i).type().tensor_type().shape().dim()) {
      is_static = is_static && dim.has_dim_value();
    }
    if (!is_static) continue;
    if (kept != i) infos->SwapElements(kept, i);
    ++kept;
  }
  while (infos->size() > kept) infos->RemoveLast();
}

Expected<Graph> import_model(onnx::ModelProto* model, const std::string& model_dir,
                             const ImportOptions& options);

// Data-dependent outputs get their upper bounds and Slices at run-time positions their lengths,
// then inference and folding carry them downstream (Shape and Size of a bounded tensor never
// fold); again while a round types a node whose inputs only now have static shapes.
Status bound_data_dependent_until_done(onnx::ModelProto* model, FoldOptions* fold_options,
                                       std::string* strict_error, DataDependentBounds* bounds) {
  for (int round = 0; round < model->graph().node_size() + 1; ++round) {
    ONEPOOL_ASSIGN_OR_RETURN(const int bounded,
                             bound_data_dependent_outputs(model->mutable_graph(), bounds));
    ONEPOOL_ASSIGN_OR_RETURN(const int sliced, type_runtime_slices(model->mutable_graph()));
    if (bounded + sliced == 0) return Status::ok();
    fold_options->runtime_shaped = runtime_shaped_names(model->graph(), bounds->reasons);
    ONEPOOL_RETURN_IF_ERROR(fold_constants(model, *fold_options, strict_error));
  }
  return Status::ok();
}

// An If left with a runtime condition, a Loop or a Scan: its branches or body become Graphs of
// their own (imported by this same pipeline), then shape inference and folding go on past it. One
// node per round, until none is left that can be extracted (one fed by another waits for a later
// round).
Status extract_runtime_ifs_until_done(onnx::ModelProto* model, const std::string& model_dir,
                                      const ImportOptions& options, FoldOptions* fold_options,
                                      std::string* strict_error, DataDependentBounds* bounds,
                                      RuntimeIfBranches* branches) {
  ImportOptions branch_options;
  branch_options.run_checker = false;  // the checker saw the branches inside the whole model
  branch_options.fold_constants = options.fold_constants;
  branch_options.fold_evaluator = options.fold_evaluator;
  const BranchImporter import_branch = [&](onnx::ModelProto* branch) {
    return import_model(branch, model_dir, branch_options);
  };
  for (;;) {
    ONEPOOL_ASSIGN_OR_RETURN(int extracted, extract_runtime_ifs(model, import_branch, branches));
    if (extracted == 0) {
      ONEPOOL_ASSIGN_OR_RETURN(
          extracted, extract_runtime_loops(model, import_branch, options.bounds, branches));
    }
    if (extracted == 0) {
      ONEPOOL_ASSIGN_OR_RETURN(extracted, extract_runtime_scans(model, import_branch, branches));
    }
    if (extracted == 0) return Status::ok();
    // An If whose branches yield different shapes has bounded outputs (as NonZero's are).
    bounds->reasons.insert(branches->bounds.begin(), branches->bounds.end());
    fold_options->runtime_shaped = runtime_shaped_names(model->graph(), bounds->reasons);
    ONEPOOL_RETURN_IF_ERROR(fold_constants(model, *fold_options, strict_error));
  }
}

// Every --bound is a count (>= 0) naming an output of a Loop, TopK or Range node; after
// extraction, every one must have bounded a tensor (check_bounds_used).
Status check_bound_values(const LengthBounds& bounds, const onnx::GraphProto& graph) {
  std::set<std::string> boundable;
  for (const auto& node : graph.node()) {
    const std::string& op = node.op_type();
    if (op != "Loop" && op != "TopK" && op != "Range") continue;
    boundable.insert(node.output().begin(), node.output().end());
  }
  for (const auto& [name, value] : bounds) {
    if (value < 0) {
      return make_status(StatusCode::kInvalidArgument, "--bound ", name, "=", value,
                         ": a bound is a count (0 or more)");
    }
    if (boundable.count(name) == 0) {
      return make_status(StatusCode::kInvalidArgument, "--bound names '", name,
                         "', which is not an output whose length a --bound can fix (a Loop's "
                         "scan output, or an output of TopK or Range)");
    }
  }
  return Status::ok();
}

Status check_bounds_used(const LengthBounds& bounds, const RuntimeIfBranches& branches,
                         const DataDependentBounds& data_dependent) {
  for (const auto& entry : bounds) {
    if (branches.used_length_bounds.count(entry.first) != 0) continue;
    if (data_dependent.user_used.count(entry.first) != 0) continue;
    return make_status(StatusCode::kInvalidArgument, "--bound names '", entry.first,
                       "', which is not an output whose length a --bound can fix (a Loop's scan "
                       "output, or an output of TopK or Range)");
  }
  return Status::ok();
}

Expected<Graph> import_model(onnx::ModelProto* model, const std::string& model_dir,
                             const ImportOptions& options) {
  onnx::GraphProto* graph = model->mutable_graph();
  // Step 1. Structure first, so cycles and dangling inputs get OnePool's message; nodes listed
  // out of order are sorted (stable: a valid order is kept as it is).
  name_nodes(graph);
  ONEPOOL_RETURN_IF_ERROR(sort_nodes_topologically(graph));
  ONEPOOL_RETURN_IF_ERROR(check_graph_structure(*graph));
  ONEPOOL_RETURN_IF_ERROR(check_window_attributes(*graph));  // before ONNX shape inference
  ONEPOOL_RETURN_IF_ERROR(check_bound_values(options.bounds, *graph));
  // Step 2. External data into raw_data (the checker would look for the files itself).
  ONEPOOL_RETURN_IF_ERROR(resolve_external_data(model, model_dir));
  // Step 3. The ONNX checker (skipped, with a warning, for versions newer than the library).
  ONEPOOL_RETURN_IF_ERROR(check_opset_versions(*model));
  const std::string newer = describe_newer_than_library(*model);
  if (options.run_checker) ONEPOOL_RETURN_IF_ERROR(run_onnx_checker(*model));
  // Step 4. Shape inputs become constants with the caller's values; bind symbolic dims.
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<BoundShapeInput> shape_inputs,
                           bind_shape_inputs(model, options.shape_input_values, options.bounds));
  DeclaredDims declared;
  for (const auto* input : caller_inputs(*graph)) declared[input->name()] = declared_dims(*input);
  ONEPOOL_RETURN_IF_ERROR(bind_input_shapes(graph, options));
  // Step 5. Shape inference and constant folding, until nothing changes.
  drop_symbolic_value_info(graph);
  std::string strict_error;
  FoldOptions fold_options;
  fold_options.fold = options.fold_constants;
  fold_options.evaluator = options.fold_evaluator;
  ONEPOOL_RETURN_IF_ERROR(fold_constants(model, fold_options, &strict_error));
  DataDependentBounds bounds;
  bounds.user = options.bounds;
  ONEPOOL_RETURN_IF_ERROR(
      bound_data_dependent_until_done(model, &fold_options, &strict_error, &bounds));
  // Step 6. Runtime Ifs (the constant ones are inlined by now), Loops and Scans get their bodies as
  // Graphs.
  RuntimeIfBranches branches;
  ONEPOOL_RETURN_IF_ERROR(extract_runtime_ifs_until_done(model, model_dir, options, &fold_options,
                                                         &strict_error, &bounds, &branches));
  ONEPOOL_RETURN_IF_ERROR(check_no_runtime_if(*graph));
  // Data-dependent nodes that read an If's, Loop's or Scan's outputs get their bounds now.
  ONEPOOL_RETURN_IF_ERROR(
      bound_data_dependent_until_done(model, &fold_options, &strict_error, &bounds));
  ONEPOOL_RETURN_IF_ERROR(check_bounds_used(options.bounds, branches, bounds));
  // Step 7. The Graph.
  ONEPOOL_ASSIGN_OR_RETURN(Graph converted, convert_to_graph(model, declared, strict_error));
  ONEPOOL_RETURN_IF_ERROR(attach_runtime_bodies(&converted, &branches));
  mark_bounded_values(&converted, bounds.reasons);
  if (!newer.empty()) converted.import_warnings.push_back(newer);
  converted.shape_inputs = std::move(shape_inputs);
  return converted;
}

// The ONNX library fills its schema registry, its opset version map and the schemas' lazily built
// parts on first use, without locks: threads importing their first models at once raced there.
// One call_once before any import runs that first use on one thread, with a tiny model that
// goes through the checker and shape inference.
void initialize_onnx_library_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.add_opset_import()->set_version(13);
    auto* graph = model.mutable_graph();
    graph->set_name("warm_up");
    auto* input = graph->add_input();
    input->set_name("x");
    input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
    *graph->add_output() = *input;
    graph->mutable_output(0)->set_name("y");
    auto* node = graph->add_node();
    node->set_op_type(std::string("Relu"));
    node->add_input(std::string("x"));
    node->add_output(std::string("y"));
    (void)model_newer_than_onnx_library(model);
    (void)run_onnx_checker(model);
    std::string strict_error;
    (void)run_shape_inference(&model, &strict_error);
  });
}

Expected<Graph> import_guarded(std::string_view bytes, const std::string& model_dir,
                               const ImportOptions& options, const std::string& source) {
  try {
    initialize_onnx_library_once();
    onnx::ModelProto model;
    ONEPOOL_RETURN_IF_ERROR(parse_model_bytes(bytes, source, &model));
    auto graph = import_model(&model, model_dir, options);
    if (!graph) return graph.status().with_context(source);
    return graph;
  } catch (const std::exception& error) {
    return make_status(StatusCode::kInternal, source, ": unexpected exception: ", error.what());
  }
}

}  // namespace

Expected<Graph> import_onnx_file(const std::string& path, const ImportOptions& options) {
  ONEPOOL_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  return import_guarded(bytes, folder_of(path), options, str_cat("'", path, "'"));
}

Expected<Graph> import_onnx_bytes(std::string_view bytes, const std::string& model_dir,
                                  const ImportOptions& options) {
  return import_guarded(bytes, model_dir, options, "the model buffer");
}

}  // namespace onepool
