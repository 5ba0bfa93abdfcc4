// ModelProto → Graph.
#include "planner/import/import_convert.h"

#include "planner/import/import_shape_diagnosis.h"
#include "planner/import/import_tensor.h"

namespace onepool {

namespace {

// Why a value has no static shape; empty when it has one (and `value` is filled).
std::string describe_type(const onnx::TypeProto* type, Value* value) {
  if (type == nullptr || !type->has_tensor_type()) return "unknown dtype and shape";
  const auto& tensor = type->tensor_type();
  value->dtype = dtype_from_onnx(tensor.elem_type());
  if (tensor.elem_type() == 0) return "unknown dtype";
  if (value->dtype == DType::kUndefined) {
    return str_cat("unsupported dtype ", onnx_dtype_name(tensor.elem_type()));
  }
  if (!tensor.has_shape()) return "unknown rank";
  std::vector<int64_t> dims;
  for (int axis = 0; axis < tensor.shape().dim_size(); ++axis) {
    const auto& dim = tensor.shape().dim(axis);
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      return str_cat("unknown dim at axis ", axis,
                     dim.dim_param().empty() ? "" : str_cat(" ('", dim.dim_param(), "')"));
    }
    dims.push_back(dim.dim_value());
  }
  auto shape = Shape::from_dims(dims);
  if (!shape) return shape.status().message();
  auto bytes = tensor_bytes(*shape, value->dtype);
  if (!bytes) return bytes.status().message();
  value->shape = *shape;
  return "";
}

class GraphBuilder {
 public:
  GraphBuilder(onnx::GraphProto* proto, const DeclaredDims& declared)
      : proto_(proto), declared_(declared) {}

  Expected<Graph> build(int64_t opset, const std::string& strict_error);

 private:
  void index_types();
  Status add_inputs();
  Status add_weights();
  Status add_node(onnx::NodeProto& proto_node, int index);
  ValueId value_for(const std::string& name, NodeId producer);
  Status mark_outputs();
  Status check_shapes(const std::string& strict_error) const;

  onnx::GraphProto* proto_;
  const DeclaredDims& declared_;
  Graph graph_;
  std::unordered_map<std::string, ValueId> ids_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
  std::vector<std::string> problems_;
  std::vector<std::string> invalid_nodes_;  // nodes whose own attributes or constants are wrong
};

void GraphBuilder::index_types() {
  for (const auto& info : proto_->value_info()) types_[info.name()] = &info.type();
  for (const auto& info : proto_->output()) {
    if (info.type().has_tensor_type()) types_[info.name()] = &info.type();
  }
  for (const auto& info : proto_->input()) types_[info.name()] = &info.type();
}

Status GraphBuilder::add_inputs() {
  for (const auto& input : proto_->input()) {
    Value value;
    value.name = input.name();
    value.kind = ValueKind::kGraphInput;
    const std::string why = describe_type(&input.type(), &value);
    if (!why.empty()) {
      return make_status(StatusCode::kInvalidArgument, "input '", input.name(), "': ", why);
    }
    const auto it = declared_.find(input.name());
    if (it != declared_.end()) value.declared_dims = it->second;
    const ValueId id = graph_.add_value(std::move(value));
    ids_[input.name()] = id;
    graph_.inputs.push_back(id);
  }
  return Status::ok();
}

Status GraphBuilder::add_weights() {
  for (auto& initializer : *proto_->mutable_initializer()) {
    if (ids_.count(initializer.name()) != 0) continue;
    auto tensor = host_tensor_from_proto(initializer);
    if (!tensor) return tensor.status().with_context(str_cat("weight '", initializer.name(), "'"));
    initializer.clear_raw_data();  // the Graph holds the only copy from here on
    Value value;
    value.name = initializer.name();
    value.kind = ValueKind::kWeight;
    value.dtype = tensor->dtype;
    value.shape = tensor->shape;
    value.weight_index = static_cast<int32_t>(graph_.weights.size());
    graph_.weights.push_back(std::move(tensor).value());
    const std::string name = value.name;
    ids_[name] = graph_.add_value(std::move(value));
  }
  return Status::ok();
}

ValueId GraphBuilder::value_for(const std::string& name, NodeId producer) {
  if (name.empty()) return kNoValue;
  const auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  Value value;
  value.name = name;
  value.producer = producer;
  const auto type = types_.find(name);
  const std::string why = describe_type(type == types_.end() ? nullptr : type->second, &value);
  if (!why.empty()) {
    const Node& node = graph_.nodes[static_cast<size_t>(producer)];
    problems_.push_back(str_cat("tensor '", name, "' (from ", describe_node(node), "): ", why));
    const std::string invalid = diagnose_invalid_output_shape(graph_, node);
    if (!invalid.empty()) invalid_nodes_.push_back(str_cat(describe_node(node), ": ", invalid));
  }
  const ValueId id = graph_.add_value(std::move(value));
  ids_[name] = id;
  return id;
}

Expected<Attribute> convert_attribute(const onnx::AttributeProto& proto, bool* keep) {
  Attribute attribute;
  *keep = true;
  switch (proto.type()) {
    case onnx::AttributeProto::INT:
      attribute.kind = Attribute::Kind::kInt;
      attribute.i = proto.i();
      break;
    case onnx::AttributeProto::FLOAT:
      attribute.kind = Attribute::Kind::kFloat;
      attribute.f = proto.f();
      break;
    case onnx::AttributeProto::STRING:
      attribute.kind = Attribute::Kind::kString;
      attribute.s = proto.s();
      break;
    case onnx::AttributeProto::INTS:
      attribute.kind = Attribute::Kind::kInts;
      attribute.ints.assign(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      attribute.kind = Attribute::Kind::kFloats;
      attribute.floats.assign(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      attribute.kind = Attribute::Kind::kStrings;
      attribute.strings.assign(proto.strings().begin(), proto.strings().end());
      break;
    case onnx::AttributeProto::TENSOR: {
      attribute.kind = Attribute::Kind::kTensor;
      ONEPOOL_ASSIGN_OR_RETURN(attribute.tensor, host_tensor_from_proto(proto.t()));
      break;
    }
    case onnx::AttributeProto::GRAPH:
    case onnx::AttributeProto::GRAPHS:
      attribute.kind = Attribute::Kind::kGraph;
      break;
    default:
      *keep = false;
  }
  return attribute;
}

Status GraphBuilder::add_node(onnx::NodeProto& proto_node, int index) {
  Node node;
  node.name =
      proto_node.name().empty() ? str_cat(proto_node.op_type(), "_", index) : proto_node.name();
  node.op_type = proto_node.op_type();
  node.domain = proto_node.domain() == "ai.onnx" ? "" : proto_node.domain();
  for (const auto& proto_attribute : proto_node.attribute()) {
    bool keep = false;
    auto attribute = convert_attribute(proto_attribute, &keep);
    if (!attribute) {
      return attribute.status().with_context(
          str_cat(describe_node(node), ": attribute '", proto_attribute.name(), "'"));
    }
    if (keep) node.attributes.set(proto_attribute.name(), std::move(attribute).value());
  }
  const auto id = static_cast<NodeId>(graph_.nodes.size());
  for (const std::string& name : proto_node.input()) {
    const auto it = ids_.find(name);
    if (!name.empty() && it == ids_.end()) {
      return make_status(StatusCode::kInvalidModel, describe_node(node), ": input tensor '", name,
                         "' is not produced by an earlier node (cycle or dangling input)");
    }
    node.inputs.push_back(name.empty() ? kNoValue : it->second);
  }
  graph_.nodes.push_back(std::move(node));
  for (const std::string& name : proto_node.output()) {
    graph_.nodes.back().outputs.push_back(value_for(name, id));
  }
  return Status::ok();
}

Status GraphBuilder::mark_outputs() {
  for (const auto& output : proto_->output()) {
    const auto it = ids_.find(output.name());
    if (it == ids_.end()) {
      return make_status(StatusCode::kInvalidModel, "graph output '", output.name(),
                         "' is not produced by any node");
    }
    graph_.values[static_cast<size_t>(it->second)].is_graph_output = true;
    graph_.outputs.push_back(it->second);
  }
  return Status::ok();
}

// ONNX's own inference rejected a node (wrong attribute sizes, mismatched ranks): the model is
// invalid, not merely beyond OnePool. Ops without a schema fail inference too, and are not.
bool strict_error_says_invalid(const std::string& strict_error) {
  if (strict_error.empty()) return false;
  if (strict_error.find("No Op registered") != std::string::npos) return false;
  if (strict_error.find("not a registered function/op") != std::string::npos) return false;
  return strict_error.find("InferenceError]") != std::string::npos;
}

Status GraphBuilder::check_shapes(const std::string& strict_error) const {
  if (problems_.empty()) return Status::ok();
  if (!invalid_nodes_.empty()) {
    std::string reasons;
    for (const auto& reason : invalid_nodes_) reasons += str_cat("\n  ", reason);
    return make_status(StatusCode::kInvalidModel, "the model is invalid:", reasons);
  }
  std::string list;
  for (const auto& problem : problems_) list += str_cat("\n  ", problem);
  if (strict_error_says_invalid(strict_error)) {
    return make_status(StatusCode::kInvalidModel,
                       "the model is invalid: ONNX shape inference: ", strict_error, "\nso ",
                       problems_.size(), " tensor(s) have no known dtype and static shape:", list);
  }
  return make_status(StatusCode::kUnsupported, problems_.size(),
                     " tensor(s) have no known dtype and static shape after shape inference and "
                     "constant folding:",
                     list,
                     strict_error.empty() ? "" : str_cat("\nONNX shape inference: ", strict_error));
}

Expected<Graph> GraphBuilder::build(int64_t opset, const std::string& strict_error) {
  graph_.name = proto_->name();
  graph_.opset = opset;
  index_types();
  ONEPOOL_RETURN_IF_ERROR(add_inputs());
  ONEPOOL_RETURN_IF_ERROR(add_weights());
  for (int n = 0; n < proto_->node_size(); ++n) {
    ONEPOOL_RETURN_IF_ERROR(add_node(*proto_->mutable_node(n), n));
  }
  ONEPOOL_RETURN_IF_ERROR(mark_outputs());
  ONEPOOL_RETURN_IF_ERROR(check_shapes(strict_error));
  graph_.rebuild_edges();
  return std::move(graph_);
}

}  // namespace

Expected<Graph> convert_to_graph(onnx::ModelProto* model, const DeclaredDims& declared,
                                 const std::string& strict_error) {
  int64_t opset = 0;
  for (const auto& entry : model->opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") opset = entry.version();
  }
  GraphBuilder builder(model->mutable_graph(), declared);
  return builder.build(opset, strict_error);
}

}  // namespace onepool
