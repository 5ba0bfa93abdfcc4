// Scan-8 as one Scan-9 per batch row (see the header).
#include "planner/import/import_scan_batch.h"

#include <optional>
#include <string>
#include <vector>

#include "planner/import/import_attributes.h"
#include "planner/import/import_subgraph.h"

namespace onepool {

namespace {

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (Scan-8)");
}

// The batch size every input agrees on; nullopt while an input's type is not known yet.
Expected<std::optional<int64_t>> batch_of(const onnx::NodeProto& node, const OuterScope& scope) {
  std::optional<int64_t> batch;
  for (int i = 1; i < node.input_size(); ++i) {
    const std::optional<onnx::TypeProto> type = scope.known_type(node.input(i));
    if (!type) return std::optional<int64_t>();
    const auto& shape = type->tensor_type().shape();
    if (shape.dim_size() < 1) {
      return make_status(StatusCode::kInvalidModel, node_label(node), ": input '", node.input(i),
                         "' has no batch axis (Scan-8 inputs are [batch, ...])");
    }
    const int64_t rows = shape.dim(0).dim_value();
    if (batch && rows != *batch) {
      return make_status(StatusCode::kInvalidModel, node_label(node),
                         ": inputs differ in batch size (", *batch, " and ", rows, ")");
    }
    batch = rows;
  }
  if (batch && *batch < 1) {
    return make_status(StatusCode::kUnsupported, node_label(node), ": batch size ", *batch);
  }
  return batch;
}

onnx::NodeProto make_node(const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(name);
  for (const std::string& input : inputs) node.add_input(input);
  node.add_output(output);
  return node;
}

void add_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

void add_int(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

// The Scan-9 attributes of row `row`'s Scan: the body and num_scan_inputs as they are,
// Scan-8's `directions` as scan_input_directions.
void copy_scan_attributes(const onnx::NodeProto& from, onnx::NodeProto& to) {
  for (const onnx::AttributeProto& attribute : from.attribute()) {
    onnx::AttributeProto* copy = to.add_attribute();
    *copy = attribute;
    if (attribute.name() == "directions") copy->set_name(std::string("scan_input_directions"));
  }
}

// Row b of the node: row b of every input (the batch axis removed), the row's Scan, the
// Unsqueezes of its outputs (appended to `nodes`); `row_outputs`[k] gets output k's row.
void add_row(const onnx::NodeProto& node, const std::string& base, int64_t b,
             std::vector<onnx::NodeProto>& nodes,
             std::vector<std::vector<std::string>>& row_outputs) {
  const std::string row = str_cat(base, "/row", b);
  onnx::NodeProto scan;
  scan.set_op_type(kScanBatchRowOp);
  scan.set_domain(kRuntimeIfDomain);
  scan.set_name(row);
  copy_scan_attributes(node, scan);
  // Row b by Slice and Squeeze in their opset < 10 / < 13 forms (attributes, no constant
  // inputs: an initializer would also need a graph input before IR version 4).
  for (int i = 1; i < node.input_size(); ++i) {
    const std::string sliced = str_cat(row, "/input", i);
    onnx::NodeProto slice =
        make_node("Slice", str_cat(row, "/slice", i), {node.input(i)}, sliced + "/kept");
    add_ints(slice, "axes", {0});
    add_ints(slice, "starts", {b});
    add_ints(slice, "ends", {b + 1});
    onnx::NodeProto squeeze =
        make_node("Squeeze", str_cat(row, "/squeeze", i), {sliced + "/kept"}, sliced);
    add_ints(squeeze, "axes", {0});
    nodes.push_back(std::move(slice));
    nodes.push_back(std::move(squeeze));
    scan.add_input(sliced);
  }
  std::vector<onnx::NodeProto> unsqueezes;
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) {
      scan.add_output(std::string());
      continue;
    }
    const std::string output = str_cat(row, "/output", k);
    scan.add_output(output);
    onnx::NodeProto unsqueeze =
        make_node("Unsqueeze", str_cat(row, "/unsqueeze", k), {output}, output + "/row");
    add_ints(unsqueeze, "axes", {0});  // opset < 13: an attribute
    unsqueezes.push_back(std::move(unsqueeze));
    row_outputs[static_cast<size_t>(k)].push_back(output + "/row");
  }
  nodes.push_back(std::move(scan));
  for (onnx::NodeProto& unsqueeze : unsqueezes) nodes.push_back(std::move(unsqueeze));
}

// The graph's nodes with the one at `index` replaced by `replacement`, in that place.
void replace_node(onnx::GraphProto* graph, int index, std::vector<onnx::NodeProto> replacement) {
  std::vector<onnx::NodeProto> nodes(graph->node().begin(), graph->node().end());
  graph->clear_node();
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    if (n != index) {
      *graph->add_node() = std::move(nodes[static_cast<size_t>(n)]);
      continue;
    }
    for (onnx::NodeProto& node : replacement) *graph->add_node() = std::move(node);
  }
}

void import_runtime_domain(onnx::ModelProto* model) {
  for (const auto& entry : model->opset_import()) {
    if (entry.domain() == kRuntimeIfDomain) return;
  }
  auto* entry = model->add_opset_import();
  entry->set_domain(kRuntimeIfDomain);
  entry->set_version(1);
}

}  // namespace

Expected<bool> split_scan8_by_batch(onnx::ModelProto* model, int node_index) {
  onnx::GraphProto* graph = model->mutable_graph();
  const onnx::NodeProto node = graph->node(node_index);  // a copy: the node list is rebuilt
  if (node.input_size() > 0 && !node.input(0).empty()) {
    return make_status(StatusCode::kUnsupported, node_label(node),
                       ": sequence_lens (batch rows of different lengths) is not supported; "
                       "omit it when every row has the full length");
  }
  if (find_graph_attribute(node, "body") == nullptr) {
    return make_status(StatusCode::kInvalidModel, node_label(node), ": has no body");
  }
  ONEPOOL_ASSIGN_OR_RETURN(const std::optional<int64_t> batch, batch_of(node, OuterScope(*graph)));
  if (!batch) return false;
  const std::string base = node.name().empty() ? str_cat("scan8_", node_index) : node.name();
  std::vector<onnx::NodeProto> nodes;
  std::vector<std::vector<std::string>> row_outputs(static_cast<size_t>(node.output_size()));
  for (int64_t b = 0; b < *batch; ++b) add_row(node, base, b, nodes, row_outputs);
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    onnx::NodeProto concat = make_node("Concat", str_cat(base, "/concat", k),
                                       row_outputs[static_cast<size_t>(k)], node.output(k));
    add_int(concat, "axis", 0);
    nodes.push_back(std::move(concat));
  }
  replace_node(graph, node_index, std::move(nodes));
  import_runtime_domain(model);
  return true;
}

}  // namespace onepool
