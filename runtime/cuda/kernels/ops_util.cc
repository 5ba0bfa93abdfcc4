#include "runtime/cuda/kernels/ops_util.h"

#include <string>

namespace onepool::cuda {

bool elem_type_of(DType dtype, ElemType& type) {
  switch (dtype) {
    case DType::kFloat32:
      type = ElemType::kFloat32;
      return true;
    case DType::kInt64:
      type = ElemType::kInt64;
      return true;
    case DType::kBool:
      type = ElemType::kBool;
      return true;
    case DType::kInt32:
      type = ElemType::kInt32;
      return true;
    case DType::kFloat16:
      type = ElemType::kFloat16;
      return true;
    case DType::kBFloat16:
      type = ElemType::kBFloat16;
      return true;
    default:
      return false;
  }
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int d = shape.rank() - 2; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d) + 1] * shape[d + 1];
  }
  return strides;
}

int64_t dims_product(const Shape& shape, int begin, int end) {
  int64_t product = 1;
  for (int d = begin; d < end; ++d) product *= shape[d];
  return product;
}

Expected<BroadcastShape> make_broadcast(const Shape& out, std::span<const Shape> operands) {
  if (operands.size() > 3) return make_status(StatusCode::kInternal, "broadcast of > 3 operands");
  // Step 1. Per output dim, each operand's stride (0 where it broadcasts).
  const int rank = out.rank();
  std::vector<std::vector<int64_t>> strides(operands.size(), std::vector<int64_t>(rank, 0));
  for (size_t k = 0; k < operands.size(); ++k) {
    const Shape& shape = operands[k];
    if (shape.rank() > rank) {
      return make_status(StatusCode::kInvalidModel, "operand ", shape.to_string(),
                         " has a higher rank than the output ", out.to_string());
    }
    const std::vector<int64_t> own = contiguous_strides(shape);
    const int offset = rank - shape.rank();
    for (int d = 0; d < shape.rank(); ++d) {
      if (shape[d] == out[offset + d]) {
        strides[k][static_cast<size_t>(offset + d)] = own[static_cast<size_t>(d)];
      } else if (shape[d] != 1) {
        return make_status(StatusCode::kInvalidModel, "operand ", shape.to_string(),
                           " does not broadcast to ", out.to_string());
      }
    }
  }
  // Step 2. Merge dim d into the previous kept dim when every operand is contiguous across them.
  BroadcastShape result;
  ONEPOOL_ASSIGN_OR_RETURN(result.count, out.element_count_checked());
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    bool merge = result.rank > 0;
    for (size_t k = 0; k < operands.size() && merge; ++k) {
      merge = result.strides[k][result.rank - 1] == strides[k][static_cast<size_t>(d)] * out[d];
    }
    if (merge) {
      result.dims[result.rank - 1] *= out[d];
      for (size_t k = 0; k < operands.size(); ++k) {
        result.strides[k][result.rank - 1] = strides[k][static_cast<size_t>(d)];
      }
      continue;
    }
    if (result.rank == kMaxDims) {
      return make_status(StatusCode::kUnsupported, "broadcast of ", out.to_string(),
                         " needs more than ", kMaxDims, " dims");
    }
    result.dims[result.rank] = out[d];
    for (size_t k = 0; k < operands.size(); ++k) {
      result.strides[k][result.rank] = strides[k][static_cast<size_t>(d)];
    }
    ++result.rank;
  }
  return result;
}

Expected<CopyShape> make_copy_shape(std::span<const int64_t> dims,
                                    std::span<const int64_t> src_strides,
                                    std::span<const int64_t> dst_strides) {
  CopyShape result;
  result.count = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    result.count *= dims[d];
    if (dims[d] == 1) continue;
    const int last = result.rank - 1;
    if (last >= 0 && result.src_strides[last] == src_strides[d] * dims[d] &&
        result.dst_strides[last] == dst_strides[d] * dims[d]) {
      result.dims[last] *= dims[d];
      result.src_strides[last] = src_strides[d];
      result.dst_strides[last] = dst_strides[d];
      continue;
    }
    if (result.rank == kMaxDims) {
      return make_status(StatusCode::kUnsupported, "a copy of rank ", dims.size(),
                         " does not collapse to ", kMaxDims, " dims");
    }
    result.dims[result.rank] = dims[d];
    result.src_strides[result.rank] = src_strides[d];
    result.dst_strides[result.rank] = dst_strides[d];
    ++result.rank;
  }
  return result;
}

Expected<int> normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return make_status(StatusCode::kInvalidModel, "axis ", axis, " is outside [", -rank, ", ", rank,
                       ")");
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Expected<UnaryParams> parse_activation(const AttributeMap& attributes, const std::string& prefix) {
  UnaryParams params;
  const std::string name = attributes.get_string(prefix + "activation", "");
  params.alpha = attributes.get_float(prefix + "alpha", 0.0f);
  params.beta = attributes.get_float(prefix + "beta", 0.0f);
  if (name.empty()) return params;
  if (name == "Relu")
    params.op = UnaryOp::kRelu;
  else if (name == "Clip")
    params.op = UnaryOp::kClip;
  else if (name == "LeakyRelu")
    params.op = UnaryOp::kLeakyRelu;
  else if (name == "Sigmoid")
    params.op = UnaryOp::kSigmoid;
  else if (name == "HardSigmoid")
    params.op = UnaryOp::kHardSigmoid;
  else if (name == "HardSwish")
    params.op = UnaryOp::kHardSwish;
  else if (name == "HardSigmoidMul")
    params.op = UnaryOp::kHardSigmoidMul;
  else
    return make_status(StatusCode::kUnsupported, "fused activation '", name, "'");
  return params;
}

}  // namespace onepool::cuda
