// Expand and Tile: broadcasting copies. Both read their parameters (shape, repeats) from the
// static output shape, so they work whether or not that input is constant.
//   Expand: table_k[i] = (in_dim == 1 ? 0 : i) * stride_k (input right-aligned to the output)
//   Tile:   table_k[i] = (i % in_dim) * stride_k
#include "runtime/cpu/kernels/shape_axis_map.h"
#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

Status check_io(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).dtype != node.output(0).dtype) {
    return node.error(StatusCode::kInvalidModel, "output dtype ", dtype_name(node.output(0).dtype),
                      " differs from input dtype ", dtype_name(node.input(0).dtype));
  }
  return Status::ok();
}

Expected<PreparedKernel> prepare(const NodeContext& node,
                                 std::vector<std::vector<int64_t>> tables) {
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, node.input(0).dtype));
  PreparedKernel prepared;
  prepared.kernel =
      std::make_unique<AxisMapKernel>(AxisMapCopy(std::move(tables), element_size, 0));
  return prepared;
}

}  // namespace

Expected<PreparedKernel> make_expand_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  if (out.rank() < in.rank()) {
    return node.error(StatusCode::kInvalidModel, "output shape ", out.to_string(),
                      " has lower rank than input ", in.to_string());
  }
  const std::vector<int64_t> strides = contiguous_strides(in);
  const int lead = out.rank() - in.rank();
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.rank()));
  for (int k = 0; k < out.rank(); ++k) {
    const int in_axis = k - lead;
    const int64_t in_dim = in_axis >= 0 ? in[in_axis] : 1;
    if (in_dim != 1 && in_dim != out[k]) {
      return node.error(StatusCode::kInvalidModel, "input ", in.to_string(),
                        " cannot broadcast to output ", out.to_string(), " (axis ", k, ": ", in_dim,
                        " vs ", out[k], ")");
    }
    const int64_t stride = in_dim == 1 ? 0 : strides[static_cast<size_t>(in_axis)];
    for (int64_t i = 0; i < out[k]; ++i) tables[static_cast<size_t>(k)].push_back(i * stride);
  }
  return prepare(node, std::move(tables));
}

Expected<PreparedKernel> make_tile_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  const HostTensor* repeats = node.constant_input(1);
  const std::vector<int64_t> strides = contiguous_strides(in);
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(in.rank()));
  for (int k = 0; k < in.rank(); ++k) {
    const bool matches = out.rank() == in.rank() &&
                         (in[k] == 0 ? out[k] == 0 : out[k] % in[k] == 0) &&
                         (repeats == nullptr || repeats->element_count() != in.rank() ||
                          repeats->int_at(k) * in[k] == out[k]);
    if (!matches) {
      return node.error(StatusCode::kInvalidModel, "output ", out.to_string(), " is not input ",
                        in.to_string(), " tiled by the repeats (axis ", k, ")");
    }
    for (int64_t i = 0; i < out[k]; ++i) {
      tables[static_cast<size_t>(k)].push_back((i % in[k]) * strides[static_cast<size_t>(k)]);
    }
  }
  return prepare(node, std::move(tables));
}

}  // namespace onepool::cpu::data
