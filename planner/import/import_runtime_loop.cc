// Loop bodies as Graphs of their own (see the header for the steps).
#include "planner/import/import_runtime_loop.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/import/import_tensor.h"

namespace onepool {

namespace {

bool is_default_loop(const onnx::NodeProto& node) {
  return node.op_type() == "Loop" && (node.domain().empty() || node.domain() == "ai.onnx");
}

std::string node_label(const onnx::NodeProto& node) {
  return str_cat("node '", node.name(), "' (Loop)");
}

onnx::TypeProto scalar_type(int32_t elem_type) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem_type);
  type.mutable_tensor_type()->mutable_shape();
  return type;
}

// M when it is a constant: nullopt for an absent or runtime M.
Expected<std::optional<int64_t>> constant_trip_count(const onnx::NodeProto& node,
                                                     const OuterScope& scope) {
  if (node.input(0).empty()) return std::optional<int64_t>();
  const auto constant = scope.initializers.find(node.input(0));
  if (constant == scope.initializers.end()) return std::optional<int64_t>();
  auto host = host_tensor_from_proto(*constant->second);
  if (!host) return host.status().with_context(node_label(node));
  if (host->element_count() != 1 || host->dtype != DType::kInt64) {
    return make_status(StatusCode::kInvalidModel, node_label(node), ": M must be one int64");
  }
  return std::optional<int64_t>(host->int_at(0));
}

Status check_counts(const onnx::NodeProto& node, const onnx::GraphProto& body, int carried) {
  const int scans = node.output_size() - carried;
  if (carried < 0 || scans < 0 || body.input_size() != 2 + carried ||
      body.output_size() != 1 + carried + scans) {
    return make_status(StatusCode::kInvalidModel, node_label(node), ": ", node.input_size(),
                       " input(s) and ", node.output_size(), " output(s) do not fit a body of ",
                       body.input_size(), " input(s) and ", body.output_size(),
                       " output(s) (body: iteration number, condition, each carried value; "
                       "condition, each carried value, each scan output)");
  }
  return Status::ok();
}

std::string describe(const Value& value) {
  return str_cat(dtype_name(value.dtype), " ", value.shape.to_string());
}

// Step 3: the body's condition and carried outputs against its inputs.
Status check_body(const onnx::NodeProto& node, const Graph& body, int carried) {
  const Value& condition = body.values[static_cast<size_t>(body.outputs[0])];
  if (condition.dtype != DType::kBool || condition.shape.element_count() != 1) {
    return make_status(StatusCode::kInvalidModel, node_label(node),
                       ": the body's condition output must be one bool, got ", describe(condition));
  }
  for (int c = 0; c < carried; ++c) {
    const Value& in = body.values[static_cast<size_t>(body.inputs[static_cast<size_t>(2 + c)])];
    const Value& out = body.values[static_cast<size_t>(body.outputs[static_cast<size_t>(1 + c)])];
    if (in.dtype != out.dtype) {
      return make_status(StatusCode::kInvalidModel, node_label(node), ": carried value ", c, " ('",
                         in.name, "') enters as ", describe(in), " and leaves an iteration as ",
                         describe(out));
    }
    if (in.shape != out.shape) {
      return make_status(StatusCode::kUnsupported, node_label(node), ": carried value ", c, " ('",
                         in.name, "') enters as ", describe(in), " and leaves an iteration as ",
                         describe(out), "; a carried value that changes shape is not supported");
    }
  }
  return Status::ok();
}

// The type of scan output `k`: [M, body's shape...].
Expected<onnx::TypeProto> scan_type(const onnx::NodeProto& node, const Value& slice,
                                    int64_t trip_count) {
  const int64_t elements = slice.shape.element_count();
  if (trip_count < 0 || (elements > 0 && trip_count > std::numeric_limits<int64_t>::max() /
                                                          std::max<int64_t>(elements, 1))) {
    return make_status(StatusCode::kInvalidModel, node_label(node), ": M = ", trip_count,
                       " rows of ", slice.shape.to_string(), " do not fit a tensor");
  }
  onnx::TypeProto type;
  auto* tensor = type.mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(slice.dtype));
  tensor->mutable_shape()->add_dim()->set_dim_value(trip_count);
  for (int axis = 0; axis < slice.shape.rank(); ++axis) {
    tensor->mutable_shape()->add_dim()->set_dim_value(slice.shape[axis]);
  }
  return type;
}

// The body's leading inputs: iteration number, condition, carried values typed as the Loop's
// inputs; nullopt while a carried value's type is unknown.
std::optional<std::vector<onnx::ValueInfoProto>> leading_inputs(const onnx::NodeProto& node,
                                                                const onnx::GraphProto& body,
                                                                const OuterScope& scope) {
  std::vector<onnx::ValueInfoProto> leading(static_cast<size_t>(body.input_size()));
  leading[0].set_name(body.input(0).name());
  *leading[0].mutable_type() = scalar_type(onnx::TensorProto::INT64);
  leading[1].set_name(body.input(1).name());
  *leading[1].mutable_type() = scalar_type(onnx::TensorProto::BOOL);
  for (int i = 2; i < body.input_size(); ++i) {
    std::optional<onnx::TypeProto> type = scope.known_type(node.input(i));
    if (!type) return std::nullopt;
    leading[static_cast<size_t>(i)].set_name(body.input(i).name());
    *leading[static_cast<size_t>(i)].mutable_type() = *type;
  }
  return leading;
}

// How many rows the scan outputs are planned for: M when it is known at load and no scan output
// has a --bound; else the smallest --bound given for one of them (all share one row count), at
// most M, with the reason their length is a bound. nullopt: neither M nor a bound.
struct ScanRows {
  int64_t count = 0;
  std::string reason;  // empty: exactly `count` rows
};

std::optional<ScanRows> scan_rows(const onnx::NodeProto& node, int carried,
                                  std::optional<int64_t> trip_count, const LengthBounds& bounds) {
  std::optional<int64_t> smallest;
  std::string named;
  for (int i = carried; i < node.output_size(); ++i) {
    const auto bound = bounds.find(node.output(i));
    if (bound == bounds.end() || (smallest && *smallest <= bound->second)) continue;
    smallest = bound->second;
    named = bound->first;
  }
  if (!smallest) {
    if (!trip_count) return std::nullopt;
    return ScanRows{*trip_count, ""};
  }
  const int64_t count = trip_count ? std::min(*trip_count, *smallest) : *smallest;
  return ScanRows{
      count, str_cat("at most ", count, " iterations of Loop '", node.name(), "' (--bound ", named,
                     "=", *smallest, trip_count ? str_cat(", M = ", *trip_count) : std::string(),
                     "): the rows the run produced")};
}

void add_int_attribute(onnx::NodeProto* node, const char* name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

Expected<bool> extract_one(onnx::ModelProto* model, onnx::NodeProto* node,
                           const BranchImporter& import_body, const LengthBounds& bounds,
                           RuntimeIfBranches* bodies) {
  const onnx::GraphProto* body = find_graph_attribute(*node, "body");
  if (body == nullptr || node->input_size() < 2 || body->input_size() < 2 ||
      body->output_size() < 1) {
    return make_status(StatusCode::kInvalidModel, node_label(*node),
                       ": needs inputs M and cond (either may be empty) and a graph attribute "
                       "body with at least two inputs and one output");
  }
  const int carried = node->input_size() - 2;
  ONEPOOL_RETURN_IF_ERROR(check_counts(*node, *body, carried));
  const OuterScope scope(model->graph());
  for (int i = 0; i < 2; ++i) {
    if (!node->input(i).empty() && !scope.known_type(node->input(i))) return false;
  }
  const auto leading = leading_inputs(*node, *body, scope);
  if (!leading) return false;
  const onnx::GraphProto* bodies_read[1] = {body};
  const std::vector<std::string> captured = captured_names(bodies_read);
  for (const std::string& name : captured) {
    if (!scope.is_known(name)) return false;
  }
  ONEPOOL_ASSIGN_OR_RETURN(std::optional<int64_t> trip_count, constant_trip_count(*node, scope));
  onnx::ModelProto sub =
      body_model(*model, str_cat(node->name(), "/body"), *body, *leading, captured, scope);
  Expected<Graph> imported = import_body(&sub);
  if (!imported && imported.status().code() == StatusCode::kInvalidArgument) {
    // The body's own shape inputs (a Slice by the iteration number): its shapes would change
    // from one iteration to the next.
    return make_status(StatusCode::kUnsupported, node_label(*node),
                       ": body: a shape in the body depends on the value of a loop input "
                       "(data-dependent shapes inside a Loop are not supported yet): ",
                       imported.status().message());
  }
  if (!imported) return imported.status().with_context(str_cat(node_label(*node), ": body"));
  ONEPOOL_RETURN_IF_ERROR(check_body(*node, *imported, carried));
  const std::optional<ScanRows> rows = scan_rows(*node, carried, trip_count, bounds);
  for (int i = 0; i < node->output_size(); ++i) {
    if (node->output(i).empty()) continue;
    const Value& inner =
        imported->values[static_cast<size_t>(imported->outputs[static_cast<size_t>(1 + i)])];
    if (i < carried) {
      set_value_type(model->mutable_graph(), node->output(i), type_of(inner));
      continue;
    }
    if (!rows) {
      return make_status(StatusCode::kUnsupported, node_label(*node), ": scan output '",
                         node->output(i), "' needs a trip count M known at load (M is ",
                         node->input(0).empty() ? "absent" : "computed at run time",
                         "; a graph input M can be bound with --values), or a bound on its "
                         "length: --bound ",
                         node->output(i), "=N (LoadOptions::bounds)");
    }
    ONEPOOL_ASSIGN_OR_RETURN(onnx::TypeProto type, scan_type(*node, inner, rows->count));
    set_value_type(model->mutable_graph(), node->output(i), type);
    if (rows->reason.empty()) continue;
    bodies->bounds[node->output(i)] = rows->reason;
    if (bounds.count(node->output(i)) != 0) bodies->used_length_bounds.insert(node->output(i));
  }
  if (rows && !rows->reason.empty()) add_int_attribute(node, kLoopScanBoundAttribute, rows->count);
  finish_body_extraction(model, node, captured, scope, kLoopCarriedAttribute, carried,
                         std::move(imported).value(), bodies);
  return true;
}

}  // namespace

Expected<int> extract_runtime_loops(onnx::ModelProto* model, const BranchImporter& import_body,
                                    const LengthBounds& bounds, RuntimeIfBranches* bodies) {
  return extract_first(model, is_default_loop, [&](onnx::NodeProto* node) {
    return extract_one(model, node, import_body, bounds, bodies);
  });
}

}  // namespace onepool
