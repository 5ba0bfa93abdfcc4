// The Sessions a server runs requests on, behind one interface: fixed shapes (a SessionPool, one
// Model's weights shared) or shape ranges (one DynamicSession per slot, each request at its own
// shapes inside the declared profile). Both lend a slot to one request at a time, with the same
// queue time-out and back-pressure.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onepool/dynamic_session.h"
#include "onepool/session_pool.h"
#include "onepool/shape_profile.h"
#include "onepool/status.h"
#include "planner/core/graph.h"
#include "tools/onepool/serve_metrics.h"

namespace onepool::serve {

/// One input or output as the server describes and checks it.
struct ServedTensor {
  TensorInfo info;            ///< name, dtype and shape (the top of any range)
  std::vector<int64_t> dims;  ///< the shape metadata shows: -1 on an axis that varies
};

/// What a request may send and gets back.
struct ServedModel {
  std::vector<ServedTensor> inputs;   ///< in run order
  std::vector<ServedTensor> outputs;  ///< in model order
  ShapeProfile profile;               ///< the ranges inputs may take; none: exactly info.shape

  /// Index by name, or -1.
  int input_index(std::string_view name) const;
  int output_index(std::string_view name) const;
  /// Ok when input `index` may have `shape`; else an error naming the input, what it expected
  /// (the shape, or the declared range) and what it got.
  Status check_input_shape(size_t index, const Shape& shape) const;
};

/// A Model's inputs and outputs at its loaded (fixed) shapes.
ServedModel served_model_of(const Model& model);

/// The slots requests run on. Thread-safe: run() may be called from many threads at once.
class InferenceSlots {
 public:
  virtual ~InferenceSlots() = default;

  virtual const ServedModel& served() const = 0;
  /// Number of slots (Sessions or DynamicSessions).
  virtual size_t size() const = 0;
  /// Slots running a request now (a snapshot).
  virtual size_t busy() const = 0;
  /// Pool bytes of all slots together (a dynamic-mode pool may grow with larger shapes).
  virtual size_t pool_bytes() const = 0;
  virtual Device device() const = 0;
  /// Why the slots run otherwise than asked (a static-mode DynamicSession that fell back to
  /// dynamic mode says why), for the start-up output; empty when nothing to say. Call it before
  /// serving.
  virtual std::string note() const { return {}; }
  /// Waits up to `queue_timeout` for a free slot (kResourceExhausted "busy: ..." when none came
  /// free), runs `inputs` (one per served input, in order) and returns one host tensor per
  /// output, each at the shape this run produced. Sets phases.queue_ns and phases.infer_ns.
  virtual Expected<std::vector<HostTensor>> run(std::span<const HostTensor> inputs,
                                                std::chrono::milliseconds queue_timeout,
                                                InferencePhases& phases) = 0;
};

/// Fixed shapes: the Sessions of `pool`.
std::unique_ptr<InferenceSlots> make_session_slots(std::unique_ptr<SessionPool> pool);

/// Shape ranges: `count` (>= 1) DynamicSessions of the model at `path`, each created with
/// `options`. Outputs whose dims differ between the bottom and the top of the ranges show -1
/// there.
Expected<std::unique_ptr<InferenceSlots>> make_dynamic_slots(const std::string& path,
                                                             const DynamicSessionOptions& options,
                                                             size_t count);

}  // namespace onepool::serve
