// MaxUnpool: scatters X into a zero output at the positions MaxPool's Indices name. An index is
// flat over the unpooled shape [N, C, (in - 1) * stride + kernel - pads, ...] ([0, its element
// count)), as MaxPool produces it; one outside that range is kOutOfRange naming the node, the
// position and the value. Duplicate indices keep the last value.
//
// The output is the unpooled shape, or the larger output_shape input (a constant or a runtime
// tensor that must equal the planned shape): then an index keeps its coordinates, as the ONNX
// test data has it (index 5 of a 4x4 unpooled plane is row 1, column 1 of a 5x5 output too).
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

template <class E>
class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(std::string node, Shape out, Shape unpooled, int64_t count, bool shape_input)
      : node_(std::move(node)),
        out_(out),
        unpooled_(unpooled),
        count_(count),
        shape_input_(shape_input) {}

  Status run(const RunContext& context) override {
    if (shape_input_) ONEPOOL_RETURN_IF_ERROR(check_shape_input(context.inputs[2]));
    const auto* indices = context.inputs[1].as<const int64_t>();
    const int64_t count = count_;
    const int64_t total = unpooled_.element_count();
    for (int64_t i = 0; i < count; ++i) {
      if (indices[i] < 0 || indices[i] >= total) {
        return make_status(StatusCode::kOutOfRange, node_, ": index ", indices[i], " at position ",
                           i, " is outside the output (expected [0, ", total - 1, "])");
      }
    }
    const E* x = context.inputs[0].as<const E>();
    E* y = context.outputs[0].as<E>();
    std::memset(static_cast<void*>(y), 0, static_cast<size_t>(out_.element_count()) * sizeof(E));
    if (out_ == unpooled_) {
      for (int64_t i = 0; i < count; ++i) y[indices[i]] = x[i];
      return Status::ok();
    }
    for (int64_t i = 0; i < count; ++i) y[output_offset(indices[i])] = x[i];
    return Status::ok();
  }

 private:
  Status check_shape_input(const TensorView& shape) const {
    const auto* dims = shape.as<const int64_t>();
    bool same = shape.shape.element_count() == out_.rank();
    for (int a = 0; same && a < out_.rank(); ++a) same = dims[a] == out_[a];
    if (same) return Status::ok();
    return make_status(StatusCode::kInvalidArgument, node_, ": output_shape differs from ",
                       out_.to_string(), ", the shape planned when the session was created");
  }

  // The unpooled-shape index's coordinates, as an offset into the (larger) output.
  int64_t output_offset(int64_t index) const {
    int64_t offset = 0, stride = 1;
    for (int a = out_.rank() - 1; a >= 0; --a) {
      offset += (index % unpooled_[a]) * stride;
      index /= unpooled_[a];
      stride *= out_[a];
    }
    return offset;
  }

  std::string node_;
  Shape out_;
  Shape unpooled_;
  int64_t count_;
  bool shape_input_;
};

Expected<PreparedKernel> make_max_unpool_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected inputs X, I and output 0");
  }
  const Value& x = node.input(0);
  const Value& indices = node.input(1);
  const Shape& out = node.output(0).shape;
  if (indices.dtype != DType::kInt64 || indices.shape != x.shape) {
    return node.error(StatusCode::kInvalidModel, "I '", indices.name, "': expected int64 ",
                      x.shape.to_string(), ", got ", dtype_name(indices.dtype),
                      indices.shape.to_string());
  }
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, x.dtype));
  const int spatial = x.shape.rank() - 2;
  if (spatial < 1 || out.rank() != x.shape.rank() || out[0] != x.shape[0] || out[1] != x.shape[1]) {
    return node.error(StatusCode::kInvalidModel, "X ", x.shape.to_string(), " and output ",
                      out.to_string(), " must be [N, C, spatial...] with the same N, C");
  }
  const bool shape_input = node.has_input(2);
  if (shape_input) {
    const Value& shape = node.input(2);
    if (shape.dtype != DType::kInt64 || shape.shape.element_count() != out.rank()) {
      return node.error(StatusCode::kInvalidModel, "output_shape '", shape.name,
                        "': expected int64 [", out.rank(), "]");
    }
  }
  // Step 1. The unpooled shape the indices address; the output is it, or larger.
  Shape unpooled = out;
  {
    const auto& attributes = node.node().attributes;
    const std::vector<int64_t> kernel = attributes.get_ints("kernel_shape");
    const std::vector<int64_t> strides =
        attributes.get_ints("strides", std::vector<int64_t>(static_cast<size_t>(spatial), 1));
    const std::vector<int64_t> pads =
        attributes.get_ints("pads", std::vector<int64_t>(static_cast<size_t>(2 * spatial), 0));
    if (kernel.size() != static_cast<size_t>(spatial) ||
        strides.size() != static_cast<size_t>(spatial) ||
        pads.size() != static_cast<size_t>(2 * spatial)) {
      return node.error(StatusCode::kInvalidModel, "kernel_shape, strides and pads must have ",
                        spatial, ", ", spatial, " and ", 2 * spatial, " entries");
    }
    for (int a = 0; a < spatial; ++a) {
      const auto k = static_cast<size_t>(a);
      const int64_t expected = (x.shape[a + 2] - 1) * strides[k] + kernel[k] - pads[k] -
                               pads[k + static_cast<size_t>(spatial)];
      unpooled[a + 2] = expected;
      if (expected < 0 || out[a + 2] < expected || (!shape_input && out[a + 2] != expected)) {
        return node.error(StatusCode::kInvalidModel, "output dim ", a + 2, " is ", out[a + 2],
                          ", expected ", shape_input ? "at least " : "",
                          "(in - 1) * stride + kernel - pads = ", expected);
      }
    }
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, data::movable_element_size(node, x.dtype));
  std::string name = describe_node(node.node());
  PreparedKernel prepared;
  data::dispatch_element_size(element_size, [&](auto tag) {
    prepared.kernel = std::make_unique<MaxUnpoolKernel<decltype(tag)>>(
        std::move(name), out, unpooled, x.shape.element_count(), shape_input);
  });
  return prepared;
}

}  // namespace

void register_max_unpool_kernel(KernelRegistry& registry) {
  registry.add("MaxUnpool", &make_max_unpool_kernel);
}

}  // namespace onepool::cpu
