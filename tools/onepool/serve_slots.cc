#include "tools/onepool/serve_slots.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "runtime/host_outputs.h"

namespace onepool::serve {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t ns_since(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

std::vector<int64_t> dims_of(const Shape& shape) { return {shape.begin(), shape.end()}; }

std::vector<ServedTensor> served_tensors(const std::vector<TensorInfo>& infos) {
  std::vector<ServedTensor> tensors;
  for (const TensorInfo& info : infos) tensors.push_back({info, dims_of(info.shape)});
  return tensors;
}

int index_of(const std::vector<ServedTensor>& tensors, std::string_view name) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].info.name == name) return static_cast<int>(i);
  }
  return -1;
}

Status exact_shape_mismatch(const TensorInfo& info, const Shape& got) {
  std::string detail;
  if (got.rank() != info.shape.rank()) {
    detail = str_cat("; rank ", info.shape.rank(), " vs ", got.rank());
  } else {
    for (int axis = 0; axis < got.rank(); ++axis) {
      if (got[axis] != info.shape[axis]) {
        detail = str_cat("; axis ", axis, " differs");
        break;
      }
    }
  }
  return make_status(StatusCode::kInvalidArgument, "input '", info.name, "': expected shape ",
                     info.shape.to_string(), ", got ", got.to_string(), detail);
}

// Zeroed host tensors of these shapes.
Expected<std::vector<HostTensor>> make_outputs(const std::vector<TensorInfo>& infos) {
  std::vector<HostTensor> outputs(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    ONEPOOL_ASSIGN_OR_RETURN(size_t bytes, tensor_bytes(infos[i].shape, infos[i].dtype));
    outputs[i] = HostTensor{infos[i].dtype, infos[i].shape, std::vector<std::byte>(bytes)};
  }
  return outputs;
}

std::vector<TensorView> views_of(std::span<const HostTensor> tensors) {
  std::vector<TensorView> views;
  for (const HostTensor& tensor : tensors) {
    views.push_back(
        {const_cast<std::byte*>(tensor.data.data()), tensor.dtype, tensor.shape, Device{}});
  }
  return views;
}

// ---- fixed shapes -----------------------------------------------------------------------------

class SessionSlots final : public InferenceSlots {
 public:
  explicit SessionSlots(std::unique_ptr<SessionPool> pool)
      : pool_(std::move(pool)), served_(served_model_of(pool_->model())) {}

  const ServedModel& served() const override { return served_; }
  size_t size() const override { return pool_->size(); }
  size_t busy() const override { return pool_->busy(); }
  size_t pool_bytes() const override { return pool_->pool_bytes(); }
  Device device() const override { return pool_->device(); }

  Expected<std::vector<HostTensor>> run(std::span<const HostTensor> inputs,
                                        std::chrono::milliseconds queue_timeout,
                                        InferencePhases& phases) override {
    ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> outputs,
                             make_outputs(pool_->model().outputs()));
    const std::vector<TensorView> input_views = views_of(inputs);
    const std::vector<TensorView> output_views = views_of(outputs);
    auto start = Clock::now();
    ONEPOOL_ASSIGN_OR_RETURN(SessionPool::Lease lease, pool_->acquire(queue_timeout));
    phases.queue_ns = ns_since(start);
    start = Clock::now();
    ONEPOOL_RETURN_IF_ERROR(lease.session().run(input_views, output_views));
    phases.infer_ns = ns_since(start);
    keep_actual_shapes(lease.session(), outputs);
    return outputs;
  }

 private:
  std::unique_ptr<SessionPool> pool_;
  ServedModel served_;
};

// ---- shape ranges -----------------------------------------------------------------------------

// Lends slot indices 0..count-1 to one holder at a time.
class SlotQueue {
 public:
  explicit SlotQueue(size_t count) {
    for (size_t i = count; i > 0; --i) free_.push_back(i - 1);
    count_ = count;
  }
  Expected<size_t> acquire(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!returned_.wait_for(lock, timeout, [this] { return !free_.empty(); })) {
      return make_status(StatusCode::kResourceExhausted, "busy: all ", count_,
                         " sessions in use for ", timeout.count(), " ms");
    }
    const size_t index = free_.back();
    free_.pop_back();
    return index;
  }
  void give_back(size_t index) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      free_.push_back(index);
    }
    returned_.notify_one();
  }
  size_t busy() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return count_ - free_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<size_t> free_;
  size_t count_ = 0;
};

struct DynamicSlot {
  std::unique_ptr<DynamicSession> session;
  std::atomic<size_t> pool_bytes{0};  // read by the metrics while another thread runs
};

// Host views of the inputs at these shapes, no data (output_infos reads shapes only).
std::vector<TensorView> shape_only_views(
    const std::vector<TensorInfo>& inputs,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>& shapes) {
  std::vector<TensorView> views;
  for (const TensorInfo& info : inputs) {
    TensorView view{nullptr, info.dtype, info.shape, Device{}};
    for (const auto& [name, dims] : shapes) {
      Expected<Shape> shape = Shape::from_dims(dims);
      if (name == info.name && shape) view.shape = *shape;
    }
    views.push_back(view);
  }
  return views;
}

// Inputs at the top of the ranges, -1 on every ranged axis; outputs at the top, -1 on every
// axis whose size differs at the bottom of the ranges.
Expected<ServedModel> served_model_of(DynamicSession& session) {
  ServedModel served;
  served.profile = session.profile();
  served.inputs = served_tensors(session.inputs());
  for (ServedTensor& input : served.inputs) {
    const InputShapeRange* range = served.profile.find(input.info.name);
    if (range == nullptr) continue;
    for (size_t axis = 0; axis < range->dims.size() && axis < input.dims.size(); ++axis) {
      if (range->dims[axis].min != range->dims[axis].max) input.dims[axis] = -1;
    }
  }
  const auto top = shape_only_views(session.inputs(), served.profile.max_shapes());
  const auto bottom = shape_only_views(session.inputs(), served.profile.min_shapes());
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<TensorInfo> top_outputs, session.output_infos(top));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<TensorInfo> bottom_outputs, session.output_infos(bottom));
  served.outputs = served_tensors(top_outputs);
  for (size_t i = 0; i < served.outputs.size() && i < bottom_outputs.size(); ++i) {
    std::vector<int64_t>& dims = served.outputs[i].dims;
    const Shape& low = bottom_outputs[i].shape;
    for (int axis = 0; axis < low.rank() && axis < static_cast<int>(dims.size()); ++axis) {
      if (low[axis] != dims[static_cast<size_t>(axis)]) dims[static_cast<size_t>(axis)] = -1;
    }
  }
  return served;
}

class DynamicSlots final : public InferenceSlots {
 public:
  DynamicSlots(std::vector<std::unique_ptr<DynamicSlot>> slots, ServedModel served)
      : slots_(std::move(slots)), served_(std::move(served)), queue_(slots_.size()) {}

  const ServedModel& served() const override { return served_; }
  size_t size() const override { return slots_.size(); }
  size_t busy() const override { return queue_.busy(); }
  size_t pool_bytes() const override {
    size_t total = 0;
    for (const auto& slot : slots_) total += slot->pool_bytes.load(std::memory_order_relaxed);
    return total;
  }
  Device device() const override { return Device{}; }  // DynamicSession runs on the CPU
  std::string note() const override {
    for (const auto& slot : slots_) {
      const std::string& note = slot->session->stats().mode_note;
      if (!note.empty()) return note;
    }
    return {};
  }

  Expected<std::vector<HostTensor>> run(std::span<const HostTensor> inputs,
                                        std::chrono::milliseconds queue_timeout,
                                        InferencePhases& phases) override {
    const std::vector<TensorView> input_views = views_of(inputs);
    auto start = Clock::now();
    ONEPOOL_ASSIGN_OR_RETURN(size_t index, queue_.acquire(queue_timeout));
    phases.queue_ns = ns_since(start);
    start = Clock::now();
    Expected<std::vector<HostTensor>> outputs = run_on(*slots_[index], input_views);
    phases.infer_ns = ns_since(start);
    queue_.give_back(index);
    return outputs;
  }

 private:
  static Expected<std::vector<HostTensor>> run_on(DynamicSlot& slot,
                                                  std::span<const TensorView> inputs) {
    DynamicSession& session = *slot.session;
    ONEPOOL_ASSIGN_OR_RETURN(std::vector<TensorInfo> infos, session.output_infos(inputs));
    ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> outputs, make_outputs(infos));
    const Status status = session.run(inputs, views_of(outputs));
    slot.pool_bytes.store(session.stats().pool_bytes, std::memory_order_relaxed);
    ONEPOOL_RETURN_IF_ERROR(status);
    for (size_t i = 0; i < outputs.size(); ++i) {
      ONEPOOL_ASSIGN_OR_RETURN(Shape actual, session.output_shape(i));
      if (actual == outputs[i].shape) continue;  // only data-dependent outputs shrink
      outputs[i].shape = actual;
      outputs[i].data.resize(static_cast<size_t>(actual.element_count()) *
                             dtype_size(outputs[i].dtype));
    }
    return outputs;
  }

  std::vector<std::unique_ptr<DynamicSlot>> slots_;
  ServedModel served_;
  SlotQueue queue_;
};

}  // namespace

int ServedModel::input_index(std::string_view name) const { return index_of(inputs, name); }
int ServedModel::output_index(std::string_view name) const { return index_of(outputs, name); }

Status ServedModel::check_input_shape(size_t index, const Shape& shape) const {
  const TensorInfo& info = inputs[index].info;
  if (profile.find(info.name) == nullptr) {
    return shape == info.shape ? Status::ok() : exact_shape_mismatch(info, shape);
  }
  if (shape.rank() != info.shape.rank()) {
    return make_status(StatusCode::kInvalidArgument, "input '", info.name, "': expected rank ",
                       info.shape.rank(), " (profile ", profile.to_string(), "), got ",
                       shape.to_string());
  }
  return profile.check(info.name, shape);
}

ServedModel served_model_of(const Model& model) {
  ServedModel served;
  served.inputs = served_tensors(model.inputs());
  served.outputs = served_tensors(model.outputs());
  return served;
}

std::unique_ptr<InferenceSlots> make_session_slots(std::unique_ptr<SessionPool> pool) {
  return std::make_unique<SessionSlots>(std::move(pool));
}

Expected<std::unique_ptr<InferenceSlots>> make_dynamic_slots(const std::string& path,
                                                             const DynamicSessionOptions& options,
                                                             size_t count) {
  if (count == 0) return Status(StatusCode::kInvalidArgument, "serve: 0 sessions");
  std::vector<std::unique_ptr<DynamicSlot>> slots;
  for (size_t i = 0; i < count; ++i) {
    auto slot = std::make_unique<DynamicSlot>();
    ONEPOOL_ASSIGN_OR_RETURN(slot->session, DynamicSession::create(path, options));
    slots.push_back(std::move(slot));
  }
  ONEPOOL_ASSIGN_OR_RETURN(ServedModel served, served_model_of(*slots.front()->session));
  for (auto& slot : slots) slot->pool_bytes = slot->session->stats().pool_bytes;
  return std::unique_ptr<InferenceSlots>(new DynamicSlots(std::move(slots), std::move(served)));
}

}  // namespace onepool::serve
