#include "runtime/cpu/kernels/matmul_common.h"

#include <algorithm>
#include <string>

namespace onepool::cpu {

Status check_arity(const NodeContext& node, size_t required) {
  for (size_t i = 0; i < required; ++i) {
    if (!node.has_input(i)) {
      return node.error(StatusCode::kInvalidModel, "expected ", required, " inputs, input ", i,
                        " is missing");
    }
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  return Status::ok();
}

Expected<DType> common_dtype(const NodeContext& node, std::initializer_list<DType> allowed) {
  const Value& first = node.input(0);
  for (size_t i = 1; i < node.input_count(); ++i) {
    if (!node.has_input(i) || node.input(i).dtype == first.dtype) continue;
    return node.error(StatusCode::kInvalidModel, "input '", node.input(i).name, "': expected ",
                      dtype_name(first.dtype), " like input '", first.name, "', got ",
                      dtype_name(node.input(i).dtype));
  }
  if (node.output(0).dtype != first.dtype) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "': expected ",
                      dtype_name(first.dtype), " like input '", first.name, "', got ",
                      dtype_name(node.output(0).dtype));
  }
  if (std::find(allowed.begin(), allowed.end(), first.dtype) == allowed.end()) {
    return node.error(StatusCode::kUnsupported, "input '", first.name, "': dtype ",
                      dtype_name(first.dtype), " is not supported by the CPU kernel");
  }
  return first.dtype;
}

Expected<Activation> read_fused_activation(const NodeContext& node, DType dtype) {
  const std::string name = node.node().attributes.get_string("onepool_activation", "");
  if (name.empty()) return Activation{};
  const Activation activation = parse_activation(node.node().attributes);
  if (activation.kind == ActivationKind::kNone) {
    return node.error(StatusCode::kUnsupported, "fused activation '", name, "' is unknown");
  }
  if (dtype != DType::kFloat32) {
    return node.error(StatusCode::kUnsupported, "fused activation '", name, "' needs float32, got ",
                      dtype_name(dtype));
  }
  return activation;
}

}  // namespace onepool::cpu
