// Constant folding: ops that move elements without arithmetic (any dtype, copied bytewise).
#include <algorithm>
#include <cstring>

#include "planner/import_fold_ops.h"

namespace onepool {

namespace {

FoldResult single(HostTensor tensor) { return std::vector<HostTensor>{std::move(tensor)}; }

// Same data, new shape.
FoldResult reshaped(const FoldContext& context, const HostTensor& in, const Shape& shape) {
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(in.dtype, shape, context.max_elements));
  if (out.data.size() != in.data.size()) {
    return fold_invalid(
        context, str_cat("cannot reshape ", in.shape.to_string(), " to ", shape.to_string()));
  }
  out.data = in.data;
  return single(std::move(out));
}

FoldResult fold_gather(const FoldContext& context) {
  const HostTensor* data = context.input(0);
  const HostTensor* indices = context.input(1);
  if (data == nullptr || indices == nullptr) return fold_invalid(context, "needs data and indices");
  const int axis = normalize_axis(attribute_int(*context.node, "axis", 0), data->shape.rank());
  if (axis < 0) return fold_invalid(context, "axis out of range");
  Shape shape;
  for (int i = 0; i < axis; ++i) shape.push_back(data->shape[i]);
  for (int64_t dim : indices->shape.dims()) {
    if (!shape.push_back(dim)) return fold_unsupported(context, "output rank above 8");
  }
  for (int i = axis + 1; i < data->shape.rank(); ++i) {
    if (!shape.push_back(data->shape[i])) return fold_unsupported(context, "output rank above 8");
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(data->dtype, shape, context.max_elements));
  int64_t outer = 1;
  int64_t inner = 1;
  for (int i = 0; i < axis; ++i) outer *= data->shape[i];
  for (int i = axis + 1; i < data->shape.rank(); ++i) inner *= data->shape[i];
  const int64_t extent = data->shape[axis];
  const int64_t count = indices->element_count();
  for (int64_t k = 0; k < count; ++k) {
    int64_t index = indices->int_at(k);
    if (index < -extent || index >= extent) {
      return fold_invalid(context,
                          str_cat("index ", index, " is outside [", -extent, ", ", extent, ")"));
    }
    if (index < 0) index += extent;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        copy_element(*data, (o * extent + index) * inner + j, out, (o * count + k) * inner + j);
      }
    }
  }
  return single(std::move(out));
}

// Axes from the attribute (opset < 13) or the second input (opset >= 13).
std::vector<int64_t> axes_of(const FoldContext& context, bool* found) {
  if (context.opset < 13) return attribute_ints(*context.node, "axes", found);
  *found = context.input(1) != nullptr;
  return *found ? int_values(*context.input(1)) : std::vector<int64_t>{};
}

FoldResult fold_unsqueeze(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  bool found = false;
  std::vector<int64_t> axes = axes_of(context, &found);
  const int rank = in.shape.rank() + static_cast<int>(axes.size());
  if (rank > Shape::kMaxRank) return fold_unsupported(context, "output rank above 8");
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    const int normal = normalize_axis(axis, rank);
    if (normal < 0 || inserted[static_cast<size_t>(normal)]) {
      return fold_invalid(context, str_cat("bad axis ", axis, " for output rank ", rank));
    }
    inserted[static_cast<size_t>(normal)] = true;
  }
  Shape shape;
  int next = 0;
  for (int axis = 0; axis < rank; ++axis) {
    shape.push_back(inserted[static_cast<size_t>(axis)] ? 1 : in.shape[next++]);
  }
  return reshaped(context, in, shape);
}

FoldResult fold_squeeze(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  bool found = false;
  std::vector<int64_t> axes = axes_of(context, &found);
  std::vector<bool> removed(static_cast<size_t>(in.shape.rank()), !found);
  for (int64_t axis : axes) {
    const int normal = normalize_axis(axis, in.shape.rank());
    if (normal < 0 || in.shape[normal] != 1) {
      return fold_invalid(
          context, str_cat("axis ", axis, " of ", in.shape.to_string(), " is not a dim of size 1"));
    }
    removed[static_cast<size_t>(normal)] = true;
  }
  Shape shape;
  for (int axis = 0; axis < in.shape.rank(); ++axis) {
    if (!removed[static_cast<size_t>(axis)] || in.shape[axis] != 1) shape.push_back(in.shape[axis]);
  }
  return reshaped(context, in, shape);
}

FoldResult fold_concat(const FoldContext& context) {
  const HostTensor& first = *context.input(0);
  const int axis = normalize_axis(attribute_int(*context.node, "axis", 0), first.shape.rank());
  if (axis < 0) return fold_invalid(context, "axis out of range");
  Shape shape = first.shape;
  shape[axis] = 0;
  for (const HostTensor* in : context.inputs) {
    bool same = in != nullptr && in->dtype == first.dtype && in->shape.rank() == first.shape.rank();
    for (int i = 0; same && i < first.shape.rank(); ++i) {
      same = i == axis || in->shape[i] == first.shape[i];
    }
    if (!same) return fold_invalid(context, "inputs differ in dtype, rank or a non-axis dim");
    shape[axis] += in->shape[axis];
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(first.dtype, shape, context.max_elements));
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  size_t written = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* in : context.inputs) {
      const size_t block = in->data.size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
      if (block == 0) continue;  // an empty input: its data() may be null, and memcpy forbids it
      std::memcpy(out.data.data() + written, in->data.data() + static_cast<size_t>(o) * block,
                  block);
      written += block;
    }
  }
  return single(std::move(out));
}

// Split along `axis` into the sizes given by the `split` attribute (opset < 13) or input 1,
// else into equal parts, one per output.
FoldResult fold_split(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  const int axis = normalize_axis(attribute_int(*context.node, "axis", 0), in.shape.rank());
  if (axis < 0) return fold_invalid(context, "axis out of range");
  const auto outputs = static_cast<int64_t>(context.node->output_size());
  std::vector<int64_t> sizes;
  const HostTensor* split_input = context.inputs.size() > 1 ? context.input(1) : nullptr;
  if (split_input != nullptr) {
    for (int64_t i = 0; i < split_input->element_count(); ++i) {
      sizes.push_back(split_input->int_at(i));
    }
  } else {
    for (const auto& attribute : context.node->attribute()) {
      if (attribute.name() == "split")
        sizes.assign(attribute.ints().begin(), attribute.ints().end());
    }
  }
  if (sizes.empty()) {
    if (outputs <= 0 || in.shape[axis] % outputs != 0) {
      return fold_unsupported(context, "uneven split");
    }
    sizes.assign(static_cast<size_t>(outputs), in.shape[axis] / outputs);
  }
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0) return fold_invalid(context, "negative split size");
    total += size;
  }
  if (static_cast<int64_t>(sizes.size()) != outputs || total != in.shape[axis]) {
    return fold_invalid(context, "split sizes do not match the axis or the outputs");
  }
  int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= in.shape[i];
  const size_t row = in.data.size() / static_cast<size_t>(std::max<int64_t>(outer, 1)) /
                     static_cast<size_t>(std::max<int64_t>(in.shape[axis], 1));
  std::vector<HostTensor> results;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    Shape shape = in.shape;
    shape[axis] = size;
    ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(in.dtype, shape, context.max_elements));
    const size_t block = row * static_cast<size_t>(size);
    for (int64_t o = 0; o < outer && block > 0; ++o) {
      const size_t source = (static_cast<size_t>(o) * static_cast<size_t>(in.shape[axis]) +
                             static_cast<size_t>(begin)) *
                            row;
      std::memcpy(out.data.data() + static_cast<size_t>(o) * block, in.data.data() + source, block);
    }
    begin += size;
    results.push_back(std::move(out));
  }
  return results;
}

FoldResult fold_reshape(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  if (context.input(1) == nullptr) return fold_invalid(context, "needs a shape input");
  const std::vector<int64_t> target = int_values(*context.input(1));
  const bool allow_zero = attribute_int(*context.node, "allowzero", 0) != 0;
  if (target.size() > static_cast<size_t>(Shape::kMaxRank)) {
    return fold_unsupported(context, "rank above 8");
  }
  Shape shape;
  int infer_axis = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t dim = target[i];
    if (dim == 0 && !allow_zero) {
      if (static_cast<int>(i) >= in.shape.rank()) return fold_invalid(context, "0 past input rank");
      dim = in.shape[static_cast<int>(i)];
    }
    if (dim == -1 && infer_axis < 0) {
      infer_axis = static_cast<int>(i);
      dim = 1;
    } else if (dim < 0) {
      return fold_invalid(context, str_cat("bad target dim ", target[i]));
    }
    shape.push_back(dim);
    known *= dim;
  }
  if (infer_axis >= 0) {
    if (known == 0 || in.element_count() % known != 0) {
      return fold_invalid(context, str_cat("cannot infer -1 reshaping ", in.shape.to_string()));
    }
    shape[infer_axis] = in.element_count() / known;
  }
  return reshaped(context, in, shape);
}

FoldResult fold_expand(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  if (context.input(1) == nullptr) return fold_invalid(context, "needs a shape input");
  auto target = Shape::from_dims(int_values(*context.input(1)));
  if (!target) return fold_unsupported(context, target.status().message());
  auto shape = broadcast_shapes(in.shape, *target);
  if (!shape) return fold_invalid(context, shape.status().message());
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(in.dtype, *shape, context.max_elements));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    copy_element(in, broadcast_source(*shape, in.shape, i), out, i);
  }
  return single(std::move(out));
}

// Integer tensors only: shape arithmetic (PyTorch's pad pattern transposes its pads). A float
// weight's Transpose is left to weight folding at load, which reports it.
FoldResult fold_transpose(const FoldContext& context) {
  const HostTensor& in = *context.input(0);
  if (in.dtype != DType::kInt64 && in.dtype != DType::kInt32) {
    return fold_unsupported(context, "only integer tensors are transposed at import");
  }
  const int rank = in.shape.rank();
  bool found = false;
  std::vector<int64_t> perm = attribute_ints(*context.node, "perm", &found);
  if (!found) {
    for (int axis = rank - 1; axis >= 0; --axis) perm.push_back(axis);
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  if (static_cast<int>(perm.size()) != rank)
    return fold_invalid(context, "perm has the wrong size");
  Shape shape;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= rank || seen[static_cast<size_t>(axis)]) {
      return fold_invalid(context, "perm is not a permutation of the axes");
    }
    seen[static_cast<size_t>(axis)] = true;
    shape.push_back(in.shape[static_cast<int>(axis)]);
  }
  ONEPOOL_ASSIGN_OR_RETURN(HostTensor out, new_tensor(in.dtype, shape, context.max_elements));
  std::vector<int64_t> in_strides(static_cast<size_t>(rank), 1);
  for (int axis = rank - 2; axis >= 0; --axis) {
    in_strides[static_cast<size_t>(axis)] =
        in_strides[static_cast<size_t>(axis) + 1] * in.shape[axis + 1];
  }
  for (int64_t flat = 0; flat < out.element_count(); ++flat) {
    int64_t rest = flat;
    int64_t source = 0;
    for (int axis = rank - 1; axis >= 0; --axis) {
      const int64_t index = rest % shape[axis];
      rest /= shape[axis];
      source += index * in_strides[static_cast<size_t>(perm[static_cast<size_t>(axis)])];
    }
    copy_element(in, source, out, flat);
  }
  return single(std::move(out));
}

}  // namespace

FoldResult fold_layout_op(const FoldContext& context) {
  const std::string& op = context.node->op_type();
  if (context.input(0) == nullptr) return fold_invalid(context, "missing input 0");
  if (op == "Gather") return fold_gather(context);
  if (op == "Unsqueeze") return fold_unsqueeze(context);
  if (op == "Squeeze") return fold_squeeze(context);
  if (op == "Concat") return fold_concat(context);
  if (op == "Split") return fold_split(context);
  if (op == "Reshape") return fold_reshape(context);
  if (op == "Expand") return fold_expand(context);
  if (op == "Identity") return single(*context.input(0));
  if (op == "Transpose") return fold_transpose(context);
  return fold_unsupported(context, "no host evaluator");
}

}  // namespace onepool
