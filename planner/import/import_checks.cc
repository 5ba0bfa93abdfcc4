// Structural checks, the ONNX checker, and ONNX shape inference behind Status.
#include "planner/import/import_checks.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <unordered_map>
#include <unordered_set>

namespace onepool {

namespace {

std::string node_label(const onnx::NodeProto& node, int index) {
  const std::string name = node.name().empty() ? str_cat(node.op_type(), "_", index) : node.name();
  return str_cat("node '", name, "' (", node.op_type(), ")");
}

// Names produced by nodes, each with the index of its producer; fails on a second producer.
Status collect_producers(const onnx::GraphProto& graph,
                         const std::unordered_set<std::string>& sources,
                         std::unordered_map<std::string, int>* producers) {
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const std::string& output : graph.node(n).output()) {
      if (output.empty()) continue;
      const auto [it, inserted] = producers->emplace(output, n);
      if (!inserted || sources.count(output) != 0) {
        return make_status(
            StatusCode::kInvalidModel, node_label(graph.node(n), n), ": output tensor '", output,
            "' is already a graph input, an initializer, or produced by ",
            inserted ? "nothing else" : node_label(graph.node(it->second), it->second));
      }
    }
  }
  return Status::ok();
}

}  // namespace

// Graph inputs and graph outputs each name distinct tensors (the checker enforces it only for
// inputs, and is off for models newer than the library).
Status check_unique_io(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> seen;
  for (const auto& input : graph.input()) {
    if (seen.insert(input.name()).second) continue;
    return make_status(StatusCode::kInvalidModel, "graph input '", input.name(),
                       "' is declared more than once");
  }
  seen.clear();
  for (const auto& output : graph.output()) {
    if (seen.insert(output.name()).second) continue;
    return make_status(StatusCode::kInvalidModel, "graph output '", output.name(),
                       "' is declared more than once");
  }
  return Status::ok();
}

Status check_graph_structure(const onnx::GraphProto& graph) {
  ONEPOOL_RETURN_IF_ERROR(check_unique_io(graph));
  std::unordered_set<std::string> sources;
  for (const auto& input : graph.input()) sources.insert(input.name());
  for (const auto& initializer : graph.initializer()) sources.insert(initializer.name());
  std::unordered_map<std::string, int> producers;
  ONEPOOL_RETURN_IF_ERROR(collect_producers(graph, sources, &producers));
  for (int n = 0; n < graph.node_size(); ++n) {
    for (const std::string& input : graph.node(n).input()) {
      if (input.empty() || sources.count(input) != 0) continue;
      const auto it = producers.find(input);
      if (it != producers.end() && it->second < n) continue;
      return make_status(
          StatusCode::kInvalidModel, node_label(graph.node(n), n), ": input tensor '", input,
          "' is not a graph input, an initializer, or the output of an earlier node (cycle or "
          "dangling input",
          it == producers.end() ? std::string(": nothing produces it")
                                : str_cat(": it is produced later by ",
                                          node_label(graph.node(it->second), it->second)),
          ")");
    }
  }
  for (const auto& output : graph.output()) {
    if (sources.count(output.name()) == 0 && producers.count(output.name()) == 0) {
      return make_status(StatusCode::kInvalidModel, "graph output '", output.name(),
                         "' is not produced by any node");
    }
  }
  return Status::ok();
}

std::string describe_newer_than_library(const onnx::ModelProto& model) {
  std::string parts;
  if (model.ir_version() > onnx::IR_VERSION) {
    parts = str_cat("IR version ", model.ir_version(), " (the library knows up to ",
                    onnx::IR_VERSION, ")");
  }
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& opset : model.opset_import()) {
    const std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    const auto it = known.find(domain);
    if (it == known.end() || opset.version() <= it->second.second) continue;
    parts += str_cat(parts.empty() ? "" : ", ", "opset ", opset.version(), " of domain '",
                     domain.empty() ? "ai.onnx" : domain, "' (the library knows up to ",
                     it->second.second, ")");
  }
  if (parts.empty()) return "";
  return str_cat("the model is newer than the ONNX library OnePool was built with: ", parts,
                 "; the ONNX checker is skipped (OnePool's own structural and attribute checks "
                 "still run), and operators may behave as the older opset defines them");
}

Status check_opset_versions(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (opset.version() >= 1) continue;
    return make_status(StatusCode::kInvalidModel, "opset_import: version ", opset.version(),
                       " of domain '", opset.domain().empty() ? "ai.onnx" : opset.domain(),
                       "' is not a valid opset version (1 or more)");
  }
  return Status::ok();
}

bool model_newer_than_onnx_library(const onnx::ModelProto& model) {
  if (model.ir_version() > onnx::IR_VERSION) return true;
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& opset : model.opset_import()) {
    const std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    const auto it = known.find(domain);
    if (it != known.end() && opset.version() > it->second.second) return true;
  }
  return false;
}

Status run_onnx_checker(const onnx::ModelProto& model) {
  if (model_newer_than_onnx_library(model)) return Status::ok();
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& error) {
    return make_status(StatusCode::kInvalidModel,
                       "the ONNX checker rejects the model: ", error.what());
  }
  return Status::ok();
}

Status run_shape_inference(onnx::ModelProto* model, std::string* strict_error) {
  const auto* registry = onnx::OpSchemaRegistry::Instance();
  try {
    onnx::shape_inference::InferShapes(*model, registry,
                                       onnx::ShapeInferenceOptions(false, 1, true));
    strict_error->clear();
    return Status::ok();
  } catch (const std::exception& error) {
    *strict_error = error.what();
  }
  try {
    onnx::shape_inference::InferShapes(*model, registry,
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception& error) {
    return make_status(StatusCode::kInvalidModel, "ONNX shape inference failed: ", error.what());
  }
  return Status::ok();
}

Status infer_node_alone(onnx::ModelProto* model) {
  try {
    onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 1, false));
  } catch (const std::exception& error) {
    return make_status(StatusCode::kInvalidModel, "ONNX shape inference failed: ", error.what());
  }
  return Status::ok();
}

}  // namespace onepool
