// Constant folding: element-wise arithmetic, comparisons, Where and Cast.
#include <algorithm>
#include <cmath>
#include <limits>

#include "planner/import_fold_ops.h"

namespace onepool {

namespace {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kEqual, kLess, kGreater };

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kLess || op == BinaryOp::kGreater;
}

// Integer arithmetic wraps like the 64-bit hardware (via uint64) instead of overflowing.
Expected<int64_t> apply_int(BinaryOp op, int64_t a, int64_t b) {
  const auto ua = static_cast<uint64_t>(a);
  const auto ub = static_cast<uint64_t>(b);
  switch (op) {
    case BinaryOp::kAdd:
      return static_cast<int64_t>(ua + ub);
    case BinaryOp::kSub:
      return static_cast<int64_t>(ua - ub);
    case BinaryOp::kMul:
      return static_cast<int64_t>(ua * ub);
    case BinaryOp::kDiv:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) {
        return make_status(StatusCode::kUnsupported, "integer division by zero");
      }
      return a / b;
    case BinaryOp::kMax:
      return std::max(a, b);
    case BinaryOp::kMin:
      return std::min(a, b);
    case BinaryOp::kEqual:
      return static_cast<int64_t>(a == b);
    case BinaryOp::kLess:
      return static_cast<int64_t>(a < b);
    case BinaryOp::kGreater:
      return static_cast<int64_t>(a > b);
  }
  return 0;
}

double apply_float(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    case BinaryOp::kMax:
      return std::max(a, b);
    case BinaryOp::kMin:
      return std::min(a, b);
    case BinaryOp::kEqual:
      return a == b ? 1.0 : 0.0;
    case BinaryOp::kLess:
      return a < b ? 1.0 : 0.0;
    case BinaryOp::kGreater:
      return a > b ? 1.0 : 0.0;
  }
  return 0.0;
}

Expected<HostTensor> binary(const FoldContext& context, BinaryOp op, const HostTensor& a,
                            const HostTensor& b) {
  if (!is_arith_dtype(a.dtype) || a.dtype != b.dtype) {
    return fold_unsupported(context,
                            str_cat("dtypes ", dtype_name(a.dtype), " and ", dtype_name(b.dtype)));
  }
  auto shape = broadcast_shapes(a.shape, b.shape);
  if (!shape) return fold_invalid(context, shape.status().message());
  const DType out_dtype = is_comparison(op) ? DType::kBool : a.dtype;
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(out_dtype, *shape, context.max_elements));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const int64_t ia = broadcast_source(*shape, a.shape, i);
    const int64_t ib = broadcast_source(*shape, b.shape, i);
    if (is_float_dtype(a.dtype)) {
      store_float(out, i, apply_float(op, a.float_at(ia), b.float_at(ib)));
      continue;
    }
    auto value = apply_int(op, a.int_at(ia), b.int_at(ib));
    if (!value) return fold_unsupported(context, value.status().message());
    store_int(out, i, *value);
  }
  return out;
}

FoldResult fold_binary(const FoldContext& context, BinaryOp op) {
  const size_t count = context.inputs.size();
  if (count < 2 && !(count == 1 && (op == BinaryOp::kMax || op == BinaryOp::kMin))) {
    return fold_invalid(context, "needs two inputs");
  }
  HostTensor result = *context.input(0);
  for (size_t i = 1; i < count; ++i) {
    if (context.input(i) == nullptr) return fold_invalid(context, "missing input");
    ONEPOOL_ASSIGN_OR_RETURN(result, binary(context, op, result, *context.input(i)));
  }
  return std::vector<HostTensor>{std::move(result)};
}

FoldResult fold_where(const FoldContext& context) {
  const HostTensor* cond = context.input(0);
  const HostTensor* x = context.input(1);
  const HostTensor* y = context.input(2);
  if (cond == nullptr || x == nullptr || y == nullptr || x->dtype != y->dtype) {
    return fold_invalid(context, "needs condition, X and Y of one dtype");
  }
  auto xy = broadcast_shapes(x->shape, y->shape);
  if (!xy) return fold_invalid(context, xy.status().message());
  auto shape = broadcast_shapes(cond->shape, *xy);
  if (!shape) return fold_invalid(context, shape.status().message());
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(x->dtype, *shape, context.max_elements));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const bool pick_x = cond->int_at(broadcast_source(*shape, cond->shape, i)) != 0;
    const HostTensor& source = pick_x ? *x : *y;
    copy_element(source, broadcast_source(*shape, source.shape, i), out, i);
  }
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_unary(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  const std::string& op = context.node->op_type();
  const bool float_only = op == "Floor" || op == "Ceil" || op == "Sqrt";
  if (!is_arith_dtype(in.dtype) || (float_only && !is_float_dtype(in.dtype)) ||
      (op == "Not" && in.dtype != DType::kBool)) {
    return fold_unsupported(context, str_cat("dtype ", dtype_name(in.dtype)));
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(in.dtype, in.shape, context.max_elements));
  for (int64_t i = 0; i < in.element_count(); ++i) {
    if (op == "Not") store_int(out, i, in.int_at(i) == 0 ? 1 : 0);
    if (op == "Neg" && !is_float_dtype(in.dtype)) {
      store_int(out, i, static_cast<int64_t>(0 - static_cast<uint64_t>(in.int_at(i))));
    }
    if (op == "Neg" && is_float_dtype(in.dtype)) store_float(out, i, -in.float_at(i));
    if (op == "Floor") store_float(out, i, std::floor(in.float_at(i)));
    if (op == "Ceil") store_float(out, i, std::ceil(in.float_at(i)));
    if (op == "Sqrt") store_float(out, i, std::sqrt(in.float_at(i)));
    if (op == "Relu" && is_float_dtype(in.dtype)) {  // NaN stays NaN (max(x, 0) per ONNX)
      const double value = in.float_at(i);
      store_float(out, i, value < 0 ? 0.0 : value);
    }
    if (op == "Relu" && !is_float_dtype(in.dtype))
      store_int(out, i, std::max<int64_t>(in.int_at(i), 0));
  }
  return std::vector<HostTensor>{std::move(out)};
}

FoldResult fold_cast(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  const auto to = static_cast<DType>(attribute_int(*context.node, "to", 0));
  if (!is_arith_dtype(in.dtype) || !is_arith_dtype(to)) {
    return fold_unsupported(context,
                            str_cat("cast from ", dtype_name(in.dtype), " to ", dtype_name(to)));
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(to, in.shape, context.max_elements));
  for (int64_t i = 0; i < in.element_count(); ++i) {
    if (!is_float_dtype(in.dtype)) {
      store_int(out, i, in.int_at(i));
      continue;
    }
    const double value = in.float_at(i);
    if (is_float_dtype(to) || to == DType::kBool) {
      store_float(out, i, value);
      continue;
    }
    // A float outside int64 (or NaN) has no defined integer value: leave it to the runtime.
    if (!(value > -9.2e18 && value < 9.2e18))
      return fold_unsupported(context, "float out of range");
    store_int(out, i, static_cast<int64_t>(value));
  }
  return std::vector<HostTensor>{std::move(out)};
}

struct NamedBinary {
  const char* op;
  BinaryOp code;
};
constexpr NamedBinary kBinaryOps[] = {
    {"Add", BinaryOp::kAdd},     {"Sub", BinaryOp::kSub},   {"Mul", BinaryOp::kMul},
    {"Div", BinaryOp::kDiv},     {"Max", BinaryOp::kMax},   {"Min", BinaryOp::kMin},
    {"Equal", BinaryOp::kEqual}, {"Less", BinaryOp::kLess}, {"Greater", BinaryOp::kGreater},
};

}  // namespace

FoldResult fold_math_op(const FoldContext& context) {
  const std::string& op = context.node->op_type();
  if (context.input(0) == nullptr) return fold_invalid(context, "missing input 0");
  for (const auto& entry : kBinaryOps) {
    if (op == entry.op) return fold_binary(context, entry.code);
  }
  if (op == "Where") return fold_where(context);
  if (op == "Cast") return fold_cast(context);
  if (op == "Neg" || op == "Floor" || op == "Ceil" || op == "Sqrt" || op == "Not" || op == "Relu") {
    return fold_unary(context);
  }
  return fold_unsupported(context, "no host evaluator");
}

}  // namespace onepool
