// What extracting a control-flow body into a Graph of its own needs (runtime If branches and Loop
// bodies, planner/import/import_runtime_if.h and import_runtime_loop.h). Internal to import.
//
// A body reads values of the scopes around it by name (captured values). Extraction turns it into
// a model of its own: its leading inputs (a Loop's iteration number, condition and carried values)
// first, then every captured runtime value as a graph input typed from the outer scope, every
// captured constant copied in as an initializer. The node then reads the captured runtime values
// as explicit inputs, so liveness keeps them alive until it runs.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// The domain an extracted node carries between extraction and conversion (ONNX's inference
/// leaves it alone: it has no schema).
inline constexpr const char* kRuntimeIfDomain = "ai.onepool";

/// The bodies of each extracted node, and what import should tell the user about them.
struct RuntimeIfBranches {
  /// Node name -> its bodies (If: {then_branch, else_branch}, nullptr for a branch that cannot
  /// run with the bound input shapes; Loop: {body}).
  std::map<std::string, std::vector<std::shared_ptr<const Graph>>> graphs;
  std::vector<std::string> warnings;
  /// If outputs whose branches yield different shapes (same rank): tensor name -> why its
  /// planned shape (the larger dim of the two, axis by axis) is an upper bound (Value::bound).
  std::map<std::string, std::string> bounds;
  /// The --bound entries (LoadOptions::bounds) that bounded a Loop's scan outputs.
  std::set<std::string> used_length_bounds;
};

/// Imports one body model (the caller's whole import pipeline).
using BranchImporter = std::function<Expected<Graph>(onnx::ModelProto* branch_model)>;

/// The names `bodies` read from outside themselves, in first-use order (nested bodies included).
std::vector<std::string> captured_names(std::span<const onnx::GraphProto* const> bodies);

/// True for a tensor type with an element type and every dim a number.
bool is_static_tensor_type(const onnx::TypeProto& type);

/// What the main graph knows of its values' types and constants.
struct OuterScope {
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;  // not graph inputs

  explicit OuterScope(const onnx::GraphProto& graph);
  /// The value's type when it is a static tensor type, else nullptr.
  const onnx::TypeProto* static_type(const std::string& name) const;
  /// True when `name` is a constant or has a static type.
  bool is_known(const std::string& name) const;
  /// The static type of a value or constant; nullopt when not known (yet).
  std::optional<onnx::TypeProto> known_type(const std::string& name) const;
};

/// The graph attribute `name` of `node`, or nullptr.
const onnx::GraphProto* find_graph_attribute(const onnx::NodeProto& node, const std::string& name);

/// `body` as a model of its own named `name`: `leading` inputs, then the captured runtime values
/// (typed from `scope`), captured constants as initializers, outputs by name only (inference
/// types them).
onnx::ModelProto body_model(const onnx::ModelProto& model, const std::string& name,
                            const onnx::GraphProto& body,
                            const std::vector<onnx::ValueInfoProto>& leading,
                            const std::vector<std::string>& captured, const OuterScope& scope);

/// The static tensor type of a Graph value.
onnx::TypeProto type_of(const Value& value);

/// Gives value `name` of `graph` the type `type` (value_info, and the declared type when it is a
/// graph output).
void set_value_type(onnx::GraphProto* graph, const std::string& name, const onnx::TypeProto& type);

/// Appends the captured runtime values (not the constants) to `node`'s inputs, drops its graph
/// attributes and moves it to kRuntimeIfDomain, which `model` declares.
void make_runtime_node(onnx::ModelProto* model, onnx::NodeProto* node,
                       const std::vector<std::string>& captured, const OuterScope& scope);

/// The last step of extracting a Loop or Scan: make_runtime_node, the int attribute
/// `count_name` = `count` (how many inputs carry state), and `body` stored for the node.
void finish_body_extraction(onnx::ModelProto* model, onnx::NodeProto* node,
                            const std::vector<std::string>& captured, const OuterScope& scope,
                            const char* count_name, int64_t count, Graph body,
                            RuntimeIfBranches* bodies);

/// One node extracted at a time: calls `extract_one` on each node of the main graph `matches`
/// accepts until one reports it extracted (returns 1), or returns 0 when none did.
using ExtractOne = std::function<Expected<bool>(onnx::NodeProto* node)>;
Expected<int> extract_first(onnx::ModelProto* model,
                            const std::function<bool(const onnx::NodeProto&)>& matches,
                            const ExtractOne& extract_one);

/// Gives each extracted node of `graph` its bodies and the default domain back, and the graph
/// the warnings.
Status attach_runtime_bodies(Graph* graph, RuntimeIfBranches* bodies);

}  // namespace onepool
