// A graph nested in a node (an If branch, a Loop body) run on the CPU as a nested plan: a Model of
// its own (optimized like any model, weights packed), prepared on a nested backend whose kernels
// run on the enclosing Session's threads, planned once with the default planner, and bound into
// one region of the node's workspace. Running it allocates nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "onepool/model.h"
#include "onepool/plan.h"
#include "runtime/backend.h"
#include "runtime/cpu/kernel.h"

namespace onepool::cpu {

class NestedGraph {
 public:
  /// Prepares and plans `graph` for `node` (errors say "<node> <name>: ..."). Its kernels run on
  /// the pool `*threads` points at when execute() runs.
  static Expected<NestedGraph> prepare(const NodeContext& node, std::string name,
                                       const Graph& graph, ThreadPool* const* threads);

  const std::string& name() const { return name_; }
  const Graph& graph() const { return model_->graph(); }
  size_t pool_bytes() const { return plan_.pool_bytes; }
  /// This graph's plan as a summary for the parent plan (node: the node holding it).
  NestedPlan summary(const std::string& node) const {
    return NestedPlan{node,
                      name_,
                      plan_.pool_bytes,
                      plan_.lower_bound_bytes,
                      plan_.tensors.size(),
                      plan_.algorithm,
                      plan_.tensors,
                      plan_.nested};
  }
  /// The workspace bytes that hold this graph's pool at the alignment bind() needs.
  size_t region_bytes() const;
  /// Binds the graph into `region` (its first aligned byte on). Call once, before any run.
  Status bind(std::byte* region, size_t region_bytes);
  /// The view of value `id` of graph() (valid after bind()).
  TensorView view(int32_t id) const { return backend_->value_view(id); }
  /// Copies into value `id`; nothing for an input the graph never reads (it has no storage).
  Status copy_in(int32_t id, const TensorView& source) {
    return view(id).data == nullptr ? Status::ok() : backend_->copy_in(id, source);
  }
  Status copy_out(int32_t id, const TensorView& target) { return backend_->copy_out(id, target); }
  Status execute() { return backend_->execute(); }

 private:
  std::string name_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Backend> backend_;
  Plan plan_;
};

/// Workspace bytes for a region holding a pool of `pool_bytes` (room to align its start).
size_t nested_region_bytes(size_t pool_bytes);

/// The values a Loop or Scan body carries from one iteration to the next: body outputs
/// [first_output, first_output + count) move into body inputs [first_input, ...) after each
/// iteration, through one staging slot each placed after the body's region in the node's
/// workspace (a body may swap two carried values through views of its inputs, so a direct copy
/// could overwrite one before it is read).
class CarriedValues {
 public:
  /// Lays out the slots after `body`'s region; returns the node's whole workspace bytes.
  size_t layout(const NestedGraph& body, size_t first_input, size_t first_output, size_t count);
  /// Binds `body` at the start of the workspace and the slots after it.
  Status bind(NestedGraph& body, std::byte* workspace, size_t workspace_bytes);
  /// Moves every carried output into its input (no allocation).
  void carry(const NestedGraph& body) const;

 private:
  size_t first_input_ = 0;
  size_t first_output_ = 0;
  size_t region_bytes_ = 0;
  std::vector<size_t> offsets_;
  std::byte* workspace_ = nullptr;
};

}  // namespace onepool::cpu
