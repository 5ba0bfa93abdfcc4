// Runtime If: each branch imported as a Graph of its own (see the header for the steps).
#include "planner/import_runtime_if.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace onepool {

namespace {

using NameSet = std::unordered_set<std::string>;
using TypeMap = std::unordered_map<std::string, const onnx::TypeProto*>;
using InitializerMap = std::unordered_map<std::string, const onnx::TensorProto*>;

bool is_default_if(const onnx::NodeProto& node) {
  return node.op_type() == "If" && (node.domain().empty() || node.domain() == "ai.onnx");
}

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (If)");
}

// Names a body (and the bodies nested in it) defines for itself.
void collect_defined(const onnx::GraphProto& body, NameSet* defined) {
  for (const auto& info : body.input()) defined->insert(info.name());
  for (const auto& initializer : body.initializer()) defined->insert(initializer.name());
  for (const auto& node : body.node()) {
    defined->insert(node.output().begin(), node.output().end());
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) collect_defined(attribute.g(), defined);
      for (const auto& nested : attribute.graphs()) collect_defined(nested, defined);
    }
  }
}

// Names a body (and its nested bodies) reads, in first-use order.
void collect_used(const onnx::GraphProto& body, NameSet* seen, std::vector<std::string>* used) {
  const auto use = [&](const std::string& name) {
    if (!name.empty() && seen->insert(name).second) used->push_back(name);
  };
  for (const auto& node : body.node()) {
    for (const std::string& input : node.input()) use(input);
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) collect_used(attribute.g(), seen, used);
      for (const auto& nested : attribute.graphs()) collect_used(nested, seen, used);
    }
  }
  for (const auto& output : body.output()) use(output.name());
}

// The outer-scope names the branches read, in first-use order (then before else): what each
// reads and does not define itself.
std::vector<std::string> captured_names(const onnx::GraphProto& then_branch,
                                        const onnx::GraphProto& else_branch) {
  std::vector<std::string> captured;
  NameSet taken;
  for (const auto* branch : {&then_branch, &else_branch}) {
    NameSet seen;
    std::vector<std::string> used;
    collect_used(*branch, &seen, &used);
    NameSet defined;
    collect_defined(*branch, &defined);
    for (const std::string& name : used) {
      if (defined.count(name) == 0 && taken.insert(name).second) captured.push_back(name);
    }
  }
  return captured;
}

bool is_static_tensor_type(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (!dim.has_dim_value()) return false;
  }
  return type.tensor_type().elem_type() != 0;
}

// What the main graph knows of its values' types and constants.
struct MainScope {
  TypeMap types;
  InitializerMap initializers;

  explicit MainScope(const onnx::GraphProto& graph) {
    for (const auto& info : graph.value_info()) types[info.name()] = &info.type();
    for (const auto& info : graph.output()) types[info.name()] = &info.type();
    for (const auto& info : graph.input()) types[info.name()] = &info.type();
    for (const auto& initializer : graph.initializer()) {
      initializers[initializer.name()] = &initializer;
    }
    for (const auto& info : graph.input()) initializers.erase(info.name());
  }
  const onnx::TypeProto* static_type(const std::string& name) const {
    const auto it = types.find(name);
    return it != types.end() && is_static_tensor_type(*it->second) ? it->second : nullptr;
  }
};

const onnx::GraphProto* find_branch(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name && attribute.has_g()) return &attribute.g();
  }
  return nullptr;
}

Status check_condition_type(const onnx::NodeProto& node, const onnx::TypeProto& type) {
  int64_t elements = 1;
  for (const auto& dim : type.tensor_type().shape().dim()) elements *= dim.dim_value();
  if (type.tensor_type().elem_type() == onnx::TensorProto::BOOL && elements == 1) {
    return Status::ok();
  }
  std::string dims;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    dims += str_cat(dims.empty() ? "" : ",", dim.dim_value());
  }
  return make_status(StatusCode::kInvalidModel, node_label(node), ": condition '", node.input(0),
                     "' must be a bool tensor of one element, got ",
                     dtype_name(static_cast<DType>(type.tensor_type().elem_type())), " [", dims,
                     "]");
}

// Step 2: one branch as a model whose inputs are the captured runtime values.
onnx::ModelProto branch_model(const onnx::ModelProto& model, const onnx::NodeProto& node,
                              const onnx::GraphProto& branch, const std::string& branch_name,
                              const std::vector<std::string>& captured, const MainScope& scope) {
  onnx::ModelProto sub;
  sub.set_ir_version(model.ir_version());
  *sub.mutable_opset_import() = model.opset_import();
  *sub.mutable_functions() = model.functions();
  onnx::GraphProto* graph = sub.mutable_graph();
  graph->set_name(str_cat(node.name(), "/", branch_name));
  // Every captured runtime value is an input of both branches, in the node's input order, so
  // the runtime matches them by position (graph optimizations may rename the node's inputs).
  for (const std::string& name : captured) {
    const auto constant = scope.initializers.find(name);
    if (constant != scope.initializers.end()) {
      *graph->add_initializer() = *constant->second;
      continue;
    }
    onnx::ValueInfoProto* input = graph->add_input();
    input->set_name(name);
    *input->mutable_type() = *scope.static_type(name);
  }
  for (const auto& initializer : branch.initializer()) *graph->add_initializer() = initializer;
  for (const auto& node_proto : branch.node()) *graph->add_node() = node_proto;
  for (const auto& info : branch.value_info()) *graph->add_value_info() = info;
  // Declared branch output types often carry an exporter's symbolic dims, and ONNX 1.12 leaves
  // a declared type without a shape as it is: only the names are kept, inference types them.
  for (const auto& output : branch.output()) graph->add_output()->set_name(output.name());
  return sub;
}

std::string describe_output(const Graph& graph, size_t i) {
  const Value& value = graph.values[static_cast<size_t>(graph.outputs[i])];
  return str_cat(dtype_name(value.dtype), " ", value.shape.to_string());
}

// Step 3: the branches yield the node's outputs with one type each.
Status check_branches_agree(const onnx::NodeProto& node, const Graph& then_graph,
                            const Graph& else_graph) {
  const size_t count = static_cast<size_t>(node.output_size());
  if (then_graph.outputs.size() != count || else_graph.outputs.size() != count) {
    return make_status(StatusCode::kInvalidModel, node_label(node), ": the node has ", count,
                       " output(s), then_branch ", then_graph.outputs.size(), ", else_branch ",
                       else_graph.outputs.size());
  }
  for (size_t i = 0; i < count; ++i) {
    const Value& a = then_graph.values[static_cast<size_t>(then_graph.outputs[i])];
    const Value& b = else_graph.values[static_cast<size_t>(else_graph.outputs[i])];
    const std::string where =
        str_cat(node_label(node), ": output ", i, " ('", node.output(static_cast<int>(i)), "')");
    if (a.dtype != b.dtype) {
      return make_status(StatusCode::kInvalidModel, where, ": then_branch yields ",
                         describe_output(then_graph, i), ", else_branch ",
                         describe_output(else_graph, i), "; the branches must agree on the dtype");
    }
    if (a.shape != b.shape) {
      return make_status(StatusCode::kUnsupported, where, ": then_branch yields ",
                         describe_output(then_graph, i), ", else_branch ",
                         describe_output(else_graph, i),
                         "; an If whose branches yield different shapes is not supported yet");
    }
  }
  return Status::ok();
}

// The If output's type, from the (agreeing) then branch, as the main graph's value_info and, for
// a graph output, as its declared type (whose dims may be an exporter's symbolic names).
void set_output_types(onnx::GraphProto* graph, const onnx::NodeProto& node,
                      const Graph& then_graph) {
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    const Value& value = then_graph.values[static_cast<size_t>(then_graph.outputs[i])];
    onnx::TypeProto type;
    auto* tensor = type.mutable_tensor_type();
    tensor->set_elem_type(static_cast<int32_t>(value.dtype));
    auto* shape = tensor->mutable_shape();
    for (int axis = 0; axis < value.shape.rank(); ++axis) {
      shape->add_dim()->set_dim_value(value.shape[axis]);
    }
    onnx::ValueInfoProto* info = nullptr;
    for (auto& existing : *graph->mutable_value_info()) {
      if (existing.name() == name) info = &existing;
    }
    if (info == nullptr) info = graph->add_value_info();
    info->set_name(name);
    *info->mutable_type() = type;
    for (auto& output : *graph->mutable_output()) {
      if (output.name() == name) *output.mutable_type() = type;
    }
  }
}

// Step 4: the node as the runtime sees it.
void rewrite_node(onnx::NodeProto* node, const std::vector<std::string>& captured,
                  const MainScope& scope) {
  const std::string condition = node->input(0);
  node->clear_input();
  node->add_input(condition);
  for (const std::string& name : captured) {
    if (scope.initializers.count(name) == 0) node->add_input(name);
  }
  node->clear_attribute();
  node->set_domain(kRuntimeIfDomain);
}

void declare_domain(onnx::ModelProto* model) {
  for (const auto& entry : model->opset_import()) {
    if (entry.domain() == kRuntimeIfDomain) return;
  }
  auto* entry = model->add_opset_import();
  entry->set_domain(kRuntimeIfDomain);
  entry->set_version(1);
}

constexpr const char* kBranchNames[2] = {"then_branch", "else_branch"};

void add_string_attribute(onnx::NodeProto* node, const std::string& name,
                          const std::string& value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

Status check_output_count(const onnx::NodeProto& node, const Graph& branch) {
  if (branch.outputs.size() == static_cast<size_t>(node.output_size())) return Status::ok();
  return make_status(StatusCode::kInvalidModel, node_label(node), ": the node has ",
                     node.output_size(), " output(s), a branch ", branch.outputs.size());
}

// Both branches imported; one that cannot be (the input shapes make it invalid: a silero VAD's
// 8 kHz branch fed 512 samples, which ONNX Runtime also fails to run) is kept as its error, as
// long as the other one imports.
struct ImportedBranches {
  std::vector<std::shared_ptr<const Graph>> graphs{nullptr, nullptr};
  std::string errors[2];
};

Expected<ImportedBranches> import_branches(const onnx::ModelProto& model,
                                           const onnx::NodeProto& node,
                                           const onnx::GraphProto& then_branch,
                                           const onnx::GraphProto& else_branch,
                                           const std::vector<std::string>& captured,
                                           const MainScope& scope,
                                           const BranchImporter& import_branch) {
  ImportedBranches result;
  Status failures[2];
  for (size_t b = 0; b < 2; ++b) {
    onnx::ModelProto sub = branch_model(model, node, b == 0 ? then_branch : else_branch,
                                        kBranchNames[b], captured, scope);
    Expected<Graph> imported = import_branch(&sub);
    if (imported) {
      result.graphs[b] = std::make_shared<const Graph>(std::move(imported).value());
      continue;
    }
    failures[b] = imported.status().with_context(str_cat(node_label(node), ": ", kBranchNames[b]));
    result.errors[b] = imported.status().message();
  }
  if (result.graphs[0] == nullptr) {
    return result.graphs[1] == nullptr || failures[0].code() == StatusCode::kInternal
               ? failures[0]
               : Expected<ImportedBranches>(std::move(result));
  }
  if (result.graphs[1] == nullptr && failures[1].code() == StatusCode::kInternal) {
    return failures[1];
  }
  return result;
}

// Steps 1-4 for one node; false when a captured value's type is not known yet.
Expected<bool> extract_one(onnx::ModelProto* model, onnx::NodeProto* node,
                           const BranchImporter& import_branch, RuntimeIfBranches* branches) {
  const onnx::GraphProto* then_branch = find_branch(*node, "then_branch");
  const onnx::GraphProto* else_branch = find_branch(*node, "else_branch");
  if (then_branch == nullptr || else_branch == nullptr || node->input_size() < 1) {
    return make_status(StatusCode::kInvalidModel, node_label(*node),
                       ": needs a condition and the graph attributes then_branch and else_branch");
  }
  for (const auto* branch : {then_branch, else_branch}) {
    if (branch->input_size() != 0) {
      return make_status(StatusCode::kInvalidModel, node_label(*node), ": a branch has ",
                         branch->input_size(), " input(s); an If branch takes none");
    }
  }
  const MainScope scope(model->graph());
  const std::vector<std::string> captured = captured_names(*then_branch, *else_branch);
  const onnx::TypeProto* condition = scope.static_type(node->input(0));
  if (condition == nullptr) return false;
  ONEPOOL_RETURN_IF_ERROR(check_condition_type(*node, *condition));
  for (const std::string& name : captured) {
    if (scope.initializers.count(name) == 0 && scope.static_type(name) == nullptr) return false;
  }
  ONEPOOL_ASSIGN_OR_RETURN(ImportedBranches imported,
                           import_branches(*model, *node, *then_branch, *else_branch, captured,
                                           scope, import_branch));
  if (imported.graphs[0] != nullptr && imported.graphs[1] != nullptr) {
    ONEPOOL_RETURN_IF_ERROR(check_branches_agree(*node, *imported.graphs[0], *imported.graphs[1]));
  }
  const Graph& typed = imported.graphs[0] != nullptr ? *imported.graphs[0] : *imported.graphs[1];
  ONEPOOL_RETURN_IF_ERROR(check_output_count(*node, typed));
  set_output_types(model->mutable_graph(), *node, typed);
  rewrite_node(node, captured, scope);
  for (size_t b = 0; b < 2; ++b) {
    if (imported.graphs[b] != nullptr) continue;
    add_string_attribute(node, str_cat(kBranchNames[b], "_error"), imported.errors[b]);
    branches->warnings.push_back(
        str_cat(node_label(*node), ": its ", kBranchNames[b],
                " cannot run with these input shapes, and a run that takes it fails: ",
                imported.errors[b]));
  }
  branches->graphs[node->name()] = std::move(imported.graphs);
  return true;
}

}  // namespace

Expected<int> extract_runtime_ifs(onnx::ModelProto* model, const BranchImporter& import_branch,
                                  RuntimeIfBranches* branches) {
  onnx::GraphProto* graph = model->mutable_graph();
  for (int n = 0; n < graph->node_size(); ++n) {
    onnx::NodeProto* node = graph->mutable_node(n);
    if (!is_default_if(*node)) continue;
    ONEPOOL_ASSIGN_OR_RETURN(bool done, extract_one(model, node, import_branch, branches));
    if (!done) continue;
    declare_domain(model);
    return 1;
  }
  return 0;
}

Status attach_runtime_if_branches(Graph* graph, RuntimeIfBranches* branches) {
  for (std::string& warning : branches->warnings) graph->import_warnings.push_back(warning);
  for (Node& node : graph->nodes) {
    if (node.domain != kRuntimeIfDomain || node.op_type != "If") continue;
    const auto it = branches->graphs.find(node.name);
    if (it == branches->graphs.end()) {
      return make_status(StatusCode::kInternal, describe_node(node), ": its branches are missing");
    }
    node.domain.clear();
    node.subgraphs = std::move(it->second);
  }
  return Status::ok();
}

}  // namespace onepool
