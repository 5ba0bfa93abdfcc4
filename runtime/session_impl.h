// What a Session holds (runtime/session.cc creates it; runtime/session_io.cc binds its graph
// inputs and outputs to caller buffers).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "onepool/model.h"
#include "onepool/plan.h"
#include "onepool/session.h"
#include "onepool/tensor.h"
#include "runtime/backend.h"

namespace onepool {

class SessionImpl {
 public:
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
  Plan plan;
  SessionTimings timings;
  std::vector<int32_t> input_ids;
  std::vector<int32_t> output_ids;
  std::vector<TensorView> feeds;  // an ONNX-style feed without its shape inputs (run())
  /// Per input / output: whether runs read or write the caller's buffer in place (the plan holds
  /// the value as external). An output that is also a graph input, or a value listed as an
  /// output twice, is copied out like a pooled one.
  std::vector<uint8_t> input_in_place;
  std::vector<uint8_t> output_in_place;
  /// The external values (PlannedTensor::external) of the plan, each once.
  std::vector<int32_t> external_ids;
  /// Session::bind_input / bind_output: the views run_bound() runs on (data null: not bound).
  std::vector<TensorView> bound_inputs;
  std::vector<TensorView> bound_outputs;
};

/// Fills input_in_place, output_in_place and external_ids from the plan (create()).
void index_external_io(SessionImpl& impl);

/// Points the backend at every in-place input and output of this run, after checking each
/// buffer's device and alignment and that no external output overlaps an external input or
/// another output. No allocation.
Status point_external_io(SessionImpl& impl, std::span<const TensorView> inputs,
                         std::span<const TensorView> outputs);

}  // namespace onepool
