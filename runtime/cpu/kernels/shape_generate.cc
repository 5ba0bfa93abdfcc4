// ConstantOfShape, Range and EyeLike: outputs generated from scalars, written at run time so a
// large output costs no prepared memory.
#include <cmath>
#include <cstring>

#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

class FillKernel final : public Kernel {
 public:
  FillKernel(int64_t count, size_t element_size, uint64_t bits)
      : count_(count), element_size_(element_size), bits_(bits) {}
  Status run(const RunContext& context) override {
    fill_elements(static_cast<std::byte*>(context.outputs[0].data), count_, element_size_, &bits_);
    return Status::ok();
  }

 private:
  int64_t count_;
  size_t element_size_;
  uint64_t bits_;
};

template <class T>
T read_scalar(const TensorView& view) {
  T value;
  std::memcpy(&value, view.data, sizeof(T));
  return value;
}

// Range: out[i] = start + i * delta for i < max(ceil((limit - start) / delta), 0). An output
// planned at a --bound takes any count up to it and reports its actual length. The count is
// checked against the static output shape at run time (the scalars may be runtime tensors).
template <class T>
class RangeKernel final : public Kernel {
 public:
  RangeKernel(std::string node, int64_t count, bool bounded)
      : node_(std::move(node)), count_(count), bounded_(bounded) {}
  Status run(const RunContext& context) override {
    const T start = read_scalar<T>(context.inputs[0]);
    const T limit = read_scalar<T>(context.inputs[1]);
    const T delta = read_scalar<T>(context.inputs[2]);
    if (delta == T{0}) return make_status(StatusCode::kInvalidArgument, node_, ": delta is 0");
    const double steps = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                   static_cast<double>(delta));
    // A count beyond int64 (Range(INT64_MIN, INT64_MAX, 1)) cannot be converted: say so instead
    // of printing a wrapped, negative count.
    if (steps >= 9.2e18) {
      return make_status(StatusCode::kInvalidArgument, node_, ": start/limit/delta give ", steps,
                         " elements, more than an int64 count; the output has ", count_);
    }
    const int64_t count = steps > 0 ? static_cast<int64_t>(steps) : 0;
    if (bounded_) {
      ONEPOOL_RETURN_IF_ERROR(take_count(context, count));
    } else if (count != count_) {
      return make_status(StatusCode::kInvalidArgument, node_, ": output has ", count_,
                         " elements but start/limit/delta give ", count);
    }
    T* out = static_cast<T*>(context.outputs[0].data);
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    return Status::ok();
  }

 private:
  // Output planned at a --bound: any count up to it, reported as the output's actual shape.
  Status take_count(const RunContext& context, int64_t count) const {
    if (context.output_shapes == nullptr) {
      return make_status(StatusCode::kInternal, node_, ": run without RunContext::output_shapes");
    }
    if (count > count_) {
      return make_status(StatusCode::kOutOfRange, node_, ": start/limit/delta give ", count,
                         " elements, the output is planned for at most ", count_,
                         " (--bound): give a larger --bound");
    }
    context.output_shapes[0] = Shape{count};
    return Status::ok();
  }

  std::string node_;
  int64_t count_;  // the output's elements (bounded: the most a run may produce)
  bool bounded_;
};

std::unique_ptr<Kernel> make_range_for(DType dtype, std::string node, int64_t count, bool bounded) {
  switch (dtype) {
    case DType::kFloat32:
      return std::make_unique<RangeKernel<float>>(std::move(node), count, bounded);
    case DType::kFloat64:
      return std::make_unique<RangeKernel<double>>(std::move(node), count, bounded);
    case DType::kInt16:
      return std::make_unique<RangeKernel<int16_t>>(std::move(node), count, bounded);
    case DType::kInt32:
      return std::make_unique<RangeKernel<int32_t>>(std::move(node), count, bounded);
    case DType::kInt64:
      return std::make_unique<RangeKernel<int64_t>>(std::move(node), count, bounded);
    default:
      return nullptr;
  }
}

// EyeLike: ones on diagonal k of a 2-D output, zeros elsewhere.
class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(int64_t rows, int64_t cols, int64_t k, size_t element_size, uint64_t one)
      : rows_(rows), cols_(cols), k_(k), element_size_(element_size), one_(one) {}
  Status run(const RunContext& context) override {
    auto* out = static_cast<std::byte*>(context.outputs[0].data);
    std::memset(out, 0, static_cast<size_t>(rows_ * cols_) * element_size_);
    for (int64_t row = 0; row < rows_; ++row) {
      const int64_t col = row + k_;
      if (col < 0 || col >= cols_) continue;
      std::memcpy(out + (row * cols_ + col) * static_cast<int64_t>(element_size_), &one_,
                  element_size_);
    }
    return Status::ok();
  }

 private:
  int64_t rows_, cols_, k_;
  size_t element_size_;
  uint64_t one_;
};

}  // namespace

Expected<PreparedKernel> make_constant_of_shape_kernel(const NodeContext& node) {
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  const Value& output = node.output(0);
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, output.dtype));
  uint64_t bits = 0;  // default: float32 zero
  if (const Attribute* value = node.node().attributes.find("value")) {
    const HostTensor& tensor = value->tensor;
    if (tensor.dtype != output.dtype || tensor.element_count() != 1) {
      return node.error(StatusCode::kInvalidModel, "attribute 'value': expected one ",
                        dtype_name(output.dtype), " element, got ", dtype_name(tensor.dtype),
                        tensor.shape.to_string());
    }
    std::memcpy(&bits, tensor.data.data(), element_size);
  }
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<FillKernel>(output.shape.element_count(), element_size, bits);
  return prepared;
}

Expected<PreparedKernel> make_range_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_input(2) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected inputs start, limit, delta");
  }
  const DType dtype = node.output(0).dtype;
  for (size_t i = 0; i < 3; ++i) {
    if (node.input(i).dtype != dtype || node.input(i).shape.element_count() != 1) {
      return node.error(StatusCode::kInvalidModel, "input '", node.input(i).name, "': expected a ",
                        dtype_name(dtype), " scalar, got ", dtype_name(node.input(i).dtype),
                        node.input(i).shape.to_string());
    }
  }
  PreparedKernel prepared;
  const bool bounded = !node.output(0).bound.empty();
  prepared.kernel = make_range_for(dtype, describe_node(node.node()),
                                   node.output(0).shape.element_count(), bounded);
  prepared.data_dependent_outputs = bounded;
  if (prepared.kernel == nullptr) {
    return node.error(StatusCode::kUnsupported, "dtype ", dtype_name(dtype),
                      " (expected float32, float64, int16, int32 or int64)");
  }
  return prepared;
}

Expected<PreparedKernel> make_eye_like_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  const Value& output = node.output(0);
  if (output.shape.rank() != 2) {
    return node.error(StatusCode::kInvalidModel, "output '", output.name,
                      "': expected rank 2, got ", output.shape.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, output.dtype));
  const int64_t k = node.node().attributes.get_int("k", 0);
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<EyeLikeKernel>(output.shape[0], output.shape[1], k,
                                                    element_size, element_bits(output.dtype, 1.0));
  return prepared;
}

}  // namespace onepool::cpu::data
