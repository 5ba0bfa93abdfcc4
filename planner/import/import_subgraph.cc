// Extracting control-flow bodies into models of their own (see the header).
#include "planner/import/import_subgraph.h"

#include <unordered_set>
#include <utility>

namespace onepool {

namespace {

using NameSet = std::unordered_set<std::string>;

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

}  // namespace

std::vector<std::string> captured_names(std::span<const onnx::GraphProto* const> bodies) {
  std::vector<std::string> captured;
  NameSet taken;
  for (const onnx::GraphProto* body : bodies) {
    NameSet seen;
    std::vector<std::string> used;
    collect_used(*body, &seen, &used);
    NameSet defined;
    collect_defined(*body, &defined);
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

OuterScope::OuterScope(const onnx::GraphProto& graph) {
  for (const auto& info : graph.value_info()) types[info.name()] = &info.type();
  for (const auto& info : graph.output()) types[info.name()] = &info.type();
  for (const auto& info : graph.input()) types[info.name()] = &info.type();
  for (const auto& initializer : graph.initializer()) {
    initializers[initializer.name()] = &initializer;
  }
  for (const auto& info : graph.input()) initializers.erase(info.name());
}

const onnx::TypeProto* OuterScope::static_type(const std::string& name) const {
  const auto it = types.find(name);
  return it != types.end() && is_static_tensor_type(*it->second) ? it->second : nullptr;
}

bool OuterScope::is_known(const std::string& name) const {
  return initializers.count(name) != 0 || static_type(name) != nullptr;
}

std::optional<onnx::TypeProto> OuterScope::known_type(const std::string& name) const {
  const auto constant = initializers.find(name);
  if (constant != initializers.end()) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(constant->second->data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    for (int64_t dim : constant->second->dims()) shape->add_dim()->set_dim_value(dim);
    return type;
  }
  const onnx::TypeProto* type = static_type(name);
  if (type == nullptr) return std::nullopt;
  return *type;
}

const onnx::GraphProto* find_graph_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name && attribute.has_g()) return &attribute.g();
  }
  return nullptr;
}

onnx::ModelProto body_model(const onnx::ModelProto& model, const std::string& name,
                            const onnx::GraphProto& body,
                            const std::vector<onnx::ValueInfoProto>& leading,
                            const std::vector<std::string>& captured, const OuterScope& scope) {
  onnx::ModelProto sub;
  sub.set_ir_version(model.ir_version());
  *sub.mutable_opset_import() = model.opset_import();
  *sub.mutable_functions() = model.functions();
  onnx::GraphProto* graph = sub.mutable_graph();
  graph->set_name(name);
  for (const auto& input : leading) *graph->add_input() = input;
  // Captured runtime values follow in the node's input order, so the runtime matches them by
  // position (graph optimizations may rename the node's inputs).
  for (const std::string& captured_name : captured) {
    const auto constant = scope.initializers.find(captured_name);
    if (constant != scope.initializers.end()) {
      *graph->add_initializer() = *constant->second;
      continue;
    }
    onnx::ValueInfoProto* input = graph->add_input();
    input->set_name(captured_name);
    *input->mutable_type() = *scope.static_type(captured_name);
  }
  for (const auto& initializer : body.initializer()) *graph->add_initializer() = initializer;
  for (const auto& node : body.node()) *graph->add_node() = node;
  for (const auto& info : body.value_info()) *graph->add_value_info() = info;
  // Declared body output types often carry an exporter's symbolic dims, and ONNX 1.12 leaves a
  // declared type without a shape as it is: only the names are kept, inference types them.
  for (const auto& output : body.output()) graph->add_output()->set_name(output.name());
  return sub;
}

onnx::TypeProto type_of(const Value& value) {
  onnx::TypeProto type;
  auto* tensor = type.mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(value.dtype));
  auto* shape = tensor->mutable_shape();
  for (int axis = 0; axis < value.shape.rank(); ++axis) {
    shape->add_dim()->set_dim_value(value.shape[axis]);
  }
  return type;
}

void set_value_type(onnx::GraphProto* graph, const std::string& name, const onnx::TypeProto& type) {
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

void make_runtime_node(onnx::ModelProto* model, onnx::NodeProto* node,
                       const std::vector<std::string>& captured, const OuterScope& scope) {
  for (const std::string& name : captured) {
    if (scope.initializers.count(name) == 0) node->add_input(name);
  }
  auto* attributes = node->mutable_attribute();
  for (int i = attributes->size() - 1; i >= 0; --i) {
    if (attributes->Get(i).has_g() || attributes->Get(i).graphs_size() > 0) {
      attributes->DeleteSubrange(i, 1);
    }
  }
  node->set_domain(kRuntimeIfDomain);
  for (const auto& entry : model->opset_import()) {
    if (entry.domain() == kRuntimeIfDomain) return;
  }
  auto* entry = model->add_opset_import();
  entry->set_domain(kRuntimeIfDomain);
  entry->set_version(1);
}

void finish_body_extraction(onnx::ModelProto* model, onnx::NodeProto* node,
                            const std::vector<std::string>& captured, const OuterScope& scope,
                            const char* count_name, int64_t count, Graph body,
                            RuntimeIfBranches* bodies) {
  make_runtime_node(model, node, captured, scope);
  auto* attribute = node->add_attribute();
  attribute->set_name(std::string(count_name));
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(count);
  bodies->graphs[node->name()] = {std::make_shared<const Graph>(std::move(body))};
}

Expected<int> extract_first(onnx::ModelProto* model,
                            const std::function<bool(const onnx::NodeProto&)>& matches,
                            const ExtractOne& extract_one) {
  onnx::GraphProto* graph = model->mutable_graph();
  for (int n = 0; n < graph->node_size(); ++n) {
    onnx::NodeProto* node = graph->mutable_node(n);
    if (!matches(*node)) continue;
    ONEPOOL_ASSIGN_OR_RETURN(bool done, extract_one(node));
    if (done) return 1;
  }
  return 0;
}

Status attach_runtime_bodies(Graph* graph, RuntimeIfBranches* bodies) {
  for (std::string& warning : bodies->warnings) graph->import_warnings.push_back(warning);
  for (Node& node : graph->nodes) {
    if (node.domain != kRuntimeIfDomain) continue;
    const auto it = bodies->graphs.find(node.name);
    if (it == bodies->graphs.end()) {
      return make_status(StatusCode::kInternal, describe_node(node), ": its bodies are missing");
    }
    node.domain.clear();
    node.subgraphs = std::move(it->second);
  }
  return Status::ok();
}

}  // namespace onepool
