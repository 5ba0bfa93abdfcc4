// Kernels over tensors of data-dependent size (see bounded_readers.h).
#include "runtime/cpu/kernels/bounded_readers.h"

#include <cstring>
#include <string>

#include "runtime/cpu/kernels/bounded_output.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

int64_t index_at(const TensorView& indices, int64_t i) {
  if (indices.dtype == DType::kInt32) return indices.as<const int32_t>()[i];
  return indices.as<const int64_t>()[i];
}

class BoundedGatherKernel final : public Kernel {
 public:
  BoundedGatherKernel(std::string node, std::string data, std::string output, Shape data_bound,
                      int axis, size_t element_size)
      : node_(std::move(node)),
        data_(std::move(data)),
        output_(std::move(output)),
        data_bound_(data_bound),
        axis_(axis),
        element_size_(element_size) {}

  Status run(const RunContext& context) override {
    const TensorView& data = context.inputs[0];
    const TensorView& indices = context.inputs[1];
    ONEPOOL_RETURN_IF_ERROR(check_data_layout(data.shape));
    Shape out;
    for (int k = 0; k < axis_; ++k) out.push_back(data.shape[k]);
    for (int64_t dim : indices.shape) out.push_back(dim);
    for (int k = axis_ + 1; k < data.shape.rank(); ++k) out.push_back(data.shape[k]);
    ONEPOOL_RETURN_IF_ERROR(check_within_bound(node_, output_, context.outputs[0].shape, out));
    const int64_t axis_dim = data.shape[axis_];
    const int64_t count = indices.shape.element_count();
    for (int64_t j = 0; j < count; ++j) {
      const int64_t index = index_at(indices, j);
      if (index < -axis_dim || index >= axis_dim) {
        return make_status(StatusCode::kOutOfRange, node_, ": index ", index, " at position ", j,
                           " is out of range for axis dim ", axis_dim, " (data '", data_,
                           "' has actual shape ", data.shape.to_string(), " in this run)");
      }
    }
    copy_rows(data, indices, axis_dim, count, context.outputs[0].data);
    context.output_shapes[0] = out;
    return Status::ok();
  }

 private:
  // Data smaller than its bound anywhere but dim 0 is laid out with other strides.
  Status check_data_layout(const Shape& actual) const {
    for (int k = 1; k < actual.rank(); ++k) {
      if (actual[k] == data_bound_[k]) continue;
      return make_status(StatusCode::kUnsupported, node_, ": data '", data_, "' has actual shape ",
                         actual.to_string(), ", smaller than its bound in dim ", k,
                         "; Gather reads bounded data only when dim 0 alone varies");
    }
    return Status::ok();
  }
  void copy_rows(const TensorView& data, const TensorView& indices, int64_t axis_dim, int64_t count,
                 void* output) const {
    int64_t outer = 1;
    int64_t inner_bytes = static_cast<int64_t>(element_size_);
    for (int k = 0; k < axis_; ++k) outer *= data.shape[k];
    for (int k = axis_ + 1; k < data.shape.rank(); ++k) inner_bytes *= data.shape[k];
    const auto* source = static_cast<const std::byte*>(data.data);
    auto* target = static_cast<std::byte*>(output);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < count; ++j) {
        int64_t index = index_at(indices, j);
        if (index < 0) index += axis_dim;
        std::memcpy(target + (o * count + j) * inner_bytes,
                    source + (o * axis_dim + index) * inner_bytes,
                    static_cast<size_t>(inner_bytes));
      }
    }
  }

  std::string node_;
  std::string data_;
  std::string output_;
  Shape data_bound_;
  int axis_;
  size_t element_size_;
};

// Row-major strides of `shape`, in elements.
void strides_of(const Shape& shape, int64_t* strides) {
  int64_t stride = 1;
  for (int k = shape.rank() - 1; k >= 0; --k) {
    strides[k] = stride;
    stride *= shape[k];
  }
}

class BoundedTransposeKernel final : public Kernel {
 public:
  BoundedTransposeKernel(std::string node, std::string output, std::vector<int> perm,
                         size_t element_size)
      : node_(std::move(node)),
        output_(std::move(output)),
        perm_(std::move(perm)),
        element_size_(element_size) {}

  Status run(const RunContext& context) override {
    const TensorView& input = context.inputs[0];
    const int rank = input.shape.rank();
    Shape out;
    for (int k = 0; k < rank; ++k) out.push_back(input.shape[perm_[static_cast<size_t>(k)]]);
    ONEPOOL_RETURN_IF_ERROR(check_within_bound(node_, output_, context.outputs[0].shape, out));
    int64_t in_strides[Shape::kMaxRank] = {};
    strides_of(input.shape, in_strides);
    int64_t coordinate[Shape::kMaxRank] = {};
    const auto* source = static_cast<const std::byte*>(input.data);
    auto* target = static_cast<std::byte*>(context.outputs[0].data);
    const int64_t count = out.element_count();
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      for (int k = 0; k < rank; ++k)
        offset += coordinate[k] * in_strides[perm_[static_cast<size_t>(k)]];
      std::memcpy(target + i * static_cast<int64_t>(element_size_),
                  source + offset * static_cast<int64_t>(element_size_), element_size_);
      for (int k = rank - 1; k >= 0; --k) {  // the next output coordinate, row-major
        if (++coordinate[k] < out[k]) break;
        coordinate[k] = 0;
      }
    }
    context.output_shapes[0] = out;
    return Status::ok();
  }

 private:
  std::string node_;
  std::string output_;
  std::vector<int> perm_;
  size_t element_size_;
};

class BoundedGatherNdKernel final : public Kernel {
 public:
  BoundedGatherNdKernel(std::string node, std::string indices, std::string output,
                        size_t element_size)
      : node_(std::move(node)),
        indices_(std::move(indices)),
        output_(std::move(output)),
        element_size_(element_size) {}

  Status run(const RunContext& context) override {
    const TensorView& data = context.inputs[0];
    const TensorView& indices = context.inputs[1];
    const int tuple = static_cast<int>(indices.shape[indices.shape.rank() - 1]);
    Shape out;
    for (int k = 0; k + 1 < indices.shape.rank(); ++k) out.push_back(indices.shape[k]);
    for (int k = tuple; k < data.shape.rank(); ++k) out.push_back(data.shape[k]);
    ONEPOOL_RETURN_IF_ERROR(check_within_bound(node_, output_, context.outputs[0].shape, out));
    int64_t data_strides[Shape::kMaxRank] = {};
    strides_of(data.shape, data_strides);
    const int64_t slice_bytes = (tuple < data.shape.rank() ? data_strides[tuple - 1] : 1) *
                                static_cast<int64_t>(element_size_);
    const int64_t tuples = tuple > 0 ? indices.shape.element_count() / tuple : 0;
    const auto* source = static_cast<const std::byte*>(data.data);
    auto* target = static_cast<std::byte*>(context.outputs[0].data);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = 0;
      for (int k = 0; k < tuple; ++k) {
        int64_t index = index_at(indices, t * tuple + k);
        const int64_t dim = data.shape[k];
        if (index < -dim || index >= dim) {
          return make_status(StatusCode::kOutOfRange, node_, ": indices '", indices_, "': index ",
                             index, " of tuple ", t, " is out of range for data dim ", k, " (", dim,
                             ")");
        }
        offset += (index < 0 ? index + dim : index) * data_strides[k];
      }
      std::memcpy(target + t * slice_bytes, source + offset * static_cast<int64_t>(element_size_),
                  static_cast<size_t>(slice_bytes));
    }
    context.output_shapes[0] = out;
    return Status::ok();
  }

 private:
  std::string node_;
  std::string indices_;
  std::string output_;
  size_t element_size_;
};

// The positions of the dims that are not 1.
Shape non_unit_dims(const Shape& shape) {
  Shape dims;
  for (int k = 0; k < shape.rank(); ++k) {
    if (shape[k] != 1) dims.push_back(k);
  }
  return dims;
}

class BoundedCopyKernel final : public Kernel {
 public:
  BoundedCopyKernel(std::string node, std::string output, Shape input_dims, Shape output_dims)
      : node_(std::move(node)),
        output_(std::move(output)),
        input_dims_(input_dims),
        output_dims_(output_dims) {}

  Status run(const RunContext& context) override {
    const TensorView& input = context.inputs[0];
    Shape out = context.outputs[0].shape;
    for (int k = 0; k < output_dims_.rank(); ++k) {
      out[static_cast<int>(output_dims_[k])] = input.shape[static_cast<int>(input_dims_[k])];
    }
    if (out.element_count() != input.shape.element_count()) {
      return make_status(StatusCode::kUnsupported, node_, ": input of actual shape ",
                         input.shape.to_string(), " does not map onto output '", output_,
                         "' (planned ", context.outputs[0].shape.to_string(), ", got ",
                         out.to_string(), ")");
    }
    ONEPOOL_RETURN_IF_ERROR(check_within_bound(node_, output_, context.outputs[0].shape, out));
    const size_t bytes = static_cast<size_t>(input.shape.element_count()) * dtype_size(input.dtype);
    if (bytes > 0 && input.data != context.outputs[0].data) {
      std::memmove(context.outputs[0].data, input.data, bytes);
    }
    context.output_shapes[0] = out;
    return Status::ok();
  }

 private:
  std::string node_;
  std::string output_;
  Shape input_dims_;   // positions of the input's dims that are not 1 (in the bound)
  Shape output_dims_;  // the same for the output, one for one
};

}  // namespace

namespace {

// A reader of data-dependent tensors: it reports its outputs' actual shapes too.
PreparedKernel bounded_reader(std::unique_ptr<Kernel> kernel, const char* implementation) {
  PreparedKernel prepared;
  prepared.kernel = std::move(kernel);
  prepared.accepts_bounded_inputs = true;
  prepared.data_dependent_outputs = true;
  prepared.implementation = implementation;
  return prepared;
}

}  // namespace

bool reads_bounded_input(const NodeContext& node) {
  for (size_t i = 0; i < node.input_count(); ++i) {
    if (node.has_input(i) && !node.input(i).bound.empty()) return true;
  }
  return false;
}

Expected<PreparedKernel> make_bounded_gather_kernel(const NodeContext& node, int axis,
                                                    size_t element_size) {
  return bounded_reader(std::make_unique<BoundedGatherKernel>(
                            describe_node(node.node()), node.input(0).name, node.output(0).name,
                            node.input(0).shape, axis, element_size),
                        "Gather (data-dependent shapes)");
}

Expected<PreparedKernel> make_bounded_transpose_kernel(const NodeContext& node,
                                                       const std::vector<int>& perm) {
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, node.input(0).dtype));
  return bounded_reader(std::make_unique<BoundedTransposeKernel>(
                            describe_node(node.node()), node.output(0).name, perm, element_size),
                        "Transpose (data-dependent shapes)");
}

Expected<PreparedKernel> make_bounded_gather_nd_kernel(const NodeContext& node) {
  const Value& data = node.input(0);
  const Value& indices = node.input(1);
  if (!data.bound.empty() || node.node().attributes.get_int("batch_dims", 0) != 0) {
    return node.error(StatusCode::kUnsupported,
                      "GatherND reads a data-dependent shape only as "
                      "its indices, with batch_dims 0 (data '",
                      data.name, "'", data.bound.empty() ? "" : " is bounded", ")");
  }
  const int64_t tuple = indices.shape.rank() > 0 ? indices.shape[indices.shape.rank() - 1] : 0;
  if (tuple < 1 || tuple > data.shape.rank()) {
    return node.error(StatusCode::kInvalidModel, "indices '", indices.name, "': last dim ", tuple,
                      " must be in [1, ", data.shape.rank(), "]");
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, data.dtype));
  return bounded_reader(
      std::make_unique<BoundedGatherNdKernel>(describe_node(node.node()), indices.name,
                                              node.output(0).name, element_size),
      "GatherND (data-dependent shapes)");
}

Expected<PreparedKernel> make_bounded_copy_kernel(const NodeContext& node) {
  const Value& input = node.input(0);
  const Value& output = node.output(0);
  const Shape input_dims = non_unit_dims(input.shape);
  const Shape output_dims = non_unit_dims(output.shape);
  bool same = input_dims.rank() == output_dims.rank() && input.dtype == output.dtype;
  for (int k = 0; same && k < input_dims.rank(); ++k) {
    same = input.shape[static_cast<int>(input_dims[k])] ==
           output.shape[static_cast<int>(output_dims[k])];
  }
  if (!same) {
    return node.error(StatusCode::kUnsupported, "input '", input.name,
                      "' has a data-dependent shape (planned ", input.shape.to_string(),
                      ") and output '", output.name, "' ", output.shape.to_string(),
                      " merges or splits its dims; only 1s may be added or removed");
  }
  PreparedKernel prepared =
      bounded_reader(std::make_unique<BoundedCopyKernel>(describe_node(node.node()), output.name,
                                                         input_dims, output_dims),
                     "");
  prepared.in_place_inputs = kInPlaceInput0;
  prepared.output_is_view = true;  // run() skips the copy onto itself
  return prepared;
}

}  // namespace onepool::cpu::data
