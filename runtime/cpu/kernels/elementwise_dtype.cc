#include "runtime/cpu/kernels/elementwise_dtype.h"

namespace onepool::cpu {

std::string dtype_set_names(DTypeSet set) {
  std::string names;
  for (int code = 0; code < 32; ++code) {
    if ((set & (DTypeSet{1} << code)) == 0) continue;
    if (!names.empty()) names += ", ";
    names += dtype_name(static_cast<DType>(code));
  }
  return names;
}

Status unsupported_dtype(const NodeContext& node, const std::string& tensor, DType dtype,
                         DTypeSet allowed) {
  return node.error(StatusCode::kUnsupported, tensor, " has dtype ", dtype_name(dtype),
                    "; the CPU kernel supports ", dtype_set_names(allowed));
}

std::string describe_input(const NodeContext& node, size_t i) {
  if (!node.has_input(i)) return str_cat("input ", i);
  return str_cat("input ", i, " '", node.input(i).name, "'");
}

std::string describe_output(const NodeContext& node, size_t i) {
  if (!node.has_output(i)) return str_cat("output ", i);
  return str_cat("output ", i, " '", node.output(i).name, "'");
}

Status require_input(const NodeContext& node, size_t i) {
  if (node.has_input(i)) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "input ", i, " is missing (", node.input_count(),
                    " inputs given)");
}

Status require_output_dtype(const NodeContext& node, size_t i, DType dtype) {
  if (!node.has_output(i)) {
    return node.error(StatusCode::kInvalidModel, "output ", i, " is missing");
  }
  const DType actual = node.output(i).dtype;
  if (actual == dtype) return Status::ok();
  return node.error(StatusCode::kInvalidModel, describe_output(node, i), ": expected dtype ",
                    dtype_name(dtype), ", got ", dtype_name(actual));
}

Status require_input_dtype(const NodeContext& node, size_t i, DType dtype) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, i));
  const DType actual = node.input(i).dtype;
  if (actual == dtype) return Status::ok();
  return node.error(StatusCode::kInvalidModel, describe_input(node, i), ": expected dtype ",
                    dtype_name(dtype), ", got ", dtype_name(actual));
}

Status require_same_shape(const NodeContext& node, size_t i) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, i));
  const Shape& input = node.input(i).shape;
  const Shape& output = node.output(0).shape;
  if (input == output) return Status::ok();
  return node.error(StatusCode::kInvalidModel, describe_output(node, 0), " has shape ",
                    output.to_string(), ", expected ", describe_input(node, i), " shape ",
                    input.to_string());
}

}  // namespace onepool::cpu
