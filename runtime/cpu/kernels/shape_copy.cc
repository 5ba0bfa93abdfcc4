// Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout (inference) only change the shape:
// the output holds the input's bytes. The planner usually makes the output a view of the input
// (the same bytes), and then there is nothing to copy; otherwise a memcpy.
#include <cstring>

#include "runtime/cpu/kernels/bounded_readers.h"
#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

class CopyKernel final : public Kernel {
 public:
  CopyKernel(size_t bytes, size_t mask_bytes) : bytes_(bytes), mask_bytes_(mask_bytes) {}

  Status run(const RunContext& context) override {
    parallel_copy(context.inputs[0].data, context.outputs[0].data, bytes_, *context.threads);
    // Dropout's mask in inference: every element kept (bool true).
    if (mask_bytes_ > 0 && context.outputs.size() > 1 && context.outputs[1].data != nullptr) {
      std::memset(context.outputs[1].data, 1, mask_bytes_);
    }
    return Status::ok();
  }

 private:
  size_t bytes_;
  size_t mask_bytes_;
};

Status check_dropout_inference(const NodeContext& node) {
  const HostTensor* training = node.constant_input(2);
  if (node.has_input(2) && training == nullptr) {
    return node.error(StatusCode::kUnsupported,
                      "input 2 (training_mode) must be a constant false for inference");
  }
  if (training != nullptr && training->element_count() > 0 && training->int_at(0) != 0) {
    return node.error(StatusCode::kUnsupported, "training_mode = true is not supported");
  }
  return Status::ok();
}

}  // namespace

Expected<PreparedKernel> make_copy_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.node().op_type != "Dropout" && reads_bounded_input(node)) {
    return make_bounded_copy_kernel(node);
  }
  const Value& input = node.input(0);
  const Value& output = node.output(0);
  if (input.dtype != output.dtype || input.bytes() != output.bytes()) {
    return node.error(StatusCode::kInvalidModel, "output '", output.name, "' ",
                      dtype_name(output.dtype), output.shape.to_string(),
                      " must hold the same bytes as input '", input.name, "' ",
                      dtype_name(input.dtype), input.shape.to_string());
  }
  size_t mask_bytes = 0;
  if (node.node().op_type == "Dropout") {
    ONEPOOL_RETURN_IF_ERROR(check_dropout_inference(node));
    if (node.has_output(1)) mask_bytes = node.output(1).bytes();
  }
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<CopyKernel>(input.bytes(), mask_bytes);
  prepared.in_place_inputs = kInPlaceInput0;
  prepared.output_is_view = true;  // parallel_copy skips a copy onto itself
  return prepared;
}

}  // namespace onepool::cpu::data
