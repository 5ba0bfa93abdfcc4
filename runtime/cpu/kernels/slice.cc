// Slice: starts/ends/axes/steps as attributes (opset < 10) or constant inputs (opset >= 10),
// clamped per the ONNX spec, then an AxisMapCopy with table_k[i] = (start_k + i*step_k)*stride_k.
// Starts or ends computed at run time: slice_at_runtime.h.
#include <algorithm>

#include "runtime/cpu/kernels/shape_axis_map.h"
#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"
#include "runtime/cpu/kernels/slice_at_runtime.h"
#include "runtime/cpu/kernels/slice_axis.h"

namespace onepool::cpu::data {

namespace {

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

Expected<SliceParams> read_slice_params(const NodeContext& node) {
  SliceParams params;
  const char* names[] = {"starts", "ends", "axes", "steps"};
  std::vector<int64_t>* fields[] = {&params.starts, &params.ends, &params.axes, &params.steps};
  for (size_t k = 0; k < 4; ++k) {
    ONEPOOL_ASSIGN_OR_RETURN(auto values, ints_from_input_or_attribute(node, 1 + k, names[k]));
    if (values) *fields[k] = std::move(*values);
  }
  const size_t count = params.starts.size();
  if (params.axes.empty()) {
    for (size_t k = 0; k < count; ++k) params.axes.push_back(static_cast<int64_t>(k));
  }
  if (params.steps.empty()) params.steps.assign(count, 1);
  if (params.ends.size() != count || params.axes.size() != count || params.steps.size() != count) {
    return node.error(StatusCode::kInvalidModel, "starts, ends, axes, steps have ", count, ", ",
                      params.ends.size(), ", ", params.axes.size(), ", ", params.steps.size(),
                      " entries (expected equal)");
  }
  return params;
}

}  // namespace

Expected<PreparedKernel> make_slice_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  const Value& input = node.input(0);
  const Value& output = node.output(0);
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, input.dtype));
  if (slices_at_runtime(node)) return make_runtime_slice_kernel(node, element_size);
  ONEPOOL_ASSIGN_OR_RETURN(SliceParams params, read_slice_params(node));
  const int rank = input.shape.rank();
  std::vector<AxisRange> ranges(static_cast<size_t>(rank));
  for (int k = 0; k < rank; ++k) ranges[static_cast<size_t>(k)].count = input.shape[k];
  for (size_t k = 0; k < params.starts.size(); ++k) {
    ONEPOOL_ASSIGN_OR_RETURN(int axis, normalize_axis(node, params.axes[k], rank, "axes entry"));
    if (params.steps[k] == 0) return node.error(StatusCode::kInvalidModel, "steps[", k, "] is 0");
    ranges[static_cast<size_t>(axis)] =
        clamp_axis(params.starts[k], params.ends[k], params.steps[k], input.shape[axis]);
  }
  const std::vector<int64_t> strides = contiguous_strides(input.shape);
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(rank));
  for (int k = 0; k < rank; ++k) {
    const AxisRange& range = ranges[static_cast<size_t>(k)];
    if (output.shape.rank() != rank || output.shape[k] != range.count) {
      return node.error(StatusCode::kInvalidModel, "output '", output.name, "' has shape ",
                        output.shape.to_string(), " but slicing ", input.shape.to_string(),
                        " gives ", range.count, " on axis ", k);
    }
    auto& table = tables[static_cast<size_t>(k)];
    for (int64_t i = 0; i < range.count; ++i) {
      table.push_back((range.start + i * range.step) * strides[static_cast<size_t>(k)]);
    }
  }
  PreparedKernel prepared;
  prepared.kernel =
      std::make_unique<AxisMapKernel>(AxisMapCopy(std::move(tables), element_size, 0));
  return prepared;
}

}  // namespace onepool::cpu::data
