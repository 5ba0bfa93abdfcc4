// Gather and GatherElements. Indices are usually runtime tensors (int32 or int64): every index is
// bounds-checked at run time and an out-of-range one returns kOutOfRange naming the node, the
// index and the valid range; nothing is read out of bounds.
#include <algorithm>
#include <cstring>

#include "runtime/cpu/kernels/bounded_readers.h"
#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

int64_t index_at(const TensorView& indices, int64_t i) {
  if (indices.dtype == DType::kInt32) return indices.as<const int32_t>()[i];
  return indices.as<const int64_t>()[i];
}

Status index_error(const std::string& node, int64_t position, int64_t value, int64_t dim) {
  return make_status(StatusCode::kOutOfRange, node, ": index ", value, " at position ", position,
                     " is out of range for axis dim ", dim, " (expected [", -dim, ", ", dim - 1,
                     "])");
}

Status check_indices_dtype(const NodeContext& node, size_t index) {
  const DType dtype = node.input(index).dtype;
  if (dtype == DType::kInt32 || dtype == DType::kInt64) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "indices '", node.input(index).name,
                    "': expected int32 or int64, got ", dtype_name(dtype));
}

// Gather: data viewed as [outer, axis_dim, inner]; out as [outer, index_count, inner].
class GatherKernel final : public Kernel {
 public:
  GatherKernel(std::string node, int64_t outer, int64_t axis_dim, int64_t inner_bytes)
      : node_(std::move(node)), outer_(outer), axis_dim_(axis_dim), inner_bytes_(inner_bytes) {}

  Status run(const RunContext& context) override {
    const TensorView& indices = context.inputs[1];
    const int64_t count = indices.shape.element_count();
    for (int64_t j = 0; j < count; ++j) {
      const int64_t index = index_at(indices, j);
      if (index < -axis_dim_ || index >= axis_dim_) return index_error(node_, j, index, axis_dim_);
    }
    const auto* data = static_cast<const std::byte*>(context.inputs[0].data);
    auto* out = static_cast<std::byte*>(context.outputs[0].data);
    const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner_bytes_));
    context.threads->parallel_for(outer_ * count, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t o = row / count;
        int64_t index = index_at(indices, row % count);
        if (index < 0) index += axis_dim_;
        std::memcpy(out + row * inner_bytes_, data + (o * axis_dim_ + index) * inner_bytes_,
                    static_cast<size_t>(inner_bytes_));
      }
    });
    return Status::ok();
  }

 private:
  std::string node_;
  int64_t outer_, axis_dim_, inner_bytes_;
};

// GatherElements: out[i] = data[i with axis coordinate replaced by indices[i]].
template <class T>
class GatherElementsKernel final : public Kernel {
 public:
  GatherElementsKernel(std::string node, Shape index_shape, std::vector<int64_t> data_strides,
                       int axis, int64_t axis_dim)
      : node_(std::move(node)),
        index_shape_(index_shape),
        data_strides_(std::move(data_strides)),
        axis_(axis),
        axis_dim_(axis_dim) {}

  Status run(const RunContext& context) override {
    const T* data = context.inputs[0].as<const T>();
    const TensorView& indices = context.inputs[1];
    T* out = context.outputs[0].as<T>();
    const int rank = index_shape_.rank();
    int64_t coord[Shape::kMaxRank] = {};
    const int64_t count = index_shape_.element_count();
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = index_at(indices, i);
      if (index < -axis_dim_ || index >= axis_dim_) return index_error(node_, i, index, axis_dim_);
      if (index < 0) index += axis_dim_;
      int64_t offset = 0;
      for (int k = 0; k < rank; ++k) {
        offset += (k == axis_ ? index : coord[k]) * data_strides_[static_cast<size_t>(k)];
      }
      out[i] = data[offset];
      for (int k = rank - 1; k >= 0; --k) {
        if (++coord[k] < index_shape_[k]) break;
        coord[k] = 0;
      }
    }
    return Status::ok();
  }

 private:
  std::string node_;
  Shape index_shape_;
  std::vector<int64_t> data_strides_;
  int axis_;
  int64_t axis_dim_;
};

Status check_gather_io(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected inputs data, indices and output 0");
  }
  ONEPOOL_RETURN_IF_ERROR(check_indices_dtype(node, 1));
  if (node.input(0).dtype != node.output(0).dtype) {
    return node.error(StatusCode::kInvalidModel, "output dtype ", dtype_name(node.output(0).dtype),
                      " differs from data dtype ", dtype_name(node.input(0).dtype));
  }
  return Status::ok();
}

}  // namespace

Expected<PreparedKernel> make_gather_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_gather_io(node));
  const Shape& data = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, node.input(0).dtype));
  ONEPOOL_ASSIGN_OR_RETURN(int axis, normalize_axis(node, node.node().attributes.get_int("axis", 0),
                                                    data.rank(), "axis"));
  if (reads_bounded_input(node)) return make_bounded_gather_kernel(node, axis, element_size);
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= data[k];
  for (int k = axis + 1; k < data.rank(); ++k) inner *= data[k];
  if (const HostTensor* constant = node.constant_input(1)) {
    // Constant indices (weights) are checked once here, so a bad model fails at load time.
    for (int64_t j = 0; j < constant->element_count(); ++j) {
      const int64_t index = constant->int_at(j);
      if (index < -data[axis] || index >= data[axis]) {
        return index_error(describe_node(node.node()), j, index, data[axis]);
      }
    }
  }
  const int64_t expected = outer * inner * node.input(1).shape.element_count();
  ONEPOOL_RETURN_IF_ERROR(check_output_count(node, 0, expected));
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<GatherKernel>(describe_node(node.node()), outer, data[axis],
                                                   inner * static_cast<int64_t>(element_size));
  return prepared;
}

Expected<PreparedKernel> make_gather_elements_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_gather_io(node));
  const Shape& data = node.input(0).shape;
  const Shape& indices = node.input(1).shape;
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, node.input(0).dtype));
  ONEPOOL_ASSIGN_OR_RETURN(int axis, normalize_axis(node, node.node().attributes.get_int("axis", 0),
                                                    data.rank(), "axis"));
  if (indices.rank() != data.rank() || !(node.output(0).shape == indices)) {
    return node.error(StatusCode::kInvalidModel, "indices ", indices.to_string(), " and output ",
                      node.output(0).shape.to_string(), " must have the rank of data ",
                      data.to_string(), " and equal shapes");
  }
  std::string name = describe_node(node.node());
  std::vector<int64_t> strides = contiguous_strides(data);
  PreparedKernel prepared;
  dispatch_element_size(element_size, [&](auto tag) {
    prepared.kernel = std::make_unique<GatherElementsKernel<decltype(tag)>>(
        std::move(name), indices, std::move(strides), axis, data[axis]);
  });
  return prepared;
}

}  // namespace onepool::cpu::data
