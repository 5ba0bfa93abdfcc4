// The memory plan: every intermediate tensor's fixed offset inside one static pool.
//
// A Plan is plain data: backend-agnostic, serializable to versioned JSON, verifiable. It is
// immutable once built and safe to share across threads. Offsets are relative to the pool base;
// at run time each tensor is the view `pool_base + offset`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

class Model;            // onepool/model.h
struct SessionOptions;  // onepool/session.h

/// One placed buffer: a graph tensor (id >= 0) or a node's workspace (workspace_node >= 0).
struct PlannedTensor {
  int32_t id = -1;          ///< value id in the model's graph; -1 for a workspace
  std::string name;         ///< tensor name; "<node>:workspace" for a workspace
  std::string producer_op;  ///< op that writes it; "input" for graph inputs
  DType dtype = DType::kUndefined;
  Shape shape;
  size_t bytes = 0;   ///< aligned size the planner placed (0 for an alias)
  size_t offset = 0;  ///< byte offset from the pool base (an alias's resolved one)
  /// Steps it is live, inclusive; an owner that others alias holds its storage for all of them.
  int64_t first = 0;
  int64_t last = 0;
  int32_t alias_of = -1;        ///< id of the tensor whose storage this one uses, or -1
  size_t alias_offset = 0;      ///< byte offset within that tensor's storage
  int32_t workspace_node = -1;  ///< step whose scratch this is, or -1
  /// Data-dependent size (NonZero, Compress, Unique, NonMaxSuppression and what is computed
  /// from them): why `shape` is an upper bound, which the plan reserves. Empty: exact.
  std::string bound;
  /// A graph input or output that lives in the caller's buffer (PlanOptions::external_inputs
  /// and the like), not in the pool: `bytes` and `offset` are 0 and no tensor shares it.
  bool external = false;
};

/// One execution step: a node of the graph, in execution order.
struct PlanStep {
  std::string node;
  std::string op;
};

/// How to build a plan.
struct PlanOptions {
  std::string algorithm = "auto";  ///< see `onepool plan --help` for the names
  size_t alignment = 256;          ///< every offset and size is a multiple of this
  /// Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity), in-place kernels and Concat in
  /// place share storage; kept only where they lower the pool (never raise it).
  bool aliasing = true;
  /// Time budget of the searching algorithms (portfolio, exact), in milliseconds.
  double budget_ms = 100.0;
  /// Threads the placement of a large plan may use (0: one per core); the plan is the same for
  /// every value.
  int threads = 1;
  /// false ("fit", the default): the pool is planned with the workspace each kernel needs, then
  /// every workspace grows into the free bytes of its step, so the pool never grows for speed.
  /// true ("fast"): planned with the workspace each kernel prefers (Conv: 2 MiB im2col tiles),
  /// which may enlarge the pool but runs no kernel with narrow tiles.
  bool fast_workspaces = false;
  /// Graph inputs and outputs that live in the caller's buffers instead of the pool (ONNX
  /// Runtime's IoBinding, TensorRT's setTensorAddress): they take no pool bytes, runs read and
  /// write them in place with no copy (Session::run, Session::bind_input / bind_output), and no
  /// other tensor ever shares their storage (no view, in-place or Concat sharing into them).
  bool external_inputs = false;   ///< every graph input
  bool external_outputs = false;  ///< every graph output the graph computes (not a constant)
  std::vector<std::string> external_tensors;  ///< more, by name: graph inputs or outputs
  bool has_external_io() const {
    return external_inputs || external_outputs || !external_tensors.empty();
  }
};

/// What a plan was made for: the model file, the bound input shapes, the device and the options
/// that shape a plan. `--load-plan` compares a saved plan's provenance with the current one and
/// names every field that differs. Empty (model_hash "") for plans built from bare records and
/// for schema_version 1 files, which recorded none.
struct PlanProvenance {
  std::string model_path;    ///< as given when the plan was made (not compared: files move)
  std::string model_hash;    ///< "fnv1a64:" + 16 hex digits: FNV-1a (64-bit) of the file's bytes
  std::string input_shapes;  ///< bound input shapes in model order: "x:1x3x640x640,mask:1x640"
  std::string device;        ///< "cpu", "cuda:0": whose kernels' workspaces the plan holds
  std::string algorithm;     ///< as requested ("auto"), not the one auto chose
  size_t alignment = 0;
  std::string aliasing;    ///< "on" | "off"
  std::string schedule;    ///< "model" | "memory"
  std::string optimize;    ///< "none" | "basic" | "all"
  std::string workspaces;  ///< "fit" | "fast"
  std::string external;    ///< "none", or the external tensors' names in plan order: "x,y"
  std::string onepool_version;
  bool known() const { return !model_hash.empty(); }
};

/// A graph nested in a node (an If branch, a Loop or Scan body), planned on its own; its pool
/// lies inside that node's workspace record (the region whichever body runs uses).
struct NestedPlan {
  std::string node;  ///< the node (step) whose workspace holds it
  std::string body;  ///< "then_branch", "else_branch", "body"
  size_t pool_bytes = 0;
  size_t lower_bound_bytes = 0;
  size_t tensor_count = 0;
  std::string algorithm;
  /// Its own tensors, offsets counted from the start of its pool, which is the start of the
  /// node's workspace record (Plan::region_of). Empty in plans saved without them.
  std::vector<PlannedTensor> tensors;
  /// The plans nested in its own nodes (an If inside a branch), each in a workspace record of
  /// `tensors`.
  std::vector<NestedPlan> nested;
};

struct Plan {
  static constexpr int kSchemaVersion = 2;  ///< 2 adds "provenance"; version 1 files still load

  size_t pool_bytes = 0;  ///< the pool size: max(offset + bytes)
  size_t alignment = 256;
  size_t lower_bound_bytes = 0;  ///< max over steps of bytes live at that step (with aliasing)
  size_t naive_bytes = 0;        ///< sum of all records: no reuse
  size_t plain_lower_bound_bytes = 0;  ///< lower bound without any aliasing
  size_t plain_pool_bytes = 0;         ///< pool the same algorithm gets without aliasing
  std::string algorithm;
  bool optimal = false;  ///< pool_bytes == lower_bound_bytes
  double planning_ms = 0.0;
  bool verified = false;
  std::vector<PlanStep> steps;
  std::vector<PlannedTensor> tensors;
  PlanProvenance provenance;  ///< filled by whoever knows the model and options (the CLI)
  /// The nested plans of control-flow nodes, in step order (empty for most models). verify()
  /// checks that each fits the workspace record of its node.
  std::vector<NestedPlan> nested;

  /// Checks that every owning tensor lies inside the pool, is aligned, and overlaps no other
  /// tensor in both time and address; aliases must lie inside the tensor they alias, in bytes
  /// and in steps.
  /// The message names the first two tensors that collide.
  Status verify() const;
  /// The workspace record of `nested`'s node, which holds its pool; null when there is none.
  const PlannedTensor* region_of(const NestedPlan& nested) const;
  /// Versioned JSON (schema in the README).
  std::string to_json() const;
  /// Parses what to_json() wrote (schema_version 2, or 1 without provenance); rejects others.
  static Expected<Plan> from_json(std::string_view json);
  /// The plan Session::create(model, options) would use, without creating a Session: the
  /// backend of options.device prepares every node (so the plan holds that backend's
  /// workspaces: a CUDA plan shows CUDA's), then options.plan places them, or
  /// options.plan_override is verified and returned. Session::create takes the same path, so a
  /// caller learns the pool size here and can then give SessionOptions::pool exactly that many
  /// bytes. Allocates no pool. Errors as Session::create's (unsupported nodes, a missing device).
  /// Defined in the runtime library.
  static Expected<Plan> build(const Model& model, const SessionOptions& options);
  /// Index into `tensors` of graph value `id`, or -1 (weights are not planned).
  int32_t find_tensor(int32_t id) const;
};

}  // namespace onepool
