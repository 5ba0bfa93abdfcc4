// The plan's versioned JSON form.
//
// Schema (schema_version 2; version 1 is the same without "provenance"):
//   { "schema_version": 2, "pool_bytes": N, "alignment": N, "lower_bound_bytes": N,
//     "naive_bytes": N, "plain_lower_bound_bytes": N, "plain_pool_bytes": N,
//     "algorithm": "greedy-by-size", "optimal": bool, "planning_ms": x,
//     "verified": bool,
//     "steps":   [ {"node": "conv_1", "op": "Conv"}, ... ],          // execution order
//     "tensors": [ {"id": 3, "name": "x", "op": "Relu", "dtype": "float32", "shape": [1,8],
//                   "bytes": 256, "offset": 0, "first": 0, "last": 2,
//                   "alias_of": 2, "alias_offset": 0,     // only for aliases (bytes 0)
//                   "workspace_node": 1,                   // only for workspaces (id -1)
//                   "bounded": true, "bound": "NonZero of 'x' [2,3]: at most 6 ..." }, ... ],
//                 // only for tensors of data-dependent size: shape is the bound planned
//                   "external": true                       // only for graph inputs and
//                 // outputs in caller buffers (bytes and offset 0)
//     "nested": [ {"node": "If_25", "body": "then_branch", "pool_bytes": 541440,
//                  "lower_bound_bytes": 541440, "tensors": 120, "algorithm": "auto",
//                  "tensor_list": [ {...}, ... ], "nested": [ ... ]} ],
//                 // optional: plans of If branches / Loop and Scan bodies, each in its node's
//                 // workspace record; "tensor_list" (optional) holds their tensors as above,
//                 // offsets from the start of the region; "nested" (optional) the plans nested
//                 // in their own nodes, the same way
//     "provenance": { "model_path": "m.onnx", "model_hash": "fnv1a64:...", "input_shapes":
//                     "x:1x3x8x8", "device": "cpu", "algorithm": "auto", "alignment": 256,
//                     "aliasing": "on", "schedule": "model", "optimize": "all",
//                     "workspaces": "fit", "external": "none",
//                     "onepool_version": "0.1.0" } }  // only when known; "external" may be
//                 // absent ("none")
// The plain_* fields (bounds without aliasing) may be absent: they then equal the plan's own.
// nlohmann throws on type errors; every throw is caught here and becomes a Status.
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onepool/plan.h"
#include "planner/core/json_writer.h"

namespace onepool {
namespace {

using Json = nlohmann::json;

constexpr const char* kUndefinedDTypeName = "undefined";
constexpr int kFirstSchemaVersion = 1;  // no "provenance"; still loads

Json provenance_to_json(const PlanProvenance& p) {
  return {{"model_path", p.model_path},
          {"model_hash", p.model_hash},
          {"input_shapes", p.input_shapes},
          {"device", p.device},
          {"algorithm", p.algorithm},
          {"alignment", p.alignment},
          {"aliasing", p.aliasing},
          {"schedule", p.schedule},
          {"optimize", p.optimize},
          {"workspaces", p.workspaces},
          {"external", p.external.empty() ? std::string("none") : p.external},
          {"onepool_version", p.onepool_version}};
}

Expected<PlanProvenance> provenance_from_json(const Json& object) {
  PlanProvenance p;
  p.model_path = object.at("model_path").get<std::string>();
  p.model_hash = object.at("model_hash").get<std::string>();
  p.input_shapes = object.at("input_shapes").get<std::string>();
  p.device = object.at("device").get<std::string>();
  p.algorithm = object.at("algorithm").get<std::string>();
  p.aliasing = object.at("aliasing").get<std::string>();
  p.schedule = object.at("schedule").get<std::string>();
  p.optimize = object.at("optimize").get<std::string>();
  p.workspaces = object.at("workspaces").get<std::string>();
  p.external = object.contains("external") ? object.at("external").get<std::string>() : "none";
  p.onepool_version = object.at("onepool_version").get<std::string>();
  const Json& alignment = object.at("alignment");
  if (!alignment.is_number_unsigned()) {
    return make_status(StatusCode::kInvalidArgument,
                       "plan JSON: provenance: field 'alignment' must be a non-negative integer, "
                       "got ",
                       alignment.dump());
  }
  p.alignment = alignment.get<size_t>();
  if (p.model_hash.empty()) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: provenance: empty 'model_hash'");
  }
  return p;
}

std::string dtype_json_name(DType dtype) {
  return dtype == DType::kUndefined ? kUndefinedDTypeName : dtype_name(dtype);
}

// One tensor at `depth`, its members in key order (as nlohmann sorts them).
void write_tensor(const PlannedTensor& tensor, std::string& out, int depth) {
  JsonObjectWriter object(out, depth);
  if (tensor.alias_of >= 0) {
    object.member("alias_of", tensor.alias_of);
    object.member("alias_offset", static_cast<uint64_t>(tensor.alias_offset));
  }
  if (!tensor.bound.empty()) {
    object.member("bound", tensor.bound);
    object.member("bounded", true);
  }
  object.member("bytes", static_cast<uint64_t>(tensor.bytes));
  object.member("dtype", dtype_json_name(tensor.dtype));
  if (tensor.external) object.member("external", true);
  object.member("first", tensor.first);
  object.member("id", tensor.id);
  object.member("last", tensor.last);
  object.member("name", tensor.name);
  object.member("offset", static_cast<uint64_t>(tensor.offset));
  object.member("op", tensor.producer_op);
  const std::vector<int64_t> dims(tensor.shape.begin(), tensor.shape.end());
  object.integers_member("shape", dims);
  if (tensor.workspace_node >= 0) object.member("workspace_node", tensor.workspace_node);
  object.close();
}

// Reads a non-negative integer field; nlohmann would silently wrap a negative one.
Expected<size_t> read_size(const Json& object, const char* key, const std::string& where) {
  const Json& field = object.at(key);
  if (!field.is_number_unsigned()) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: ", where, ": field '", key,
                       "' must be a non-negative integer, got ", field.dump());
  }
  return field.get<size_t>();
}

Expected<int64_t> read_int(const Json& object, const char* key, const std::string& where) {
  const Json& field = object.at(key);
  if (!field.is_number_integer()) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: ", where, ": field '", key,
                       "' must be an integer, got ", field.dump());
  }
  return field.get<int64_t>();
}

Expected<DType> read_dtype(const Json& object, const std::string& where) {
  const std::string name = object.at("dtype").get<std::string>();
  if (name == kUndefinedDTypeName) return DType::kUndefined;
  const DType dtype = dtype_from_name(name);
  if (dtype == DType::kUndefined) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: ", where, ": unknown dtype '",
                       name, "'");
  }
  return dtype;
}

Expected<PlannedTensor> tensor_from_json(const Json& object, size_t index) {
  const std::string where = str_cat("tensors[", index, "]");
  PlannedTensor tensor;
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t id, read_int(object, "id", where));
  tensor.id = static_cast<int32_t>(id);
  tensor.name = object.at("name").get<std::string>();
  tensor.producer_op = object.at("op").get<std::string>();
  ONEPOOL_ASSIGN_OR_RETURN(tensor.dtype, read_dtype(object, where));
  const auto dims = object.at("shape").get<std::vector<int64_t>>();
  auto shape = Shape::from_dims(dims);
  if (!shape) return shape.status().with_context(str_cat("plan JSON: ", where));
  tensor.shape = *shape;
  ONEPOOL_ASSIGN_OR_RETURN(tensor.bytes, read_size(object, "bytes", where));
  ONEPOOL_ASSIGN_OR_RETURN(tensor.offset, read_size(object, "offset", where));
  ONEPOOL_ASSIGN_OR_RETURN(tensor.first, read_int(object, "first", where));
  ONEPOOL_ASSIGN_OR_RETURN(tensor.last, read_int(object, "last", where));
  if (object.contains("alias_of")) {
    ONEPOOL_ASSIGN_OR_RETURN(const int64_t alias_of, read_int(object, "alias_of", where));
    tensor.alias_of = static_cast<int32_t>(alias_of);
    ONEPOOL_ASSIGN_OR_RETURN(tensor.alias_offset, read_size(object, "alias_offset", where));
  }
  if (object.contains("workspace_node")) {
    ONEPOOL_ASSIGN_OR_RETURN(const int64_t node, read_int(object, "workspace_node", where));
    tensor.workspace_node = static_cast<int32_t>(node);
  }
  if (object.contains("bound") && object.at("bound").is_string()) {
    tensor.bound = object.at("bound").get<std::string>();
  }
  if (object.contains("external")) tensor.external = object.at("external").get<bool>();
  if (tensor.external && (tensor.bytes != 0 || tensor.alias_of >= 0 || tensor.id < 0)) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: ", where, ": external tensor '",
                       tensor.name, "' must be a graph value with 0 bytes and no alias");
  }
  return tensor;
}

Status check_schema_version(const Json& document) {
  if (!document.is_object()) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: expected an object, got ",
                       document.type_name());
  }
  if (!document.contains("schema_version")) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: missing 'schema_version'");
  }
  const Json& version = document.at("schema_version");
  const bool known =
      version.is_number_integer() && (version.get<int64_t>() == Plan::kSchemaVersion ||
                                      version.get<int64_t>() == kFirstSchemaVersion);
  if (!known) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: expected schema_version ",
                       kFirstSchemaVersion, " or ", Plan::kSchemaVersion, ", got ", version.dump());
  }
  return Status::ok();
}

// One nested plan at `depth`, its members in key order.
void write_nested(const NestedPlan& nested, std::string& out, int depth) {
  JsonObjectWriter object(out, depth);
  object.member("algorithm", nested.algorithm);
  object.member("body", nested.body);
  object.member("lower_bound_bytes", static_cast<uint64_t>(nested.lower_bound_bytes));
  if (!nested.nested.empty()) {
    object.array_member("nested", nested.nested.size(), [&](size_t i, int element_depth) {
      write_nested(nested.nested[i], out, element_depth);
    });
  }
  object.member("node", nested.node);
  object.member("pool_bytes", static_cast<uint64_t>(nested.pool_bytes));
  if (!nested.tensors.empty()) {
    object.array_member("tensor_list", nested.tensors.size(), [&](size_t i, int element_depth) {
      write_tensor(nested.tensors[i], out, element_depth);
    });
  }
  object.member("tensors", static_cast<uint64_t>(nested.tensor_count));
  object.close();
}

Expected<NestedPlan> nested_from_json(const Json& object) {
  NestedPlan nested;
  nested.node = object.at("node").get<std::string>();
  nested.body = object.at("body").get<std::string>();
  ONEPOOL_ASSIGN_OR_RETURN(nested.pool_bytes, read_size(object, "pool_bytes", "nested plan"));
  ONEPOOL_ASSIGN_OR_RETURN(nested.lower_bound_bytes,
                           read_size(object, "lower_bound_bytes", "nested plan"));
  ONEPOOL_ASSIGN_OR_RETURN(nested.tensor_count, read_size(object, "tensors", "nested plan"));
  nested.algorithm = object.at("algorithm").get<std::string>();
  if (object.contains("tensor_list")) {
    const Json& tensors = object.at("tensor_list");
    if (!tensors.is_array()) {
      return make_status(StatusCode::kInvalidArgument, "plan JSON: nested plan ", nested.node, "/",
                         nested.body, ": 'tensor_list' must be an array");
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
      ONEPOOL_ASSIGN_OR_RETURN(PlannedTensor tensor, tensor_from_json(tensors[i], i));
      nested.tensors.push_back(std::move(tensor));
    }
  }
  if (object.contains("nested")) {
    for (const Json& inner : object.at("nested")) {
      ONEPOOL_ASSIGN_OR_RETURN(NestedPlan entry, nested_from_json(inner));
      nested.nested.push_back(std::move(entry));
    }
  }
  return nested;
}

Expected<Plan> plan_from_document(const Json& document) {
  ONEPOOL_RETURN_IF_ERROR(check_schema_version(document));
  Plan plan;
  ONEPOOL_ASSIGN_OR_RETURN(plan.pool_bytes, read_size(document, "pool_bytes", "plan"));
  ONEPOOL_ASSIGN_OR_RETURN(plan.alignment, read_size(document, "alignment", "plan"));
  ONEPOOL_ASSIGN_OR_RETURN(plan.lower_bound_bytes,
                           read_size(document, "lower_bound_bytes", "plan"));
  ONEPOOL_ASSIGN_OR_RETURN(plan.naive_bytes, read_size(document, "naive_bytes", "plan"));
  plan.plain_lower_bound_bytes = plan.lower_bound_bytes;
  if (document.contains("plain_lower_bound_bytes")) {
    ONEPOOL_ASSIGN_OR_RETURN(plan.plain_lower_bound_bytes,
                             read_size(document, "plain_lower_bound_bytes", "plan"));
  }
  plan.plain_pool_bytes = plan.pool_bytes;
  if (document.contains("plain_pool_bytes")) {
    ONEPOOL_ASSIGN_OR_RETURN(plan.plain_pool_bytes,
                             read_size(document, "plain_pool_bytes", "plan"));
  }
  plan.algorithm = document.at("algorithm").get<std::string>();
  plan.optimal = document.at("optimal").get<bool>();
  plan.planning_ms = document.at("planning_ms").get<double>();
  plan.verified = document.at("verified").get<bool>();
  for (const Json& step : document.at("steps")) {
    plan.steps.push_back({step.at("node").get<std::string>(), step.at("op").get<std::string>()});
  }
  const Json& tensors = document.at("tensors");
  if (!tensors.is_array()) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: 'tensors' must be an array");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    ONEPOOL_ASSIGN_OR_RETURN(PlannedTensor tensor, tensor_from_json(tensors[i], i));
    plan.tensors.push_back(std::move(tensor));
  }
  if (document.contains("provenance")) {
    ONEPOOL_ASSIGN_OR_RETURN(plan.provenance, provenance_from_json(document.at("provenance")));
  }
  if (document.contains("nested")) {
    for (const Json& nested : document.at("nested")) {
      ONEPOOL_ASSIGN_OR_RETURN(NestedPlan entry, nested_from_json(nested));
      plan.nested.push_back(std::move(entry));
    }
  }
  return plan;
}

}  // namespace

std::string Plan::to_json() const {
  // Streamed member by member in nlohmann's own layout: a DOM of 100,000 tensors took several
  // times the plan's own memory and most of the time.
  std::string out;
  out.reserve(256 + tensors.size() * 200 + steps.size() * 48);
  JsonObjectWriter document(out, 0);
  document.member("algorithm", algorithm);
  document.member("alignment", static_cast<uint64_t>(alignment));
  document.member("lower_bound_bytes", static_cast<uint64_t>(lower_bound_bytes));
  document.member("naive_bytes", static_cast<uint64_t>(naive_bytes));
  if (!nested.empty()) {
    document.array_member("nested", nested.size(),
                          [&](size_t i, int depth) { write_nested(nested[i], out, depth); });
  }
  document.member("optimal", optimal);
  document.member("plain_lower_bound_bytes", static_cast<uint64_t>(plain_lower_bound_bytes));
  document.member("plain_pool_bytes", static_cast<uint64_t>(plain_pool_bytes));
  document.member("planning_ms", planning_ms);
  document.member("pool_bytes", static_cast<uint64_t>(pool_bytes));
  if (provenance.known()) document.member("provenance", provenance_to_json(provenance));
  document.member("schema_version", static_cast<int64_t>(kSchemaVersion));
  document.array_member("steps", steps.size(), [&](size_t i, int depth) {
    JsonObjectWriter step(out, depth);
    step.member("node", steps[i].node);
    step.member("op", steps[i].op);
    step.close();
  });
  document.array_member("tensors", tensors.size(),
                        [&](size_t i, int depth) { write_tensor(tensors[i], out, depth); });
  document.member("verified", verified);
  document.close();
  return out;
}

Expected<Plan> Plan::from_json(std::string_view json) {
  try {
    return plan_from_document(Json::parse(json));
  } catch (const std::exception& error) {
    return make_status(StatusCode::kInvalidArgument, "plan JSON: ", error.what());
  }
}

}  // namespace onepool
