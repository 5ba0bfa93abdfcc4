// ScatterND, GatherND, ScatterElements and the deprecated Scatter (ScatterElements under its
// opset-9 name). Indices are runtime tensors (int32 or int64): every index is checked before
// anything is written, and an out-of-range one returns kOutOfRange naming the node, the index,
// its position and the valid range; nothing is read or written outside a buffer.
//
// Scatters copy `data` to the output (skipped when the planner runs them in place) and then
// apply the updates in index order, so duplicate indices with reduction "none" keep the last
// update, as the ONNX reference does.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/bounded_readers.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

enum class Reduction : uint8_t { kNone, kAdd, kMul, kMax, kMin };

Expected<Reduction> parse_reduction(const NodeContext& node) {
  const std::string name = node.node().attributes.get_string("reduction", "none");
  if (name == "none") return Reduction::kNone;
  if (name == "add") return Reduction::kAdd;
  if (name == "mul") return Reduction::kMul;
  if (name == "max") return Reduction::kMax;
  if (name == "min") return Reduction::kMin;
  return node.error(StatusCode::kInvalidModel, "attribute 'reduction' must be none, add, mul, ",
                    "max or min, got '", name, "'");
}

template <class T>
void reduce_into(Reduction reduction, T& target, T update) {
  switch (reduction) {
    case Reduction::kNone:
      target = update;
      return;
    case Reduction::kAdd:
      target = static_cast<T>(target + update);
      return;
    case Reduction::kMul:
      target = static_cast<T>(target * update);
      return;
    case Reduction::kMax:
      target = std::max(target, update);
      return;
    case Reduction::kMin:
      target = std::min(target, update);
      return;
  }
}

int64_t index_at(const TensorView& indices, int64_t i) {
  if (indices.dtype == DType::kInt32) return indices.as<const int32_t>()[i];
  return indices.as<const int64_t>()[i];
}

Status index_error(const std::string& node, int64_t position, int64_t value, int64_t dim) {
  return make_status(StatusCode::kOutOfRange, node, ": index ", value, " at position ", position,
                     " of 'indices' is out of range for a dim of ", dim, " (expected [", -dim, ", ",
                     dim - 1, "])");
}

Status check_indices_dtype(const NodeContext& node, size_t index) {
  const DType dtype = node.input(index).dtype;
  if (dtype == DType::kInt32 || dtype == DType::kInt64) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "indices '", node.input(index).name,
                    "': expected int32 or int64, got ", dtype_name(dtype));
}

Status require_io(const NodeContext& node, size_t inputs) {
  for (size_t i = 0; i < inputs; ++i) {
    if (!node.has_input(i)) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " is required");
    }
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is required");
  if (node.input(0).dtype != node.output(0).dtype) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "' has dtype ",
                      dtype_name(node.output(0).dtype), ", expected data's ",
                      dtype_name(node.input(0).dtype));
  }
  return Status::ok();
}

// Reductions need arithmetic on the element type; "none" only moves bytes.
constexpr DTypeSet kReduceTypes = kNumericTypes;

// Calls fn(TypeTag<T>) with T the arithmetic type of `dtype` for a reduction, or with an
// unsigned type of the element's size for "none" (any 1/2/4/8-byte dtype, bool included).
template <class Fn>
Expected<PreparedKernel> visit_scatter_type(const NodeContext& node, Reduction reduction,
                                            const Fn& fn) {
  const DType dtype = node.input(0).dtype;
  if (reduction != Reduction::kNone) {
    return visit_dtype<kReduceTypes>(node, describe_input(node, 0), dtype, fn);
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, data::movable_element_size(node, dtype));
  Expected<PreparedKernel> result = node.error(StatusCode::kInternal, "unreachable");
  data::dispatch_element_size(element_size,
                              [&](auto tag) { result = fn(TypeTag<decltype(tag)>{}); });
  return result;
}

// ---------------------------------------------------------------------------------------------
// ScatterND: indices [q..., k] address slices data[i_0, ..., i_{k-1}, :] of `slice` elements;
// updates [q..., data.shape[k:]] holds one slice per index tuple.

template <class T>
class ScatterNDKernel final : public Kernel {
 public:
  ScatterNDKernel(std::string node, Shape data, int64_t tuples, int tuple_size, int64_t slice,
                  Reduction reduction)
      : node_(std::move(node)),
        data_(data),
        tuples_(tuples),
        tuple_size_(tuple_size),
        slice_(slice),
        reduction_(reduction) {
    int64_t stride = slice_;
    for (int k = tuple_size_ - 1; k >= 0; --k) {
      strides_[static_cast<size_t>(k)] = stride;
      stride *= data_[k];
    }
  }

  Status run(const RunContext& context) override {
    const TensorView& indices = context.inputs[1];
    // Step 1. Validate every index before the output is touched.
    for (int64_t t = 0; t < tuples_; ++t) {
      for (int k = 0; k < tuple_size_; ++k) {
        const int64_t position = t * tuple_size_ + k;
        const int64_t index = index_at(indices, position);
        if (index < -data_[k] || index >= data_[k]) {
          return index_error(node_, position, index, data_[k]);
        }
      }
    }
    // Step 2. Copy data (no-op in place), then apply the slices in order.
    const auto& data = context.inputs[0];
    T* out = context.outputs[0].as<T>();
    data::parallel_copy(data.data, out, data.bytes(), *context.threads);
    const T* updates = context.inputs[2].as<const T>();
    for (int64_t t = 0; t < tuples_; ++t) {
      int64_t offset = 0;
      for (int k = 0; k < tuple_size_; ++k) {
        int64_t index = index_at(indices, t * tuple_size_ + k);
        if (index < 0) index += data_[k];
        offset += index * strides_[static_cast<size_t>(k)];
      }
      const T* src = updates + t * slice_;
      T* dst = out + offset;
      if (reduction_ == Reduction::kNone) {
        std::memcpy(dst, src, static_cast<size_t>(slice_) * sizeof(T));
        continue;
      }
      for (int64_t i = 0; i < slice_; ++i) reduce_into(reduction_, dst[i], src[i]);
    }
    return Status::ok();
  }

 private:
  std::string node_;
  Shape data_;
  int64_t tuples_;
  int tuple_size_;
  int64_t slice_;
  Reduction reduction_;
  std::array<int64_t, Shape::kMaxRank> strides_{};
};

Expected<PreparedKernel> make_scatter_nd_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_io(node, 3));
  ONEPOOL_RETURN_IF_ERROR(check_indices_dtype(node, 1));
  ONEPOOL_ASSIGN_OR_RETURN(Reduction reduction, parse_reduction(node));
  const Shape& data = node.input(0).shape;
  const Shape& indices = node.input(1).shape;
  const Shape& updates = node.input(2).shape;
  if (node.input(2).dtype != node.input(0).dtype || node.output(0).shape != data) {
    return node.error(StatusCode::kInvalidModel, "updates and output must have data's dtype ",
                      "and the output data's shape ", data.to_string());
  }
  if (indices.rank() < 1) {
    return node.error(StatusCode::kInvalidModel, "indices '", node.input(1).name,
                      "' must have rank >= 1");
  }
  const int64_t tuple_size = indices[indices.rank() - 1];
  if (tuple_size < 1 || tuple_size > data.rank()) {
    return node.error(StatusCode::kInvalidModel, "indices '", node.input(1).name, "': last dim ",
                      tuple_size, " must be in [1, ", data.rank(), "] (data rank)");
  }
  // updates.shape must be indices.shape[:-1] + data.shape[k:].
  Shape expected;
  for (int a = 0; a + 1 < indices.rank(); ++a) expected.push_back(indices[a]);
  for (int a = static_cast<int>(tuple_size); a < data.rank(); ++a) {
    if (!expected.push_back(data[a])) {
      return node.error(StatusCode::kUnsupported, "updates rank exceeds ", Shape::kMaxRank);
    }
  }
  if (updates != expected) {
    return node.error(StatusCode::kInvalidModel, "updates '", node.input(2).name,
                      "': expected shape ", expected.to_string(), ", got ", updates.to_string());
  }
  int64_t slice = 1;
  for (int a = static_cast<int>(tuple_size); a < data.rank(); ++a) slice *= data[a];
  const int64_t tuples = tuple_size == 0 ? 0 : indices.element_count() / tuple_size;
  std::string name = describe_node(node.node());
  return visit_scatter_type(node, reduction, [&](auto tag) -> Expected<PreparedKernel> {
    using T = typename decltype(tag)::type;
    PreparedKernel prepared;
    prepared.kernel = std::make_unique<ScatterNDKernel<T>>(
        name, data, tuples, static_cast<int>(tuple_size), slice, reduction);
    prepared.in_place_inputs = kInPlaceInput0;
    return prepared;
  });
}

// ---------------------------------------------------------------------------------------------
// GatherND: with b = batch_dims, indices [b..., q..., k] pick slices data[b..., i_0..i_{k-1}, :]
// of `slice` elements; the output is [b..., q..., data.shape[b+k:]].

class GatherNDKernel final : public Kernel {
 public:
  GatherNDKernel(std::string node, Shape data, int64_t batches, int64_t tuples_per_batch,
                 int batch_dims, int tuple_size, int64_t slice_bytes, int64_t batch_stride_bytes)
      : node_(std::move(node)),
        data_(data),
        batches_(batches),
        tuples_per_batch_(tuples_per_batch),
        batch_dims_(batch_dims),
        tuple_size_(tuple_size),
        slice_bytes_(slice_bytes),
        batch_stride_bytes_(batch_stride_bytes) {
    int64_t stride = slice_bytes_;
    for (int k = tuple_size_ - 1; k >= 0; --k) {
      strides_[static_cast<size_t>(k)] = stride;
      stride *= data_[batch_dims_ + k];
    }
  }

  Status run(const RunContext& context) override {
    const TensorView& indices = context.inputs[1];
    const int64_t tuples = batches_ * tuples_per_batch_;
    for (int64_t t = 0; t < tuples; ++t) {
      for (int k = 0; k < tuple_size_; ++k) {
        const int64_t position = t * tuple_size_ + k;
        const int64_t index = index_at(indices, position);
        const int64_t dim = data_[batch_dims_ + k];
        if (index < -dim || index >= dim) return index_error(node_, position, index, dim);
      }
    }
    const auto* data = static_cast<const std::byte*>(context.inputs[0].data);
    auto* out = static_cast<std::byte*>(context.outputs[0].data);
    context.threads->parallel_for(tuples, 64, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        int64_t offset = (t / tuples_per_batch_) * batch_stride_bytes_;
        for (int k = 0; k < tuple_size_; ++k) {
          int64_t index = index_at(indices, t * tuple_size_ + k);
          if (index < 0) index += data_[batch_dims_ + k];
          offset += index * strides_[static_cast<size_t>(k)];
        }
        std::memcpy(out + t * slice_bytes_, data + offset, static_cast<size_t>(slice_bytes_));
      }
    });
    return Status::ok();
  }

 private:
  std::string node_;
  Shape data_;
  int64_t batches_, tuples_per_batch_;
  int batch_dims_, tuple_size_;
  int64_t slice_bytes_, batch_stride_bytes_;
  std::array<int64_t, Shape::kMaxRank> strides_{};
};

Expected<PreparedKernel> make_gather_nd_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_io(node, 2));
  ONEPOOL_RETURN_IF_ERROR(check_indices_dtype(node, 1));
  if (data::reads_bounded_input(node)) return data::make_bounded_gather_nd_kernel(node);
  const Shape& data = node.input(0).shape;
  const Shape& indices = node.input(1).shape;
  const int64_t batch_dims = node.node().attributes.get_int("batch_dims", 0);
  if (indices.rank() < 1 || batch_dims < 0 || batch_dims >= std::min(data.rank(), indices.rank())) {
    return node.error(StatusCode::kInvalidModel, "batch_dims ", batch_dims,
                      " must be in [0, min(data rank ", data.rank(), ", indices rank ",
                      indices.rank(), "))");
  }
  const int b = static_cast<int>(batch_dims);
  for (int a = 0; a < b; ++a) {
    if (data[a] != indices[a]) {
      return node.error(StatusCode::kInvalidModel, "batch dim ", a, " differs: data ",
                        data.to_string(), ", indices ", indices.to_string());
    }
  }
  const int64_t tuple_size = indices[indices.rank() - 1];
  if (tuple_size < 1 || tuple_size > data.rank() - b) {
    return node.error(StatusCode::kInvalidModel, "indices '", node.input(1).name, "': last dim ",
                      tuple_size, " must be in [1, ", data.rank() - b, "]");
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size,
                           data::movable_element_size(node, node.input(0).dtype));
  Shape expected;
  for (int a = 0; a + 1 < indices.rank(); ++a) expected.push_back(indices[a]);
  int64_t slice = 1;
  for (int a = b + static_cast<int>(tuple_size); a < data.rank(); ++a) {
    slice *= data[a];
    if (!expected.push_back(data[a])) {
      return node.error(StatusCode::kUnsupported, "output rank exceeds ", Shape::kMaxRank);
    }
  }
  if (node.output(0).shape != expected) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", expected.to_string(), ", got ",
                      node.output(0).shape.to_string());
  }
  int64_t batches = 1, batch_stride = 1;
  for (int a = 0; a < b; ++a) batches *= data[a];
  for (int a = b; a < data.rank(); ++a) batch_stride *= data[a];
  int64_t tuples_per_batch = 1;
  for (int a = b; a + 1 < indices.rank(); ++a) tuples_per_batch *= indices[a];
  const auto bytes = static_cast<int64_t>(element_size);
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<GatherNDKernel>(
      describe_node(node.node()), data, batches, tuples_per_batch, b, static_cast<int>(tuple_size),
      slice * bytes, batch_stride * bytes);
  return prepared;
}

// ---------------------------------------------------------------------------------------------
// ScatterElements (and Scatter): for every position p of indices (and updates, same shape),
// out[p with p[axis] replaced by indices[p]] (op)= updates[p].

template <class T>
class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(std::string node, Shape indices, std::vector<int64_t> data_strides,
                        int axis, int64_t axis_dim, Reduction reduction)
      : node_(std::move(node)),
        indices_(indices),
        data_strides_(std::move(data_strides)),
        axis_(axis),
        axis_dim_(axis_dim),
        reduction_(reduction) {}

  Status run(const RunContext& context) override {
    const TensorView& indices = context.inputs[1];
    const int64_t count = indices_.element_count();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t index = index_at(indices, i);
      if (index < -axis_dim_ || index >= axis_dim_) return index_error(node_, i, index, axis_dim_);
    }
    const auto& data = context.inputs[0];
    T* out = context.outputs[0].as<T>();
    data::parallel_copy(data.data, out, data.bytes(), *context.threads);
    const T* updates = context.inputs[2].as<const T>();
    const int rank = indices_.rank();
    int64_t coord[Shape::kMaxRank] = {};
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = index_at(indices, i);
      if (index < 0) index += axis_dim_;
      int64_t offset = 0;
      for (int k = 0; k < rank; ++k) {
        offset += (k == axis_ ? index : coord[k]) * data_strides_[static_cast<size_t>(k)];
      }
      reduce_into(reduction_, out[offset], updates[i]);
      for (int k = rank - 1; k >= 0; --k) {
        if (++coord[k] < indices_[k]) break;
        coord[k] = 0;
      }
    }
    return Status::ok();
  }

 private:
  std::string node_;
  Shape indices_;
  std::vector<int64_t> data_strides_;
  int axis_;
  int64_t axis_dim_;
  Reduction reduction_;
};

Expected<PreparedKernel> make_scatter_elements_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_io(node, 3));
  ONEPOOL_RETURN_IF_ERROR(check_indices_dtype(node, 1));
  ONEPOOL_ASSIGN_OR_RETURN(Reduction reduction, parse_reduction(node));
  const Shape& data = node.input(0).shape;
  const Shape& indices = node.input(1).shape;
  if (node.input(2).dtype != node.input(0).dtype || node.input(2).shape != indices ||
      node.output(0).shape != data) {
    return node.error(StatusCode::kInvalidModel, "updates must have data's dtype and the shape ",
                      "of indices ", indices.to_string(), ", and the output data's shape ",
                      data.to_string());
  }
  if (indices.rank() != data.rank()) {
    return node.error(StatusCode::kInvalidModel, "indices ", indices.to_string(),
                      " must have the rank of data ", data.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(
      int axis,
      data::normalize_axis(node, node.node().attributes.get_int("axis", 0), data.rank(), "axis"));
  for (int a = 0; a < data.rank(); ++a) {
    if (a != axis && indices[a] > data[a]) {
      return node.error(StatusCode::kInvalidModel, "indices ", indices.to_string(), " exceed data ",
                        data.to_string(), " on axis ", a);
    }
  }
  std::string name = describe_node(node.node());
  std::vector<int64_t> strides = data::contiguous_strides(data);
  return visit_scatter_type(node, reduction, [&](auto tag) -> Expected<PreparedKernel> {
    using T = typename decltype(tag)::type;
    PreparedKernel prepared;
    prepared.kernel = std::make_unique<ScatterElementsKernel<T>>(name, indices, strides, axis,
                                                                 data[axis], reduction);
    prepared.in_place_inputs = kInPlaceInput0;
    return prepared;
  });
}

}  // namespace

void register_scatter_gather_kernels(KernelRegistry& registry) {
  registry.add("ScatterND", &make_scatter_nd_kernel);
  registry.add("GatherND", &make_gather_nd_kernel);
  registry.add("ScatterElements", &make_scatter_elements_kernel);
  registry.add("Scatter", &make_scatter_elements_kernel);
}

}  // namespace onepool::cpu
