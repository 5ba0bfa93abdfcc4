// A Session's graph inputs and outputs in caller buffers: external values (PlannedTensor::
// external) pointed at the buffers a run is given, and the IoBinding calls.
#include <algorithm>
#include <cstdint>

#include "planner/core/graph.h"
#include "runtime/session_impl.h"

namespace onepool {
namespace {

constexpr size_t kCudaExternalAlignment = 256;  // what every CUDA kernel was written against

const char* role_name(bool input) { return input ? "input" : "output"; }

// Device and alignment of a buffer a run will read or write in place.
Status check_external_buffer(const TensorInfo& info, const TensorView& view, Device device,
                             bool input) {
  if (view.device.kind != device.kind ||
      (device.kind == DeviceKind::kCuda && view.device.index != device.index)) {
    return make_status(StatusCode::kInvalidArgument, role_name(input), " '", info.name,
                       "' is external (read and written in place): its buffer must be on ",
                       device.to_string(), ", got a ", view.device.to_string(), " buffer");
  }
  const size_t alignment =
      device.kind == DeviceKind::kCuda ? kCudaExternalAlignment : dtype_size(info.dtype);
  if (alignment > 1 && reinterpret_cast<uintptr_t>(view.data) % alignment != 0) {
    return make_status(StatusCode::kInvalidArgument, role_name(input), " '", info.name,
                       "' is external (read and written in place): its buffer must be ", alignment,
                       "-byte aligned on ", device.to_string(), ", got address ", view.data);
  }
  return Status::ok();
}

// A CPU Session copies every buffer with memcpy: a device buffer cannot feed it.
Status check_host_buffer(const TensorInfo& info, const TensorView& view, Device device,
                         bool input) {
  if (device.kind != DeviceKind::kCpu || view.device.kind == DeviceKind::kCpu) {
    return Status::ok();
  }
  return make_status(StatusCode::kInvalidArgument, role_name(input), " '", info.name, "': a ",
                     view.device.to_string(), " buffer cannot feed a cpu Session");
}

bool overlaps(const TensorView& a, const TensorView& b) {
  if (a.bytes() == 0 || b.bytes() == 0) return false;
  const auto a_start = reinterpret_cast<uintptr_t>(a.data);
  const auto b_start = reinterpret_cast<uintptr_t>(b.data);
  return a_start < b_start + b.bytes() && b_start < a_start + a.bytes();
}

// The nodes write an external output while inputs are still read and other outputs written.
Status check_no_overlap(const SessionImpl& impl, std::span<const TensorView> inputs,
                        std::span<const TensorView> outputs) {
  const auto& input_infos = impl.model->inputs();
  const auto& output_infos = impl.model->outputs();
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (impl.output_in_place[o] == 0) continue;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (impl.input_in_place[i] == 0 || !overlaps(outputs[o], inputs[i])) continue;
      return make_status(StatusCode::kInvalidArgument, "output '", output_infos[o].name,
                         "' and input '", input_infos[i].name,
                         "' are both external and their buffers overlap: the run would "
                         "overwrite the input while reading it");
    }
    for (size_t other = 0; other < outputs.size(); ++other) {
      if (other == o || !overlaps(outputs[o], outputs[other])) continue;
      return make_status(StatusCode::kInvalidArgument, "output '", output_infos[o].name,
                         "' is external and its buffer overlaps the buffer of output '",
                         output_infos[other].name, "'");
    }
  }
  return Status::ok();
}

Status point_one(SessionImpl& impl, const TensorInfo& info, int32_t id, const TensorView& view,
                 bool input) {
  const Device device = impl.backend->device();
  ONEPOOL_RETURN_IF_ERROR(check_external_buffer(info, view, device, input));
  return impl.backend->set_external_data(id, view.data)
      .with_context(str_cat(role_name(input), " '", info.name, "'"));
}

Status check_binding(const SessionImpl& impl, const TensorInfo& info, const TensorView& view,
                     bool in_place, bool input) {
  ONEPOOL_RETURN_IF_ERROR(check_tensor_matches(info, view, role_name(input)));
  const Device device = impl.backend->device();
  if (in_place) return check_external_buffer(info, view, device, input);
  return check_host_buffer(info, view, device, input);
}

// One side of a Session's graph I/O: its inputs or its outputs, index for index.
struct IoSide {
  const std::vector<TensorInfo>& infos;
  const std::vector<int32_t>& ids;
  const std::vector<uint8_t>& in_place;
  bool input;
};

IoSide inputs_of(const SessionImpl& impl) {
  return {impl.model->inputs(), impl.input_ids, impl.input_in_place, true};
}
IoSide outputs_of(const SessionImpl& impl) {
  return {impl.model->outputs(), impl.output_ids, impl.output_in_place, false};
}

// kFailedPrecondition naming the first tensor of `side` bind_input/bind_output never bound.
Status check_side_bound(const IoSide& side, std::span<const TensorView> bound) {
  for (size_t i = 0; i < bound.size(); ++i) {
    const TensorView& view = bound[i];
    if (view.data != nullptr || (view.dtype != DType::kUndefined && view.bytes() == 0)) continue;
    const char* call = side.input ? "bind_input" : "bind_output";
    return make_status(StatusCode::kFailedPrecondition, role_name(side.input), " '",
                       side.infos[i].name, "' (", i, ") is not bound: call ", call, "(", i,
                       ", buffer) first");
  }
  return Status::ok();
}

// Points the backend at the in-place tensors of `side`; checks the copied ones' device.
Status point_side(SessionImpl& impl, const IoSide& side, std::span<const TensorView> views) {
  const Device device = impl.backend->device();
  for (size_t i = 0; i < views.size(); ++i) {
    if (side.in_place[i] == 0) {
      ONEPOOL_RETURN_IF_ERROR(check_host_buffer(side.infos[i], views[i], device, side.input));
      continue;
    }
    ONEPOOL_RETURN_IF_ERROR(point_one(impl, side.infos[i], side.ids[i], views[i], side.input));
  }
  return Status::ok();
}

}  // namespace

void index_external_io(SessionImpl& impl) {
  const Graph& graph = impl.model->graph();
  std::vector<uint8_t> external(graph.values.size(), 0);
  for (const PlannedTensor& tensor : impl.plan.tensors) {
    if (!tensor.external || tensor.id < 0 || static_cast<size_t>(tensor.id) >= external.size()) {
      continue;
    }
    if (external[static_cast<size_t>(tensor.id)] == 0) impl.external_ids.push_back(tensor.id);
    external[static_cast<size_t>(tensor.id)] = 1;
  }
  impl.input_in_place.assign(impl.input_ids.size(), 0);
  for (size_t i = 0; i < impl.input_ids.size(); ++i) {
    impl.input_in_place[i] = external[static_cast<size_t>(impl.input_ids[i])];
  }
  impl.output_in_place.assign(impl.output_ids.size(), 0);
  for (size_t o = 0; o < impl.output_ids.size(); ++o) {
    const auto id = static_cast<size_t>(impl.output_ids[o]);
    const bool is_input = graph.values[id].kind == ValueKind::kGraphInput;
    const bool listed_before = std::find(impl.output_ids.begin(), impl.output_ids.begin() + o,
                                         impl.output_ids[o]) != impl.output_ids.begin() + o;
    impl.output_in_place[o] = external[id] != 0 && !is_input && !listed_before;
  }
  impl.bound_inputs.assign(impl.input_ids.size(), TensorView{});
  impl.bound_outputs.assign(impl.output_ids.size(), TensorView{});
}

Status point_external_io(SessionImpl& impl, std::span<const TensorView> inputs,
                         std::span<const TensorView> outputs) {
  ONEPOOL_RETURN_IF_ERROR(point_side(impl, inputs_of(impl), inputs));
  ONEPOOL_RETURN_IF_ERROR(point_side(impl, outputs_of(impl), outputs));
  return check_no_overlap(impl, inputs, outputs);
}

Status Session::bind_input(size_t i, const TensorView& buffer) {
  if (i >= impl_->input_ids.size()) {
    return make_status(StatusCode::kInvalidArgument, "bind_input: index ", i, " but the model has ",
                       impl_->input_ids.size(), " inputs");
  }
  ONEPOOL_RETURN_IF_ERROR(check_binding(*impl_, impl_->model->inputs()[i], buffer,
                                        impl_->input_in_place[i] != 0, true));
  impl_->bound_inputs[i] = buffer;
  return Status::ok();
}

Status Session::bind_output(size_t i, const TensorView& buffer) {
  if (i >= impl_->output_ids.size()) {
    return make_status(StatusCode::kInvalidArgument, "bind_output: index ", i,
                       " but the model has ", impl_->output_ids.size(), " outputs");
  }
  ONEPOOL_RETURN_IF_ERROR(check_binding(*impl_, impl_->model->outputs()[i], buffer,
                                        impl_->output_in_place[i] != 0, false));
  impl_->bound_outputs[i] = buffer;
  return Status::ok();
}

Status Session::run_bound(const RunOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_side_bound(inputs_of(*impl_), impl_->bound_inputs));
  ONEPOOL_RETURN_IF_ERROR(check_side_bound(outputs_of(*impl_), impl_->bound_outputs));
  return run(impl_->bound_inputs, impl_->bound_outputs, options);
}

bool Session::input_is_external(size_t i) const {
  return i < impl_->input_in_place.size() && impl_->input_in_place[i] != 0;
}

bool Session::output_is_external(size_t i) const {
  return i < impl_->output_in_place.size() && impl_->output_in_place[i] != 0;
}

}  // namespace onepool
