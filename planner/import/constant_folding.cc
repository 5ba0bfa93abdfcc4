// Constant folding on the ModelProto.
#include "planner/import/constant_folding.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "planner/import/import_attributes.h"
#include "planner/import/import_checks.h"
#include "planner/import/import_convert.h"
#include "planner/import/import_inline_if.h"
#include "planner/import/import_tensor.h"

namespace onepool {

namespace {

using FoldResult = Expected<std::vector<HostTensor>>;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The ops folded at import: the shape arithmetic exporters emit (Shape -> Gather -> Concat ->
// Reshape chains, Resize sizes, ConstantOfShape lengths), which shape inference needs as values.
// Every other weight-only node is folded after import by the runtime
// (runtime/cpu/weight_folding.h).
bool is_foldable_op(const std::string& op_type) {
  static constexpr const char* kOps[] = {"Shape",      "Size",    "Gather",
                                         "Unsqueeze",  "Squeeze", "Concat",
                                         "Slice",      "Cast",    "ConstantOfShape",
                                         "Range",      "Reshape", "Identity",
                                         "Add",        "Sub",     "Mul",
                                         "Div",        "Equal",   "Where",
                                         "Max",        "Min",     "Neg",
                                         "Floor",      "Ceil",    "Sqrt",
                                         "ReduceProd", "Expand",  "Not",
                                         "Less",       "Greater", "Split",
                                         "Transpose",  "Relu"};
  for (const char* op : kOps) {
    if (op_type == op) return true;
  }
  return false;
}

// An int64 tensor holding `values` (a scalar when `scalar`): what Shape and Size fold to.
HostTensor int64_tensor(const std::vector<int64_t>& values, bool scalar) {
  HostTensor out;
  out.dtype = DType::kInt64;
  if (!scalar) out.shape = Shape{static_cast<int64_t>(values.size())};
  out.data.resize(values.size() * sizeof(int64_t));
  std::memcpy(out.data.data(), values.data(), out.data.size());
  return out;
}

}  // namespace

Status constant_tensor(const onnx::NodeProto& node, onnx::TensorProto* tensor) {
  const std::string where = str_cat("node '", node.name(), "' (Constant)");
  if (node.attribute_size() != 1 || node.output_size() != 1) {
    return make_status(StatusCode::kInvalidModel, where, ": needs one attribute and one output");
  }
  const auto& attribute = node.attribute(0);
  const std::string& kind = attribute.name();
  if (kind == "value") {
    *tensor = attribute.t();
  } else if (kind == "value_float" || kind == "value_floats") {
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    if (kind == "value_float") tensor->add_float_data(attribute.f());
    for (float v : attribute.floats()) tensor->add_float_data(v);
    if (kind == "value_floats") tensor->add_dims(attribute.floats_size());
  } else if (kind == "value_int" || kind == "value_ints") {
    tensor->set_data_type(onnx::TensorProto::INT64);
    if (kind == "value_int") tensor->add_int64_data(attribute.i());
    for (int64_t v : attribute.ints()) tensor->add_int64_data(v);
    if (kind == "value_ints") tensor->add_dims(attribute.ints_size());
  } else {
    return make_status(StatusCode::kUnsupported, where, ": output '", node.output(0),
                       "': attribute '", kind, "' (string or sparse constants) is not supported");
  }
  tensor->set_name(node.output(0));
  return Status::ok();
}

namespace {

Status constants_to_initializers(onnx::GraphProto* graph) {
  auto* nodes = graph->mutable_node();
  int kept = 0;
  for (int i = 0; i < nodes->size(); ++i) {
    const auto& node = nodes->Get(i);
    if (node.op_type() == "Constant" && is_default_domain(node.domain())) {
      ONEPOOL_RETURN_IF_ERROR(constant_tensor(node, graph->add_initializer()));
      continue;
    }
    if (kept != i) nodes->SwapElements(kept, i);
    ++kept;
  }
  while (nodes->size() > kept) nodes->RemoveLast();
  return Status::ok();
}

// One walk over the nodes, folding what it can. Holds views into the graph it walks.
class FoldPass {
 public:
  FoldPass(onnx::ModelProto* model, const FoldOptions& options)
      : model_(model),
        graph_(model->mutable_graph()),
        max_elements_(options.max_elements),
        runtime_shaped_(options.runtime_shaped),
        evaluator_(options.evaluator) {}

  /// Folds every foldable node; returns how many were folded.
  Expected<int> run();

 private:
  void index_graph();
  const HostTensor* constant(const std::string& name);
  bool static_shape(const std::string& name, Shape* shape) const;
  Expected<bool> try_fold(const onnx::NodeProto& node);
  Expected<onnx::ModelProto> single_node_model(const onnx::NodeProto& node,
                                               const std::vector<const HostTensor*>& inputs) const;
  FoldResult evaluate(const onnx::NodeProto& node, const std::vector<const HostTensor*>& inputs);
  FoldResult fold_shape_op(const onnx::NodeProto& node);
  void drop_folded_value_info();

  const onnx::ModelProto* model_;
  onnx::GraphProto* graph_;
  int64_t max_elements_;
  const std::unordered_set<std::string>& runtime_shaped_;
  const NodeEvaluator& evaluator_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, HostTensor> constants_;  // converted or folded this pass
  std::vector<std::string> folded_names_;                  // in fold order
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
  std::unordered_set<std::string> graph_outputs_;
};

void FoldPass::index_graph() {
  for (const auto& initializer : graph_->initializer()) {
    initializers_[initializer.name()] = &initializer;
  }
  for (const auto& info : graph_->value_info()) types_[info.name()] = &info.type();
  for (const auto& info : graph_->input()) types_[info.name()] = &info.type();
  for (const auto& info : graph_->output()) {
    types_[info.name()] = &info.type();
    graph_outputs_.insert(info.name());
  }
}

const HostTensor* FoldPass::constant(const std::string& name) {
  const auto cached = constants_.find(name);
  if (cached != constants_.end()) return &cached->second;
  const auto it = initializers_.find(name);
  if (it == initializers_.end()) return nullptr;
  const int64_t count = proto_element_count(*it->second);
  if (count < 0 || count > max_elements_) return nullptr;
  auto tensor = host_tensor_from_proto(*it->second);
  if (!tensor) return nullptr;
  return &constants_.emplace(name, std::move(tensor).value()).first->second;
}

bool FoldPass::static_shape(const std::string& name, Shape* shape) const {
  if (runtime_shaped_.count(name) != 0) return false;  // its dims are only a bound
  std::vector<int64_t> dims;
  const auto init = initializers_.find(name);
  if (init != initializers_.end()) {
    dims.assign(init->second->dims().begin(), init->second->dims().end());
  } else if (const auto it = types_.find(name); it != types_.end()) {
    const auto& type = it->second->tensor_type();
    if (!it->second->has_tensor_type() || !type.has_shape()) return false;
    for (const auto& dim : type.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) return false;
      dims.push_back(dim.dim_value());
    }
  } else {
    return false;
  }
  auto result = Shape::from_dims(dims);
  if (!result) return false;
  *shape = *result;
  return true;
}

FoldResult FoldPass::fold_shape_op(const onnx::NodeProto& node) {
  Shape shape;
  if (node.input_size() < 1 || !static_shape(node.input(0), &shape)) {
    return make_status(StatusCode::kUnsupported, "input shape not static");
  }
  if (node.op_type() == "Size") {
    ONEPOOL_ASSIGN_OR_RETURN(int64_t count, shape.element_count_checked());
    return std::vector<HostTensor>{int64_tensor({count}, true)};
  }
  const int rank = shape.rank();
  int64_t start = std::clamp<int64_t>(attribute_int(node, "start", 0), -rank, rank);
  int64_t end = std::clamp<int64_t>(attribute_int(node, "end", rank), -rank, rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(shape[static_cast<int>(i)]);
  return std::vector<HostTensor>{int64_tensor(dims, false)};
}

// The node alone in a model of its own, its inputs initializers holding their values, with the
// model's opsets: what shape inference and the Graph conversion see before the evaluator runs.
Expected<onnx::ModelProto> FoldPass::single_node_model(
    const onnx::NodeProto& node, const std::vector<const HostTensor*>& inputs) const {
  onnx::ModelProto single;
  single.set_ir_version(model_->ir_version());
  *single.mutable_opset_import() = model_->opset_import();
  onnx::GraphProto* graph = single.mutable_graph();
  graph->set_name(node.name());
  *graph->add_node() = node;
  std::unordered_set<std::string> added;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = node.input(static_cast<int>(i));
    if (inputs[i] == nullptr || !added.insert(name).second) continue;
    host_tensor_to_proto(*inputs[i], name, graph->add_initializer());
  }
  for (const std::string& name : node.output()) graph->add_output()->set_name(name);
  ONEPOOL_RETURN_IF_ERROR(infer_node_alone(&single));
  return single;
}

// Runs the node through the caller's evaluator (the CPU kernels): shape inference of the node
// alone gives its outputs' static shapes, the Graph conversion its attributes. A node whose
// outputs stay unknown or exceed max_elements is kept (kUnsupported / kResourceExhausted).
FoldResult FoldPass::evaluate(const onnx::NodeProto& node,
                              const std::vector<const HostTensor*>& inputs) {
  if (!evaluator_) return make_status(StatusCode::kUnsupported, "no evaluator");
  Expected<onnx::ModelProto> single = single_node_model(node, inputs);
  if (!single) return make_status(StatusCode::kUnsupported, single.status().message());
  Expected<Graph> graph = convert_to_graph(&*single, {}, "");
  if (!graph || graph->nodes.size() != 1) {
    return make_status(StatusCode::kUnsupported, "outputs not static");
  }
  for (ValueId id : graph->nodes.front().outputs) {
    if (id == kNoValue) continue;
    const Expected<int64_t> count =
        graph->values[static_cast<size_t>(id)].shape.element_count_checked();
    if (!count || *count > max_elements_) {
      return make_status(StatusCode::kResourceExhausted, "output above the folding limit");
    }
  }
  FoldResult result = evaluator_(*graph);
  if (!result && result.status().code() != StatusCode::kUnsupported) {
    return result.status().with_context(
        str_cat("constant folding: ", describe_node(graph->nodes.front())));
  }
  return result;
}

Expected<bool> FoldPass::try_fold(const onnx::NodeProto& node) {
  if (!is_default_domain(node.domain()) || !is_foldable_op(node.op_type())) return false;
  if (node.output_size() < 1) return false;
  for (const std::string& output : node.output()) {
    if (output.empty() || graph_outputs_.count(output) != 0) return false;
  }
  FoldResult result = make_status(StatusCode::kUnsupported, "not evaluated");
  if (node.op_type() == "Shape" || node.op_type() == "Size") {
    result = fold_shape_op(node);
  } else {
    std::vector<const HostTensor*> inputs;
    for (const std::string& name : node.input()) {
      const HostTensor* tensor = name.empty() ? nullptr : constant(name);
      if (!name.empty() && tensor == nullptr) return false;
      inputs.push_back(tensor);
    }
    if (inputs.empty()) return false;
    result = evaluate(node, inputs);
  }
  if (!result) {
    const StatusCode code = result.status().code();
    if (code == StatusCode::kUnsupported || code == StatusCode::kResourceExhausted) return false;
    return result.status();
  }
  if (result->size() != static_cast<size_t>(node.output_size())) return false;
  for (int i = 0; i < node.output_size(); ++i) {
    constants_[node.output(i)] = std::move((*result)[static_cast<size_t>(i)]);
    folded_names_.push_back(node.output(i));
  }
  return true;
}

Expected<int> FoldPass::run() {
  index_graph();
  std::vector<onnx::NodeProto> kept;
  int folded = 0;
  for (auto& node : *graph_->mutable_node()) {
    ONEPOOL_ASSIGN_OR_RETURN(bool done, try_fold(node));
    if (done) {
      ++folded;
      continue;
    }
    kept.push_back(std::move(node));
  }
  graph_->clear_node();
  for (auto& node : kept) *graph_->add_node() = std::move(node);
  for (const std::string& name : folded_names_) {
    host_tensor_to_proto(constants_.at(name), name, graph_->add_initializer());
  }
  drop_folded_value_info();
  return folded;
}

// ONNX shape inference takes a name's type from value_info before its initializer: an entry
// inferred before the fold (with an unknown dim) would hide the folded tensor's static shape
// from the nodes that read it.
void FoldPass::drop_folded_value_info() {
  if (folded_names_.empty()) return;
  const std::unordered_set<std::string> folded(folded_names_.begin(), folded_names_.end());
  auto* infos = graph_->mutable_value_info();
  int kept = 0;
  for (int i = 0; i < infos->size(); ++i) {
    if (folded.count(infos->Get(i).name()) != 0) continue;
    if (kept != i) infos->SwapElements(kept, i);
    ++kept;
  }
  while (infos->size() > kept) infos->RemoveLast();
}

// Names the nodes of `body` and of the bodies nested in it read, and its outputs.
void collect_read_names(const onnx::GraphProto& body, std::unordered_set<std::string>* used) {
  for (const auto& node : body.node()) {
    used->insert(node.input().begin(), node.input().end());
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) collect_read_names(attribute.g(), used);
      for (const auto& nested : attribute.graphs()) collect_read_names(nested, used);
    }
  }
  for (const auto& output : body.output()) used->insert(output.name());
}

// An initializer only a branch reads (an If's) is used too.
void drop_unused_initializers(onnx::GraphProto* graph) {
  std::unordered_set<std::string> used;
  collect_read_names(*graph, &used);
  auto* initializers = graph->mutable_initializer();
  int kept = 0;
  for (int i = 0; i < initializers->size(); ++i) {
    if (used.count(initializers->Get(i).name()) == 0) continue;
    if (kept != i) initializers->SwapElements(kept, i);
    ++kept;
  }
  while (initializers->size() > kept) initializers->RemoveLast();
}

}  // namespace

Status fold_constants(onnx::ModelProto* model, const FoldOptions& options,
                      std::string* strict_error) {
  // Step 1.
  ONEPOOL_RETURN_IF_ERROR(constants_to_initializers(model->mutable_graph()));
  // Step 2.
  ONEPOOL_RETURN_IF_ERROR(run_shape_inference(model, strict_error));
  for (int round = 0; round < kMaxFoldRounds; ++round) {
    int folded = 0;
    if (options.fold) {
      FoldPass pass(model, options);
      ONEPOOL_ASSIGN_OR_RETURN(folded, pass.run());
    }
    // An If whose condition is now constant becomes its chosen branch (also without folding:
    // inlining is not folding); the next round folds and infers the branch's nodes and inlines
    // an If nested in it.
    ONEPOOL_ASSIGN_OR_RETURN(int inlined, inline_constant_ifs(model->mutable_graph()));
    if (folded == 0 && inlined == 0) break;
    if (inlined != 0) ONEPOOL_RETURN_IF_ERROR(constants_to_initializers(model->mutable_graph()));
    ONEPOOL_RETURN_IF_ERROR(run_shape_inference(model, strict_error));
  }
  // Step 3.
  drop_unused_initializers(model->mutable_graph());
  return Status::ok();
}

}  // namespace onepool
