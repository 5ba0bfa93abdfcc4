// Shape (with opset-15 start/end) and Size: int64 outputs known at prepare time from the static
// input shape, so the kernel only copies precomputed bytes.
#include <algorithm>

#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

// Shape's start/end: negative values count from the back, then clamp to [0, rank].
int64_t clamp_shape_bound(int64_t bound, int64_t rank) {
  if (bound < 0) bound += rank;
  return std::clamp<int64_t>(bound, 0, rank);
}

Status check_int64_output(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.output(0).dtype != DType::kInt64) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected int64, got ", dtype_name(node.output(0).dtype));
  }
  return Status::ok();
}

}  // namespace

Expected<PreparedKernel> make_shape_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_int64_output(node));
  const Shape& shape = node.input(0).shape;
  const int64_t rank = shape.rank();
  const auto& attributes = node.node().attributes;
  const int64_t start = clamp_shape_bound(attributes.get_int("start", 0), rank);
  const int64_t end = clamp_shape_bound(attributes.get_int("end", rank), rank);
  std::vector<int64_t> dims;
  for (int64_t axis = start; axis < end; ++axis) dims.push_back(shape[static_cast<int>(axis)]);
  ONEPOOL_RETURN_IF_ERROR(check_output_count(node, 0, static_cast<int64_t>(dims.size())));
  PreparedKernel prepared;
  prepared.kernel = make_constant_bytes_kernel(int64_bytes(dims));
  return prepared;
}

Expected<PreparedKernel> make_size_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_int64_output(node));
  ONEPOOL_RETURN_IF_ERROR(check_output_count(node, 0, 1));
  PreparedKernel prepared;
  prepared.kernel = make_constant_bytes_kernel(int64_bytes({node.input(0).shape.element_count()}));
  return prepared;
}

}  // namespace onepool::cpu::data
