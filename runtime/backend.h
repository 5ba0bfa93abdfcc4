// The internal backend interface: what a Session needs from a device.
//
// A Session creates one Backend, then: prepare() every node (all unsupported nodes reported at
// once, per-node workspace bytes declared) → the planner places tensors and workspaces → bind()
// allocates the pool once (or adopts caller memory), makes weights resident, and fixes every
// node's views → execute() walks the nodes with no allocation.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "onepool/model.h"
#include "onepool/plan.h"
#include "onepool/session.h"
#include "onepool/status.h"
#include "planner/analysis/build_plan.h"

namespace onepool {

/// Where one graph value lives once a plan is bound.
struct ValueLocation {
  /// kExternal: a caller buffer (PlannedTensor::external), set by Backend::set_external_data.
  enum class Region : uint8_t { kNone, kPool, kWeights, kExternal } region = Region::kNone;
  size_t offset = 0;  // bytes from the region's base (0 for kExternal)
};

/// Resolves every value's location from a plan (aliases followed to their owner). Values the
/// plan does not place (weights) are located in the weights region.
Expected<std::vector<ValueLocation>> locate_values(const Model& model, const Plan& plan);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  /// Prepares every node's kernel. Fails with every unsupported node listed.
  virtual Status prepare(const Model& model, NodeMemoryNeeds& needs) = 0;
  /// Allocates the pool (or adopts `caller_pool`), makes weights resident, binds node views.
  virtual Status bind(const Model& model, const Plan& plan, void* caller_pool,
                      size_t caller_capacity) = 0;
  /// The view of graph value `id` (pool or weights); valid after bind().
  virtual TensorView value_view(int32_t id) const = 0;
  /// Copies host data into / out of a value's view. No allocation.
  virtual Status copy_in(int32_t id, const TensorView& source) = 0;
  virtual Status copy_out(int32_t id, const TensorView& destination) = 0;
  /// Runs every node in execution order. No allocation.
  virtual Status execute() = 0;
  /// Bytes of pool memory this backend allocated itself.
  virtual size_t owned_pool_bytes() const = 0;
  /// (optional) One whole run: copy every input in, execute, copy every output out. A device
  /// backend overrides it to wait once per run instead of once per output. No allocation.
  virtual Status run(std::span<const int32_t> input_ids, std::span<const TensorView> inputs,
                     std::span<const int32_t> output_ids, std::span<const TensorView> outputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      ONEPOOL_RETURN_IF_ERROR(copy_in(input_ids[i], inputs[i]));
    }
    ONEPOOL_RETURN_IF_ERROR(execute());
    for (size_t i = 0; i < outputs.size(); ++i) {
      ONEPOOL_RETURN_IF_ERROR(copy_out(output_ids[i], outputs[i]));
    }
    return Status::ok();
  }
  /// (optional) Points external value `id` (PlannedTensor::external) at the caller's `data`,
  /// which the Session has checked (dtype, shape, device, alignment): every node that reads or
  /// writes the value uses it from then on. No allocation, except that a CUDA backend whose
  /// captured graph used another address captures it again on the next run.
  virtual Status set_external_data(int32_t id, void* data) {
    (void)id;
    (void)data;
    return make_status(StatusCode::kUnsupported,
                       "external inputs and outputs are not supported on ", device().to_string());
  }
  /// The flag execute() reads before each node until the next call (RunOptions::cancel;
  /// nullptr: none). A backend checks it with cancelled_before().
  void set_cancel_flag(const std::atomic<bool>* cancel) {
    cancel_ = cancel != nullptr ? cancel : &never_cancelled_;
  }
  /// (optional) The kernel path prepare() chose for the node at execution index `n`
  /// ("im2col+sgemm"); empty where the backend does not name one.
  virtual std::string node_implementation(size_t n) const {
    (void)n;
    return {};
  }
  /// (optional) CUDA graph capture and replay counts; all zero where there is no graph.
  virtual CudaGraphStats cuda_graph_stats() const { return {}; }
  /// (optional) Starts timing every node of every execute(); false where not supported.
  virtual bool enable_profiling() { return false; }
  /// (optional) Per-node times since profiling started or the last reset_profile().
  virtual SessionProfile profile() const { return {}; }
  virtual void reset_profile() {}
  /// (optional) Testing aid (SessionOptions::debug_perturb_node): after the node at execution
  /// index `node` runs, add `value` to the first element of its output 0, which the Session has
  /// checked is a non-empty float32 or float64 tensor. False where not supported.
  virtual bool set_debug_perturbation(size_t node, double value) {
    (void)node;
    (void)value;
    return false;
  }

 protected:
  /// kCancelled naming node `n` of `graph` (execution order) when the caller has cancelled the
  /// run, else ok: one relaxed load (the flag is never null).
  Status cancelled_before(const Graph& graph, size_t n) const {
    if (!cancel_->load(std::memory_order_relaxed)) return Status::ok();
    return make_status(StatusCode::kCancelled, "run cancelled before ",
                       describe_node(graph.nodes[n]), ", node ", n, " of ", graph.nodes.size(),
                       " in execution order");
  }

 private:
  std::atomic<bool> never_cancelled_{false};
  const std::atomic<bool>* cancel_ = &never_cancelled_;
};

/// The backend for options.device: cpu, or cuda when built with it and a device is present.
/// A missing device is an error, never a fallback.
Expected<std::unique_ptr<Backend>> create_backend(const SessionOptions& options);

}  // namespace onepool
