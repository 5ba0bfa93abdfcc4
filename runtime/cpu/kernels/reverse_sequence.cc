// ReverseSequence: for each batch entry b, the first sequence_lens[b] steps along time_axis are
// reversed and the rest copied. Input [max_len, batch, ...] (time_axis 0, batch_axis 1) or
// [batch, max_len, ...] (1, 0); elements move by size. sequence_lens is a runtime int64 tensor:
// a length outside [0, max_len] is kOutOfRange naming the node, the batch entry and the value,
// checked before anything is written.
#include <cstring>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(std::string node, int64_t max_len, int64_t batch, int64_t time_stride,
                        int64_t batch_stride, int64_t inner_bytes)
      : node_(std::move(node)),
        max_len_(max_len),
        batch_(batch),
        time_stride_(time_stride),
        batch_stride_(batch_stride),
        inner_bytes_(inner_bytes) {}

  Status run(const RunContext& context) override {
    const TensorView& lens = context.inputs[1];
    for (int64_t b = 0; b < batch_; ++b) {
      const int64_t len = length_at(lens, b);
      if (len < 0 || len > max_len_) {
        return make_status(StatusCode::kOutOfRange, node_, ": sequence_lens[", b, "] = ", len,
                           " is out of range (expected [0, ", max_len_, "])");
      }
    }
    const auto* x = static_cast<const std::byte*>(context.inputs[0].data);
    auto* y = static_cast<std::byte*>(context.outputs[0].data);
    // Strides are in units of inner blocks (the elements after both axes).
    context.threads->parallel_for(batch_ * max_len_, 16, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / max_len_;
        const int64_t t = task % max_len_;
        const int64_t len = length_at(lens, b);
        const int64_t source_t = t < len ? len - 1 - t : t;
        std::memcpy(y + (b * batch_stride_ + t * time_stride_) * inner_bytes_,
                    x + (b * batch_stride_ + source_t * time_stride_) * inner_bytes_,
                    static_cast<size_t>(inner_bytes_));
      }
    });
    return Status::ok();
  }

 private:
  static int64_t length_at(const TensorView& lens, int64_t b) {
    if (lens.dtype == DType::kInt32) return lens.as<const int32_t>()[b];
    return lens.as<const int64_t>()[b];
  }

  std::string node_;
  int64_t max_len_, batch_, time_stride_, batch_stride_, inner_bytes_;
};

Expected<PreparedKernel> make_reverse_sequence_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_input(1) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel,
                      "expected inputs input, sequence_lens and an "
                      "output");
  }
  const Value& input = node.input(0);
  const Value& lens = node.input(1);
  if (node.output(0).dtype != input.dtype || node.output(0).shape != input.shape) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "' must have the input's dtype and shape ", input.shape.to_string());
  }
  const auto& attributes = node.node().attributes;
  const int64_t time_axis = attributes.get_int("time_axis", 0);
  const int64_t batch_axis = attributes.get_int("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    return node.error(StatusCode::kInvalidModel, "time_axis ", time_axis, " and batch_axis ",
                      batch_axis, " must be 0 and 1 in some order");
  }
  if (input.shape.rank() < 2) {
    return node.error(StatusCode::kInvalidModel, "input '", input.name,
                      "' must have rank >= 2, got ", input.shape.to_string());
  }
  const int64_t batch = input.shape[static_cast<int>(batch_axis)];
  if (lens.dtype != DType::kInt64 && lens.dtype != DType::kInt32) {
    return node.error(StatusCode::kInvalidModel, "sequence_lens '", lens.name,
                      "': expected int64, got ", dtype_name(lens.dtype));
  }
  if (lens.shape != Shape{batch}) {
    return node.error(StatusCode::kInvalidModel, "sequence_lens '", lens.name,
                      "': expected shape [", batch, "], got ", lens.shape.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, data::movable_element_size(node, input.dtype));
  int64_t inner = 1;
  for (int a = 2; a < input.shape.rank(); ++a) inner *= input.shape[a];
  const int64_t max_len = input.shape[static_cast<int>(time_axis)];
  const int64_t time_stride = time_axis == 0 ? batch : 1;
  const int64_t batch_stride = batch_axis == 0 ? max_len : 1;
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<ReverseSequenceKernel>(
      describe_node(node.node()), max_len, batch, time_stride, batch_stride,
      inner * static_cast<int64_t>(element_size));
  return prepared;
}

}  // namespace

void register_reverse_sequence_kernel(KernelRegistry& registry) {
  registry.add("ReverseSequence", &make_reverse_sequence_kernel);
}

}  // namespace onepool::cpu
