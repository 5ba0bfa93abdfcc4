// Constant folding: Slice, ConstantOfShape, Range and ReduceProd, and the foldable-op list.
#include <algorithm>
#include <cmath>

#include "planner/import_fold_ops.h"
#include "planner/import_tensor.h"

namespace onepool {

namespace {

FoldResult single(HostTensor tensor) { return std::vector<HostTensor>{std::move(tensor)}; }

struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
};

// Clamps start/end per the ONNX Slice spec and returns the output extent of one axis.
int64_t clamp_slice(int64_t dim, int64_t step, int64_t* start, int64_t end) {
  if (*start < 0) *start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    *start = std::clamp<int64_t>(*start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return end > *start ? (end - *start + step - 1) / step : 0;
  }
  *start = std::clamp<int64_t>(*start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return *start > end ? (*start - end + (-step) - 1) / (-step) : 0;
}

Status slice_params(const FoldContext& context, std::vector<int64_t>* starts,
                    std::vector<int64_t>* ends, std::vector<int64_t>* axes,
                    std::vector<int64_t>* steps) {
  bool found = false;
  if (context.opset < 10) {
    *starts = attribute_ints(*context.node, "starts", &found);
    *ends = attribute_ints(*context.node, "ends", &found);
    *axes = attribute_ints(*context.node, "axes", &found);
  } else {
    if (context.input(1) == nullptr || context.input(2) == nullptr) {
      return fold_invalid(context, "needs starts and ends");
    }
    *starts = int_values(*context.input(1));
    *ends = int_values(*context.input(2));
    if (context.input(3) != nullptr) *axes = int_values(*context.input(3));
    if (context.input(4) != nullptr) *steps = int_values(*context.input(4));
  }
  if (axes->empty()) {
    for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (steps->empty()) steps->assign(starts->size(), 1);
  if (ends->size() != starts->size() || axes->size() != starts->size() ||
      steps->size() != starts->size()) {
    return fold_invalid(context, "starts, ends, axes and steps differ in length");
  }
  return Status::ok();
}

FoldResult fold_slice(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  ONEPOOL_RETURN_IF_ERROR(slice_params(context, &starts, &ends, &axes, &steps));
  std::vector<SliceAxis> plan(static_cast<size_t>(in.shape.rank()));
  Shape shape = in.shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int axis = normalize_axis(axes[i], in.shape.rank());
    if (axis < 0 || steps[i] == 0) return fold_invalid(context, "bad axis or zero step");
    auto& entry = plan[static_cast<size_t>(axis)];
    entry.start = starts[i];
    entry.step = steps[i];
    shape[axis] = clamp_slice(in.shape[axis], entry.step, &entry.start, ends[i]);
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(in.dtype, shape, context.max_elements));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    int64_t flat = i, source = 0, stride = 1;
    for (int axis = shape.rank() - 1; axis >= 0; --axis) {
      const int64_t coordinate = flat % shape[axis];
      flat /= shape[axis];
      const auto& entry = plan[static_cast<size_t>(axis)];
      source += (entry.start + coordinate * entry.step) * stride;
      stride *= in.shape[axis];
    }
    copy_element(in, source, out, i);
  }
  return single(std::move(out));
}

FoldResult fold_constant_of_shape(const FoldContext& context) {
  auto shape = Shape::from_dims(int_values(*context.input(0)));
  if (!shape) return fold_unsupported(context, shape.status().message());
  HostTensor fill;
  fill.dtype = DType::kFloat32;
  fill.shape = Shape{1};
  fill.data.resize(sizeof(float));
  const auto* value = find_attribute(*context.node, "value");
  if (value != nullptr) {
    auto tensor = host_tensor_from_proto(value->t());
    if (!tensor || tensor->element_count() != 1) return fold_unsupported(context, "bad value");
    fill = std::move(tensor).value();
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(fill.dtype, *shape, context.max_elements));
  for (int64_t i = 0; i < out.element_count(); ++i) copy_element(fill, 0, out, i);
  return single(std::move(out));
}

FoldResult fold_range(const FoldContext& context) {
  const HostTensor* start = context.input(0);
  const HostTensor* limit = context.input(1);
  const HostTensor* delta = context.input(2);
  if (start == nullptr || limit == nullptr || delta == nullptr || !is_arith_dtype(start->dtype)) {
    return fold_unsupported(context, "needs numeric start, limit and delta");
  }
  const double step = delta->float_at(0);
  if (step == 0) return fold_invalid(context, "delta is 0");
  const double span = std::ceil((limit->float_at(0) - start->float_at(0)) / step);
  if (!(span < static_cast<double>(context.max_elements) + 1)) {
    return make_status(StatusCode::kResourceExhausted, "Range output above the folding limit");
  }
  const auto count = static_cast<int64_t>(std::max(span, 0.0));
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out,
                           new_tensor(start->dtype, Shape{count}, context.max_elements));
  for (int64_t i = 0; i < count; ++i) {
    if (is_float_dtype(start->dtype)) {
      store_float(out, i, start->float_at(0) + static_cast<double>(i) * step);
    } else {
      store_int(out, i, start->int_at(0) + i * delta->int_at(0));
    }
  }
  return single(std::move(out));
}

FoldResult fold_reduce_prod(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  if (!is_arith_dtype(in.dtype)) return fold_unsupported(context, "dtype");
  bool found = false;
  std::vector<int64_t> axes = attribute_ints(*context.node, "axes", &found);
  if (context.opset >= 18 && context.input(1) != nullptr) axes = int_values(*context.input(1));
  const bool keep = attribute_int(*context.node, "keepdims", 1) != 0;
  if (axes.empty() && attribute_int(*context.node, "noop_with_empty_axes", 0) != 0) {
    return single(in);
  }
  std::vector<bool> reduced(static_cast<size_t>(in.shape.rank()), axes.empty());
  for (int64_t axis : axes) {
    const int normal = normalize_axis(axis, in.shape.rank());
    if (normal < 0) return fold_invalid(context, str_cat("axis ", axis, " out of range"));
    reduced[static_cast<size_t>(normal)] = true;
  }
  Shape kept_shape, out_shape;  // kept_shape: rank preserved, reduced axes = 1
  for (int axis = 0; axis < in.shape.rank(); ++axis) {
    const bool r = reduced[static_cast<size_t>(axis)];
    kept_shape.push_back(r ? 1 : in.shape[axis]);
    if (!r || keep) out_shape.push_back(r ? 1 : in.shape[axis]);
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(in.dtype, out_shape, context.max_elements));
  std::vector<double> products(static_cast<size_t>(out.element_count()), 1.0);
  for (int64_t i = 0; i < in.element_count(); ++i) {
    int64_t flat = i, target = 0, stride = 1;
    for (int axis = in.shape.rank() - 1; axis >= 0; --axis) {
      const int64_t coordinate = flat % in.shape[axis];
      flat /= in.shape[axis];
      if (kept_shape[axis] != 1) target += coordinate * stride;
      stride *= kept_shape[axis];
    }
    products[static_cast<size_t>(target)] *= in.float_at(i);
  }
  for (size_t i = 0; i < products.size(); ++i) {
    store_float(out, static_cast<int64_t>(i), products[i]);
  }
  return single(std::move(out));
}

}  // namespace

FoldResult fold_generator_op(const FoldContext& context) {
  const std::string& op = context.node->op_type();
  if (context.input(0) == nullptr) return fold_invalid(context, "missing input 0");
  if (op == "Slice") return fold_slice(context);
  if (op == "ConstantOfShape") return fold_constant_of_shape(context);
  if (op == "Range") return fold_range(context);
  if (op == "ReduceProd") return fold_reduce_prod(context);
  return fold_unsupported(context, "no host evaluator");
}

bool is_foldable_op(const std::string& op_type) {
  static constexpr const char* kOps[] = {"Shape",      "Size",    "Gather",
                                         "Unsqueeze",  "Squeeze", "Concat",
                                         "Slice",      "Cast",    "ConstantOfShape",
                                         "Range",      "Reshape", "Identity",
                                         "Add",        "Sub",     "Mul",
                                         "Div",        "Equal",   "Where",
                                         "Max",        "Min",     "Neg",
                                         "Floor",      "Ceil",    "Sqrt",
                                         "ReduceProd", "Expand",  "Not",
                                         "Less",       "Greater", "Split",
                                         "Transpose",  "Relu"};
  for (const char* op : kOps) {
    if (op_type == op) return true;
  }
  return false;
}

}  // namespace onepool
