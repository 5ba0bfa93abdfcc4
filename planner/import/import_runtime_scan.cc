// Scan bodies as Graphs of their own (see the header for the steps).
#include "planner/import/import_runtime_scan.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/import/import_attributes.h"
#include "planner/import/import_scan_batch.h"

namespace onepool {

namespace {

bool is_default_scan(const onnx::NodeProto& node) {
  return node.op_type() == "Scan" && (node.domain().empty() || node.domain() == "ai.onnx");
}

// A Scan to extract: a default-domain one, or one row of a split Scan-8 (import_scan_batch.h).
bool is_scan_to_extract(const onnx::NodeProto& node) {
  return is_default_scan(node) ||
         (node.domain() == kRuntimeIfDomain && node.op_type() == kScanBatchRowOp);
}

int index_in_graph(const onnx::GraphProto& graph, const onnx::NodeProto* node) {
  for (int n = 0; n < graph.node_size(); ++n) {
    if (&graph.node(n) == node) return n;
  }
  return -1;
}

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (Scan)");
}

int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") return entry.version();
  }
  return 0;
}

// Axis attribute `name`[i] of `node` (default 0), normalized against `rank`; -1 when out of range.
int axis_of(const onnx::NodeProto& node, const std::string& name, size_t i, int rank) {
  bool found = false;
  const std::vector<int64_t> axes = attribute_ints(node, name, &found);
  const int64_t axis = found && i < axes.size() ? axes[i] : 0;
  return normalize_axis(axis, rank);
}

struct ScanLayout {
  int states = 0;
  int scans = 0;
  int64_t length = -1;
  std::vector<onnx::ValueInfoProto> leading;  // body inputs: states, then scan slices
};

// Steps 1-2: the body's typed leading inputs; nullopt while an input's type is unknown.
Expected<std::optional<ScanLayout>> layout_of(const onnx::NodeProto& node,
                                              const onnx::GraphProto& body,
                                              const OuterScope& scope) {
  ScanLayout layout;
  layout.scans = static_cast<int>(attribute_int(node, "num_scan_inputs", -1));
  layout.states = node.input_size() - layout.scans;
  if (layout.scans < 1 || layout.states < 0 || body.input_size() != node.input_size() ||
      body.output_size() != node.output_size()) {
    return make_status(StatusCode::kInvalidModel, node_label(node),
                       ": num_scan_inputs, the node's inputs and outputs must fit the body's ",
                       body.input_size(), " inputs and ", body.output_size(), " outputs");
  }
  for (int i = 0; i < node.input_size(); ++i) {
    std::optional<onnx::TypeProto> type = scope.known_type(node.input(i));
    if (!type) return std::optional<ScanLayout>();
    onnx::ValueInfoProto input;
    input.set_name(body.input(i).name());
    if (i >= layout.states) {
      const auto& dims = type->tensor_type().shape().dim();
      const int axis =
          axis_of(node, "scan_input_axes", static_cast<size_t>(i - layout.states), dims.size());
      if (axis < 0) {
        return make_status(StatusCode::kInvalidModel, node_label(node), ": scan input ", i,
                           " has no axis in scan_input_axes for its rank ", dims.size());
      }
      const int64_t length = dims.Get(axis).dim_value();
      if (layout.length >= 0 && length != layout.length) {
        return make_status(StatusCode::kInvalidModel, node_label(node),
                           ": scan inputs differ in length (", layout.length, " and ", length, ")");
      }
      layout.length = length;
      type->mutable_tensor_type()->mutable_shape()->mutable_dim()->DeleteSubrange(axis, 1);
    }
    *input.mutable_type() = *type;
    layout.leading.push_back(std::move(input));
  }
  return std::optional<ScanLayout>(std::move(layout));
}

std::string describe(const Value& value) {
  return str_cat(dtype_name(value.dtype), " ", value.shape.to_string());
}

// Step 3: the Scan's output types.
Status set_scan_output_types(onnx::ModelProto* model, const onnx::NodeProto& node,
                             const Graph& body, const ScanLayout& layout) {
  for (int i = 0; i < node.output_size(); ++i) {
    const Value& out = body.values[static_cast<size_t>(body.outputs[static_cast<size_t>(i)])];
    if (i < layout.states) {
      const Value& in = body.values[static_cast<size_t>(body.inputs[static_cast<size_t>(i)])];
      if (in.dtype != out.dtype || in.shape != out.shape) {
        return make_status(StatusCode::kUnsupported, node_label(node), ": state ", i, " ('",
                           in.name, "') enters as ", describe(in), " and leaves a step as ",
                           describe(out), "; a state that changes is not supported");
      }
    }
    if (node.output(i).empty()) continue;
    onnx::TypeProto type = type_of(out);
    if (i >= layout.states) {
      auto* dims = type.mutable_tensor_type()->mutable_shape()->mutable_dim();
      const int axis = axis_of(node, "scan_output_axes", static_cast<size_t>(i - layout.states),
                               out.shape.rank() + 1);
      if (axis < 0) {
        return make_status(StatusCode::kInvalidModel, node_label(node), ": scan output ", i,
                           " has no axis in scan_output_axes");
      }
      dims->Add()->set_dim_value(layout.length);
      for (int d = dims->size() - 1; d > axis; --d) dims->SwapElements(d, d - 1);
    }
    set_value_type(model->mutable_graph(), node.output(i), type);
  }
  return Status::ok();
}

Expected<bool> extract_one(onnx::ModelProto* model, onnx::NodeProto* node,
                           const BranchImporter& import_body, RuntimeIfBranches* bodies) {
  const bool batch_row = node->op_type() == kScanBatchRowOp;
  if (!batch_row && default_opset(*model) < 9) {
    return split_scan8_by_batch(model, index_in_graph(model->graph(), node));
  }
  const onnx::GraphProto* body = find_graph_attribute(*node, "body");
  if (body == nullptr) {
    return make_status(StatusCode::kInvalidModel, node_label(*node), ": has no body");
  }
  const OuterScope scope(model->graph());
  ONEPOOL_ASSIGN_OR_RETURN(std::optional<ScanLayout> layout, layout_of(*node, *body, scope));
  if (!layout) return false;
  const onnx::GraphProto* bodies_read[1] = {body};
  const std::vector<std::string> captured = captured_names(bodies_read);
  for (const std::string& name : captured) {
    if (!scope.is_known(name)) return false;
  }
  onnx::ModelProto sub =
      body_model(*model, str_cat(node->name(), "/body"), *body, layout->leading, captured, scope);
  Expected<Graph> imported = import_body(&sub);
  if (!imported) return imported.status().with_context(str_cat(node_label(*node), ": body"));
  ONEPOOL_RETURN_IF_ERROR(set_scan_output_types(model, *node, *imported, *layout));
  if (batch_row) node->set_op_type(std::string("Scan"));
  finish_body_extraction(model, node, captured, scope, kScanStatesAttribute, layout->states,
                         std::move(imported).value(), bodies);
  return true;
}

}  // namespace

Expected<int> extract_runtime_scans(onnx::ModelProto* model, const BranchImporter& import_body,
                                    RuntimeIfBranches* bodies) {
  return extract_first(model, is_scan_to_extract, [&](onnx::NodeProto* node) {
    return extract_one(model, node, import_body, bodies);
  });
}

}  // namespace onepool
