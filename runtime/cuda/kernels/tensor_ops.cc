// Node preparation for data movement: Reshape-family copies, Transpose, Concat, Split, Slice,
// Expand, Tile (all one strided-copy kernel), Gather, Pad, Resize, BatchNormalization.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/cuda_ops.h"
#include "runtime/cuda/kernels/ops_util.h"

namespace onepool::cuda {

namespace {

Status check_io(const CudaNodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  const size_t bytes = dtype_size(node.input(0).dtype);
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) {
    return node.unsupported("element size not 1, 2, 4 or 8 bytes");
  }
  return Status::ok();
}

// One strided copy from input `in` to output `out`; byte offsets added to both base pointers.
struct CopyStep {
  CopyShape shape;
  size_t input = 0;
  size_t output = 0;
  int64_t src_offset = 0;  // elements
  int64_t dst_offset = 0;  // elements
};

// `skip_in_place`: a step whose source already is its destination (a Concat input the planner
// placed at its slice) is skipped.
CudaPreparedKernel copy_steps_kernel(std::vector<CopyStep> steps, size_t elem_bytes,
                                     bool skip_in_place = false) {
  return make_kernel(
      [steps = std::move(steps), elem_bytes, skip_in_place](const CudaRunContext& c) -> Status {
        for (const CopyStep& step : steps) {
          const auto* src = static_cast<const std::byte*>(c.inputs[step.input].data) +
                            step.src_offset * static_cast<int64_t>(elem_bytes);
          auto* dst = static_cast<std::byte*>(c.outputs[step.output].data) +
                      step.dst_offset * static_cast<int64_t>(elem_bytes);
          if (skip_in_place && src == dst) continue;
          ONEPOOL_LAUNCH_RETURN_IF_ERROR(
              launch_strided_copy(step.shape, elem_bytes, src, dst, c.stream));
        }
        return Status::ok();
      });
}

Expected<CudaPreparedKernel> single_copy(const CudaNodeContext& node, std::span<const int64_t> dims,
                                         std::span<const int64_t> src_strides,
                                         std::span<const int64_t> dst_strides,
                                         int64_t src_offset = 0) {
  Expected<CopyShape> shape = make_copy_shape(dims, src_strides, dst_strides);
  if (!shape) return node.error(shape.status().code(), shape.status().message());
  return copy_steps_kernel({CopyStep{*shape, 0, 0, src_offset, 0}},
                           dtype_size(node.input(0).dtype));
}

// An int64 list from constant input `i`, or the attribute `name` when the input is absent.
Expected<std::vector<int64_t>> ints_from(const CudaNodeContext& node, size_t i, const char* name,
                                         bool* present = nullptr) {
  if (present != nullptr) *present = true;
  if (node.has_input(i)) {
    const HostTensor* tensor = node.constant_input(i);
    if (tensor == nullptr) return node.unsupported(str_cat("input ", i, " must be a constant"));
    std::vector<int64_t> values;
    for (int64_t k = 0; k < tensor->element_count(); ++k) values.push_back(tensor->int_at(k));
    return values;
  }
  if (present != nullptr) *present = node.node().attributes.has(name);
  return node.node().attributes.get_ints(name);
}

}  // namespace

namespace {

// Dropout runs in inference mode only: training_mode absent or a constant false (as the CPU).
Status check_dropout_inference(const CudaNodeContext& node) {
  const HostTensor* training = node.constant_input(2);
  if (node.has_input(2) && training == nullptr) {
    return node.unsupported("input 2 (training_mode) must be a constant false for inference");
  }
  if (training != nullptr && training->element_count() > 0 && training->int_at(0) != 0) {
    return node.unsupported("training_mode = true");
  }
  return Status::ok();
}

}  // namespace

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: the bytes do not change. The planner
// usually aliases output and input, and then there is nothing to do. Dropout's optional mask
// output is all true in inference (every element kept).
Expected<CudaPreparedKernel> make_copy_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const size_t bytes = node.output(0).bytes();
  if (bytes != node.input(0).bytes()) {
    return node.error(StatusCode::kInvalidModel, "input and output sizes differ");
  }
  int64_t mask_count = 0;
  if (node.node().op_type == "Dropout") {
    ONEPOOL_RETURN_IF_ERROR(check_dropout_inference(node));
    if (node.has_output(1)) {
      if (node.output(1).dtype != DType::kBool)
        return node.unsupported("mask of dtype other than bool");
      mask_count = node.output(1).shape.element_count();
    }
  }
  CudaPreparedKernel prepared = make_kernel([bytes, mask_count](const CudaRunContext& c) -> Status {
    if (mask_count > 0) {
      ONEPOOL_LAUNCH_RETURN_IF_ERROR(launch_fill(c.outputs[1].data, 1, 1, mask_count, c.stream));
    }
    if (c.outputs[0].data == c.inputs[0].data || bytes == 0) return Status::ok();
    return ONEPOOL_CUDA_STATUS(cudaMemcpyAsync(c.outputs[0].data, c.inputs[0].data, bytes,
                                               cudaMemcpyDeviceToDevice, c.stream));
  });
  prepared.output_is_view = true;
  return prepared;
}

Expected<CudaPreparedKernel> make_transpose_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  const int rank = in.rank();
  std::vector<int64_t> perm = node.node().attributes.get_ints("perm");
  if (perm.empty()) {
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  if (static_cast<int>(perm.size()) != rank) {
    return node.error(StatusCode::kInvalidModel, "perm has ", perm.size(), " entries for rank ",
                      rank);
  }
  const std::vector<int64_t> in_strides = contiguous_strides(in);
  const std::vector<int64_t> out_strides = contiguous_strides(node.output(0).shape);
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  std::vector<int64_t> src_strides(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) {
    ONEPOOL_ASSIGN_OR_RETURN(const int axis, normalize_axis(perm[static_cast<size_t>(d)], rank));
    dims[static_cast<size_t>(d)] = in[axis];
    src_strides[static_cast<size_t>(d)] = in_strides[static_cast<size_t>(axis)];
  }
  return single_copy(node, dims, src_strides, out_strides);
}

// Concat: input i is copied into the output at its running offset along `axis`, unless the
// planner placed it there already (its producer wrote straight into the output).
Expected<CudaPreparedKernel> make_concat_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& out = node.output(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const int axis,
                           normalize_axis(node.node().attributes.get_int("axis", 0), out.rank()));
  const std::vector<int64_t> out_strides = contiguous_strides(out);
  std::vector<CopyStep> steps;
  int64_t position = 0;
  for (size_t i = 0; i < node.input_count(); ++i) {
    if (!node.has_input(i)) continue;
    const Shape& in = node.input(i).shape;
    Expected<CopyShape> shape = make_copy_shape(in.dims(), contiguous_strides(in), out_strides);
    if (!shape) return node.error(shape.status().code(), shape.status().message());
    steps.push_back(CopyStep{*shape, i, 0, 0, position * out_strides[static_cast<size_t>(axis)]});
    position += in[axis];
  }
  if (position != out[axis]) {
    return node.error(StatusCode::kInvalidModel, "inputs sum to ", position, " along axis ", axis,
                      " but the output has ", out[axis]);
  }
  CudaPreparedKernel prepared =
      copy_steps_kernel(std::move(steps), dtype_size(node.input(0).dtype), true);
  prepared.concat_in_place = true;
  return prepared;
}

// Split: output j is the slab of the input starting at its running offset along `axis`.
Expected<CudaPreparedKernel> make_split_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const int axis,
                           normalize_axis(node.node().attributes.get_int("axis", 0), in.rank()));
  const std::vector<int64_t> in_strides = contiguous_strides(in);
  std::vector<CopyStep> steps;
  int64_t position = 0;
  for (size_t j = 0; j < node.output_count(); ++j) {
    if (!node.has_output(j)) continue;
    const Shape& out = node.output(j).shape;
    Expected<CopyShape> shape = make_copy_shape(out.dims(), in_strides, contiguous_strides(out));
    if (!shape) return node.error(shape.status().code(), shape.status().message());
    steps.push_back(CopyStep{*shape, 0, j, position * in_strides[static_cast<size_t>(axis)], 0});
    position += out[axis];
  }
  if (position > in[axis]) {
    return node.error(StatusCode::kInvalidModel, "outputs need ", position, " along axis ", axis,
                      " but the input has ", in[axis]);
  }
  return copy_steps_kernel(std::move(steps), dtype_size(node.input(0).dtype));
}

// Slice: starts / ends / axes / steps from constant inputs (opset 10+) or attributes; the output
// dims come from the graph, so only each axis' first index and step are needed here.
Expected<CudaPreparedKernel> make_slice_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  const int rank = in.rank();
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ints_from(node, 1, "starts"));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ints_from(node, 3, "axes"));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> steps, ints_from(node, 4, "steps"));
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return node.error(StatusCode::kInvalidModel, "starts, axes and steps differ in length");
  }
  const std::vector<int64_t> in_strides = contiguous_strides(in);
  std::vector<int64_t> src_strides = in_strides;
  int64_t src_offset = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    ONEPOOL_ASSIGN_OR_RETURN(const int axis, normalize_axis(axes[k], rank));
    const int64_t dim = in[axis];
    const int64_t step = steps[k];
    if (step == 0) return node.error(StatusCode::kInvalidModel, "step 0 on axis ", axis);
    int64_t start = starts[k] < 0 ? starts[k] + dim : starts[k];
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
    src_offset += start * in_strides[static_cast<size_t>(axis)];
    src_strides[static_cast<size_t>(axis)] = in_strides[static_cast<size_t>(axis)] * step;
  }
  const Shape& out = node.output(0).shape;
  if (out.element_count() == 0) {
    return make_kernel([](const CudaRunContext&) { return Status::ok(); });
  }
  return single_copy(node, out.dims(), src_strides, contiguous_strides(out), src_offset);
}

// Expand: a copy whose source stride is 0 along broadcast dims.
Expected<CudaPreparedKernel> make_expand_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& out = node.output(0).shape;
  const Shape operands[] = {node.input(0).shape};
  Expected<BroadcastShape> shape = make_broadcast(out, operands);
  if (!shape) return node.error(shape.status().code(), shape.status().message());
  std::vector<int64_t> dims(shape->dims, shape->dims + shape->rank);
  std::vector<int64_t> src(shape->strides[0], shape->strides[0] + shape->rank);
  std::vector<int64_t> dst(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) dst[d - 1] = dst[d] * dims[d];
  return single_copy(node, dims, src, dst);
}

// Tile: index space (repeat, dim) per axis; the source ignores the repeat index.
Expected<CudaPreparedKernel> make_tile_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  if (in.rank() != out.rank()) return node.error(StatusCode::kInvalidModel, "rank changes");
  const std::vector<int64_t> in_strides = contiguous_strides(in);
  const std::vector<int64_t> out_strides = contiguous_strides(out);
  std::vector<int64_t> dims;
  std::vector<int64_t> src;
  std::vector<int64_t> dst;
  for (int d = 0; d < in.rank(); ++d) {
    if (in[d] == 0 || out[d] % in[d] != 0) {
      return node.error(StatusCode::kInvalidModel, "output dim ", out[d], " is not a multiple of ",
                        in[d]);
    }
    const size_t k = static_cast<size_t>(d);
    dims.insert(dims.end(), {out[d] / in[d], in[d]});
    src.insert(src.end(), {0, in_strides[k]});
    dst.insert(dst.end(), {in[d] * out_strides[k], out_strides[k]});
  }
  return single_copy(node, dims, src, dst);
}

Expected<CudaPreparedKernel> make_gather_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  if (!node.has_input(1)) return node.error(StatusCode::kInvalidModel, "missing indices");
  const Shape& data = node.input(0).shape;
  const DType index_type = node.input(1).dtype;
  if (index_type != DType::kInt64 && index_type != DType::kInt32) {
    return node.unsupported("indices must be int64 or int32");
  }
  ONEPOOL_ASSIGN_OR_RETURN(const int axis,
                           normalize_axis(node.node().attributes.get_int("axis", 0), data.rank()));
  GatherParams params;
  params.outer = dims_product(data, 0, axis);
  params.axis_dim = data[axis];
  params.inner = dims_product(data, axis + 1, data.rank());
  params.index_count = node.input(1).shape.element_count();
  params.index_is_int64 = index_type == DType::kInt64;
  const size_t elem_bytes = dtype_size(node.input(0).dtype);
  if (elem_bytes == 2) return node.unsupported("2-byte elements");
  return make_kernel([params, elem_bytes](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(launch_gather(params, elem_bytes, c.inputs[0].data, c.inputs[1].data,
                                             c.outputs[0].data, c.stream));
  });
}

Expected<CudaPreparedKernel> make_pad_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  const DType dtype = node.input(0).dtype;
  if (dtype != DType::kFloat32 && dtype != DType::kInt64) return node.unsupported("dtype");
  if (node.has_input(3)) return node.unsupported("the opset-18 'axes' input");
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ints_from(node, 1, "pads"));
  if (static_cast<int>(pads.size()) != 2 * in.rank() || out.rank() != in.rank()) {
    return node.error(StatusCode::kInvalidModel, "pads has ", pads.size(), " entries for rank ",
                      in.rank());
  }
  const std::string mode = node.node().attributes.get_string("mode", "constant");
  PadParams params;
  if (mode == "reflect")
    params.mode = PadMode::kReflect;
  else if (mode == "edge")
    params.mode = PadMode::kEdge;
  else if (mode != "constant")
    return node.unsupported("mode '" + mode + "'");
  double value = node.node().attributes.get_float("value", 0.0f);
  if (const HostTensor* constant = node.constant_input(2)) {
    if (constant->element_count() > 0) value = constant->float_at(0);
  } else if (node.has_input(2)) {
    return node.unsupported("constant_value must be a constant");
  }
  if (dtype == DType::kFloat32) {
    const float f = static_cast<float>(value);
    uint32_t bits = 0;
    std::memcpy(&bits, &f, sizeof(bits));
    params.value_bits = bits;
  } else {
    const HostTensor* constant = node.constant_input(2);
    const bool given = constant != nullptr && constant->element_count() > 0;
    const int64_t v = given ? constant->int_at(0) : static_cast<int64_t>(value);
    std::memcpy(&params.value_bits, &v, sizeof(v));
  }
  params.rank = in.rank();
  params.count = out.element_count();
  for (int d = 0; d < in.rank(); ++d) {
    params.in_dims[d] = in[d];
    params.out_dims[d] = out[d];
    params.pads_begin[d] = pads[static_cast<size_t>(d)];
    if (in[d] == 0 && out[d] > 0 && params.mode != PadMode::kConstant) {
      return node.error(StatusCode::kInvalidModel, "cannot ", mode, "-pad an empty axis ", d);
    }
  }
  const size_t elem_bytes = dtype_size(dtype);
  return make_kernel([params, elem_bytes](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(
        launch_pad(params, elem_bytes, c.inputs[0].data, c.outputs[0].data, c.stream));
  });
}

namespace {

Status parse_resize_modes(const CudaNodeContext& node, bool legacy, ResizeParams& params) {
  const AttributeMap& attributes = node.node().attributes;
  const std::string mode = attributes.get_string("mode", "nearest");
  if (mode == "linear" || mode == "bilinear")
    params.linear = true;
  else if (mode != "nearest")
    return node.unsupported("mode '" + mode + "'");
  if (attributes.get_int("antialias", 0) != 0) return node.unsupported("antialias");
  if (legacy) {
    params.coord = ResizeCoord::kAsymmetric;
    params.nearest = ResizeNearest::kSimple;
    return Status::ok();
  }
  const std::string coord = attributes.get_string("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel")
    params.coord = ResizeCoord::kHalfPixel;
  else if (coord == "asymmetric")
    params.coord = ResizeCoord::kAsymmetric;
  else if (coord == "align_corners")
    params.coord = ResizeCoord::kAlignCorners;
  else if (coord == "pytorch_half_pixel")
    params.coord = ResizeCoord::kPytorchHalfPixel;
  else
    return node.unsupported("coordinate_transformation_mode '" + coord + "'");
  const std::string nearest = attributes.get_string("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor")
    params.nearest = ResizeNearest::kRoundPreferFloor;
  else if (nearest == "round_prefer_ceil")
    params.nearest = ResizeNearest::kRoundPreferCeil;
  else if (nearest == "floor")
    params.nearest = ResizeNearest::kFloor;
  else if (nearest == "ceil")
    params.nearest = ResizeNearest::kCeil;
  else
    return node.unsupported("nearest_mode '" + nearest + "'");
  return Status::ok();
}

}  // namespace

// Resize / Upsample of the last two dims (leading dims must be unchanged).
Expected<CudaPreparedKernel> make_resize_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  const int rank = in.rank();
  if (node.input(0).dtype != DType::kFloat32) return node.unsupported("dtype");
  if (rank < 2 || out.rank() != rank) return node.unsupported("rank below 2");
  for (int d = 0; d + 2 < rank; ++d) {
    if (in[d] != out[d]) return node.unsupported("resizing a dim other than the last two");
  }
  const bool legacy = node.node().op_type == "Upsample" || node.graph().opset < 11;
  ResizeParams params;
  ONEPOOL_RETURN_IF_ERROR(parse_resize_modes(node, legacy, params));
  std::vector<float> scales = node.node().attributes.get_floats("scales");
  if (const HostTensor* constant = node.constant_input(legacy ? 1 : 2)) {
    for (int64_t k = 0; k < constant->element_count(); ++k) {
      scales.push_back(static_cast<float>(constant->float_at(k)));
    }
  }
  params.planes = dims_product(in, 0, rank - 2);
  params.in_h = in[rank - 2];
  params.in_w = in[rank - 1];
  params.out_h = out[rank - 2];
  params.out_w = out[rank - 1];
  const bool have_scales = static_cast<int>(scales.size()) == rank;
  params.scale_h = have_scales ? scales[static_cast<size_t>(rank - 2)]
                               : static_cast<float>(params.out_h) / static_cast<float>(params.in_h);
  params.scale_w = have_scales ? scales[static_cast<size_t>(rank - 1)]
                               : static_cast<float>(params.out_w) / static_cast<float>(params.in_w);
  if (!(params.scale_h > 0.0f) || !(params.scale_w > 0.0f)) {
    return node.error(StatusCode::kInvalidModel, "non-positive resize scale");
  }
  return make_kernel([params](const CudaRunContext& c) -> Status {
    return ONEPOOL_CUDA_STATUS(launch_resize(params, static_cast<const float*>(c.inputs[0].data),
                                             static_cast<float*>(c.outputs[0].data), c.stream));
  });
}

// Inference BatchNormalization: a per-channel affine over [N, C, ...].
Expected<CudaPreparedKernel> make_batch_norm_kernel(const CudaNodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  for (size_t i = 0; i < 5; ++i) {
    if (!node.has_input(i) || node.input(i).dtype != DType::kFloat32) {
      return node.unsupported("needs 5 float32 inputs");
    }
  }
  if (node.has_output(1) || node.node().attributes.get_int("training_mode", 0) != 0) {
    return node.unsupported("training mode");
  }
  const Shape& x = node.input(0).shape;
  if (x.rank() < 2) return node.error(StatusCode::kInvalidModel, "input rank below 2");
  const int64_t channels = x[1];
  for (size_t i = 1; i < 5; ++i) {
    if (node.input(i).shape.element_count() != channels) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " does not hold ", channels,
                        " values");
    }
  }
  const float epsilon = node.node().attributes.get_float("epsilon", 1e-5f);
  const int64_t outer = x[0];
  const int64_t inner = dims_product(x, 2, x.rank());
  return make_kernel([=](const CudaRunContext& c) -> Status {
    auto in = [&c](size_t i) { return static_cast<const float*>(c.inputs[i].data); };
    return ONEPOOL_CUDA_STATUS(launch_batch_norm(in(0), in(1), in(2), in(3), in(4), epsilon, outer,
                                                 channels, inner,
                                                 static_cast<float*>(c.outputs[0].data), c.stream));
  });
}

void register_tensor_kernels(CudaKernelRegistry& registry) {
  registry.add("Reshape", &make_copy_kernel);
  registry.add("Flatten", &make_copy_kernel);
  registry.add("Squeeze", &make_copy_kernel);
  registry.add("Unsqueeze", &make_copy_kernel);
  registry.add("Identity", &make_copy_kernel);
  registry.add("Dropout", &make_copy_kernel);
  registry.add("Transpose", &make_transpose_kernel);
  registry.add("Concat", &make_concat_kernel);
  registry.add("Split", &make_split_kernel);
  registry.add("Slice", &make_slice_kernel);
  registry.add("Gather", &make_gather_kernel);
  registry.add("Pad", &make_pad_kernel);
  registry.add("Expand", &make_expand_kernel);
  registry.add("Tile", &make_tile_kernel);
  registry.add("Resize", &make_resize_kernel);
  registry.add("Upsample", &make_resize_kernel);
}

void register_normalization_kernels(CudaKernelRegistry& registry) {
  registry.add("BatchNormalization", &make_batch_norm_kernel);
  registry.add("LayerNormalization", &make_layer_norm_kernel);
}

}  // namespace onepool::cuda
