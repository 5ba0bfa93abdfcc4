// Inlining of If nodes whose condition is a constant.
#include "planner/import/import_inline_if.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "planner/import/import_tensor.h"
#include "planner/import/import_topo_sort.h"

namespace onepool {

namespace {

using NameSet = std::unordered_set<std::string>;
using NameMap = std::unordered_map<std::string, std::string>;
using ConstantMap = std::unordered_map<std::string, const onnx::TensorProto*>;

bool is_if(const onnx::NodeProto& node) {
  return node.op_type() == "If" && (node.domain().empty() || node.domain() == "ai.onnx");
}

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (If)");
}

// Every name in `graph` and the bodies nested in it. New names avoid them all: ONNX forbids a body
// to reuse a name of an enclosing scope, so a new main-graph name must not appear in any body.
void collect_names(const onnx::GraphProto& graph, NameSet* names) {
  for (const auto& info : graph.input()) names->insert(info.name());
  for (const auto& info : graph.output()) names->insert(info.name());
  for (const auto& info : graph.value_info()) names->insert(info.name());
  for (const auto& initializer : graph.initializer()) names->insert(initializer.name());
  for (const auto& node : graph.node()) {
    names->insert(node.name());
    names->insert(node.input().begin(), node.input().end());
    names->insert(node.output().begin(), node.output().end());
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) collect_names(attribute.g(), names);
      for (const auto& body : attribute.graphs()) collect_names(body, names);
    }
  }
}

std::string describe_proto_type(const onnx::TensorProto& tensor) {
  std::string dims;
  for (int64_t dim : tensor.dims()) dims += str_cat(dims.empty() ? "" : ",", dim);
  return str_cat(onnx_dtype_name(tensor.data_type()), " [", dims, "]");
}

// The If's condition when it is a constant; nullopt when `node` is no If or its condition is only
// known at run time.
Expected<std::optional<bool>> constant_condition(const onnx::NodeProto& node,
                                                 const ConstantMap& constants) {
  if (!is_if(node)) return std::optional<bool>();
  if (node.input_size() < 1 || node.input(0).empty()) {
    return make_status(StatusCode::kInvalidModel, node_label(node), ": has no condition input");
  }
  const auto it = constants.find(node.input(0));
  if (it == constants.end()) return std::optional<bool>();
  const onnx::TensorProto& tensor = *it->second;
  if (tensor.data_type() != onnx::TensorProto::BOOL || proto_element_count(tensor) != 1) {
    return make_status(StatusCode::kInvalidModel, node_label(node), ": condition '", node.input(0),
                       "' must be a bool tensor of one element, got ", describe_proto_type(tensor));
  }
  auto host = host_tensor_from_proto(tensor);
  if (!host) {
    return host.status().with_context(
        str_cat(node_label(node), ": condition '", node.input(0), "'"));
  }
  return std::optional<bool>(host->data.at(0) != std::byte{0});
}

const onnx::GraphProto* find_branch(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name && attribute.has_g()) return &attribute.g();
  }
  return nullptr;
}

// Copies one branch of one If into the main graph (Step 2 of the header).
class BranchInliner {
 public:
  BranchInliner(const onnx::NodeProto& node, NameSet* taken)
      : node_(node),
        prefix_(node.name().empty() ? std::string("If") : node.name()),
        taken_(taken) {}

  /// Appends the branch's nodes (and output Identities) to `nodes`, its renamed initializers to
  /// `initializers`.
  Status run(const onnx::GraphProto& branch, const std::string& branch_name,
             std::vector<onnx::NodeProto>* nodes, std::vector<onnx::TensorProto>* initializers);

 private:
  std::string fresh(const std::string& name);
  const std::string& renamed(const std::string& name) const;
  void rename_node(onnx::NodeProto* node) const;
  void rename_body(onnx::GraphProto* body) const;
  Status check_branch(const onnx::GraphProto& branch, const std::string& branch_name) const;
  void map_names(const onnx::GraphProto& branch);

  const onnx::NodeProto& node_;
  std::string prefix_;
  NameSet* taken_;
  NameMap renames_;           // branch-defined name -> its main-graph name
  std::vector<bool> direct_;  // per If output: a branch node writes it under its own name
};

std::string BranchInliner::fresh(const std::string& name) {
  std::string candidate = str_cat(prefix_, "/", name);
  for (int suffix = 1; taken_->count(candidate) != 0; ++suffix) {
    candidate = str_cat(prefix_, "/", name, "_", suffix);
  }
  taken_->insert(candidate);
  return candidate;
}

const std::string& BranchInliner::renamed(const std::string& name) const {
  const auto it = renames_.find(name);
  return it == renames_.end() ? name : it->second;  // outer-scope names keep theirs
}

void BranchInliner::rename_node(onnx::NodeProto* node) const {
  for (auto& input : *node->mutable_input()) input = renamed(input);
  for (auto& output : *node->mutable_output()) output = renamed(output);
  for (auto& attribute : *node->mutable_attribute()) {
    if (attribute.has_g()) rename_body(attribute.mutable_g());
    for (auto& body : *attribute.mutable_graphs()) rename_body(&body);
  }
}

// A body nested in the branch reads branch names from its outer scope; its own names cannot be
// branch names (no shadowing in ONNX), so one map serves every level.
void BranchInliner::rename_body(onnx::GraphProto* body) const {
  for (auto& info : *body->mutable_input()) info.set_name(renamed(info.name()));
  for (auto& info : *body->mutable_output()) info.set_name(renamed(info.name()));
  for (auto& info : *body->mutable_value_info()) info.set_name(renamed(info.name()));
  for (auto& initializer : *body->mutable_initializer()) {
    initializer.set_name(renamed(initializer.name()));
  }
  for (auto& node : *body->mutable_node()) rename_node(&node);
}

Status BranchInliner::check_branch(const onnx::GraphProto& branch,
                                   const std::string& branch_name) const {
  const std::string where = str_cat(node_label(node_), ": ", branch_name);
  if (branch.input_size() != 0) {
    return make_status(StatusCode::kInvalidModel, where, " has ", branch.input_size(),
                       " input(s); an If branch takes none");
  }
  if (branch.output_size() != node_.output_size()) {
    return make_status(StatusCode::kInvalidModel, where, " has ", branch.output_size(),
                       " output(s), the node ", node_.output_size());
  }
  if (branch.sparse_initializer_size() != 0) {
    return make_status(StatusCode::kUnsupported, where, " has sparse initializers");
  }
  return Status::ok();
}

// Branch outputs written by a branch node take the If output's name (no copy); every other name
// the branch defines gets a fresh prefixed one.
void BranchInliner::map_names(const onnx::GraphProto& branch) {
  NameSet produced;
  for (const auto& node : branch.node())
    produced.insert(node.output().begin(), node.output().end());
  produced.erase("");
  direct_.assign(static_cast<size_t>(branch.output_size()), false);
  for (int i = 0; i < branch.output_size(); ++i) {
    const std::string& inner = branch.output(i).name();
    if (node_.output(i).empty() || produced.count(inner) == 0 || renames_.count(inner) != 0) {
      continue;
    }
    renames_[inner] = node_.output(i);
    direct_[static_cast<size_t>(i)] = true;
  }
  for (const auto& initializer : branch.initializer()) {
    if (renames_.count(initializer.name()) == 0) {
      renames_[initializer.name()] = fresh(initializer.name());
    }
  }
  for (const auto& node : branch.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty() && renames_.count(output) == 0) renames_[output] = fresh(output);
    }
  }
}

Status BranchInliner::run(const onnx::GraphProto& branch, const std::string& branch_name,
                          std::vector<onnx::NodeProto>* nodes,
                          std::vector<onnx::TensorProto>* initializers) {
  ONEPOOL_RETURN_IF_ERROR(check_branch(branch, branch_name));
  map_names(branch);
  for (const auto& initializer : branch.initializer()) {
    initializers->push_back(initializer);
    initializers->back().set_name(renamed(initializer.name()));
  }
  for (int n = 0; n < branch.node_size(); ++n) {
    onnx::NodeProto node = branch.node(n);
    rename_node(&node);
    node.set_name(fresh(node.name().empty() ? str_cat(node.op_type(), "_", n) : node.name()));
    nodes->push_back(std::move(node));
  }
  // An output that is an outer-scope value, a branch initializer, or a second output of the same
  // value still needs a node that writes the If output's name.
  for (int i = 0; i < branch.output_size(); ++i) {
    if (direct_[static_cast<size_t>(i)] || node_.output(i).empty()) continue;
    onnx::NodeProto identity;
    identity.set_op_type(std::string("Identity"));
    identity.set_name(fresh(str_cat("output_", i)));
    identity.add_input(renamed(branch.output(i).name()));
    identity.add_output(node_.output(i));
    nodes->push_back(std::move(identity));
  }
  return Status::ok();
}

}  // namespace

Expected<int> inline_constant_ifs(onnx::GraphProto* graph) {
  // Step 1. Constants are initializers a caller cannot override.
  ConstantMap constants;
  for (const auto& initializer : graph->initializer()) {
    constants[initializer.name()] = &initializer;
  }
  for (const auto& input : graph->input()) constants.erase(input.name());
  std::vector<std::optional<bool>> conditions;
  bool any = false;
  for (const auto& node : graph->node()) {
    ONEPOOL_ASSIGN_OR_RETURN(std::optional<bool> condition, constant_condition(node, constants));
    any = any || condition.has_value();
    conditions.push_back(condition);
  }
  if (!any) return 0;
  // Step 2.
  NameSet taken;
  collect_names(*graph, &taken);
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> initializers;
  int inlined = 0;
  for (int n = 0; n < graph->node_size(); ++n) {
    const onnx::NodeProto& node = graph->node(n);
    const std::optional<bool> condition = conditions[static_cast<size_t>(n)];
    if (!condition) {
      nodes.push_back(node);
      continue;
    }
    const std::string branch_name = *condition ? "then_branch" : "else_branch";
    const onnx::GraphProto* branch = find_branch(node, branch_name);
    if (branch == nullptr) {
      return make_status(StatusCode::kInvalidModel, node_label(node), ": has no graph attribute '",
                         branch_name, "'");
    }
    BranchInliner inliner(node, &taken);
    ONEPOOL_RETURN_IF_ERROR(inliner.run(*branch, branch_name, &nodes, &initializers));
    ++inlined;
  }
  graph->clear_node();
  for (auto& node : nodes) *graph->add_node() = std::move(node);
  for (auto& initializer : initializers) *graph->add_initializer() = std::move(initializer);
  // Step 3.
  ONEPOOL_RETURN_IF_ERROR(sort_nodes_topologically(graph));
  return inlined;
}

Status check_no_runtime_if(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    if (!is_if(node)) continue;
    return make_status(StatusCode::kUnsupported, node_label(node), ": its condition '",
                       node.input_size() > 0 ? node.input(0) : std::string(),
                       "' is only known at run time, and the condition or a value its branches "
                       "read from outside has no static shape at load (an If with a runtime "
                       "condition needs them static: bind the input shapes, e.g. --shapes)");
  }
  return Status::ok();
}

}  // namespace onepool
