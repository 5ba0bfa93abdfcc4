// Runtime If: each branch imported as a Graph of its own (see the header for the steps).
#include "planner/import/import_runtime_if.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace onepool {

namespace {

bool is_default_if(const onnx::NodeProto& node) {
  return node.op_type() == "If" && (node.domain().empty() || node.domain() == "ai.onnx");
}

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (If)");
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
    if (a.shape.rank() != b.shape.rank()) {
      return make_status(StatusCode::kUnsupported, where, ": then_branch yields ",
                         describe_output(then_graph, i), ", else_branch ",
                         describe_output(else_graph, i),
                         "; an If whose branches yield different ranks is not supported");
    }
  }
  return Status::ok();
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

Expected<ImportedBranches> import_branches(
    const onnx::ModelProto& model, const onnx::NodeProto& node, const onnx::GraphProto& then_branch,
    const onnx::GraphProto& else_branch, const std::vector<std::string>& captured,
    const OuterScope& scope, const BranchImporter& import_branch) {
  ImportedBranches result;
  Status failures[2];
  for (size_t b = 0; b < 2; ++b) {
    onnx::ModelProto sub = body_model(model, str_cat(node.name(), "/", kBranchNames[b]),
                                      b == 0 ? then_branch : else_branch, {}, captured, scope);
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

// Output i of an If whose two branches yield different shapes (check_branches_agree has checked
// the ranks): `shape` becomes the larger dim of the two on each axis, and the reason says so;
// empty (shape unchanged) when the branches agree or only one imported.
std::string bound_of_branch_outputs(const onnx::NodeProto& node,
                                    const std::vector<std::shared_ptr<const Graph>>& graphs,
                                    size_t i, Shape* shape) {
  if (graphs[0] == nullptr || graphs[1] == nullptr) return "";
  const Shape& a = graphs[0]->values[static_cast<size_t>(graphs[0]->outputs[i])].shape;
  const Shape& b = graphs[1]->values[static_cast<size_t>(graphs[1]->outputs[i])].shape;
  if (a == b) return "";
  for (int axis = 0; axis < a.rank(); ++axis) (*shape)[axis] = std::max(a[axis], b[axis]);
  return str_cat(node_label(node), ": then_branch yields ", a.to_string(), ", else_branch ",
                 b.to_string(), ": at most ", shape->to_string());
}

// Steps 1-4 for one node; false when a captured value's type is not known yet.
Expected<bool> extract_one(onnx::ModelProto* model, onnx::NodeProto* node,
                           const BranchImporter& import_branch, RuntimeIfBranches* branches) {
  const onnx::GraphProto* then_branch = find_graph_attribute(*node, "then_branch");
  const onnx::GraphProto* else_branch = find_graph_attribute(*node, "else_branch");
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
  const OuterScope scope(model->graph());
  const onnx::GraphProto* bodies[2] = {then_branch, else_branch};
  const std::vector<std::string> captured = captured_names(bodies);
  const onnx::TypeProto* condition = scope.static_type(node->input(0));
  if (condition == nullptr) return false;
  ONEPOOL_RETURN_IF_ERROR(check_condition_type(*node, *condition));
  for (const std::string& name : captured) {
    if (!scope.is_known(name)) return false;
  }
  ONEPOOL_ASSIGN_OR_RETURN(
      ImportedBranches imported,
      import_branches(*model, *node, *then_branch, *else_branch, captured, scope, import_branch));
  if (imported.graphs[0] != nullptr && imported.graphs[1] != nullptr) {
    ONEPOOL_RETURN_IF_ERROR(check_branches_agree(*node, *imported.graphs[0], *imported.graphs[1]));
  }
  const Graph& typed = imported.graphs[0] != nullptr ? *imported.graphs[0] : *imported.graphs[1];
  ONEPOOL_RETURN_IF_ERROR(check_output_count(*node, typed));
  for (int i = 0; i < node->output_size(); ++i) {
    if (node->output(i).empty()) continue;
    Value output = typed.values[static_cast<size_t>(typed.outputs[i])];
    std::string reason =
        bound_of_branch_outputs(*node, imported.graphs, static_cast<size_t>(i), &output.shape);
    if (!reason.empty()) branches->bounds[node->output(i)] = std::move(reason);
    set_value_type(model->mutable_graph(), node->output(i), type_of(output));
  }
  make_runtime_node(model, node, captured, scope);
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
  return extract_first(model, is_default_if, [&](onnx::NodeProto* node) {
    return extract_one(model, node, import_branch, branches);
  });
}

}  // namespace onepool
