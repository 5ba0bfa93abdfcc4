// Pad (modes constant, reflect, edge, wrap): pads from the attribute (opset < 11) or a constant
// input, optional axes (opset 18); negative pads crop. Each output axis gets a table mapping the
// output index to an input offset (or kFill for the constant), then one AxisMapCopy. A constant
// Pad that only grows (pads >= 0, fill known when prepared) may also run over its own input
// (pad_in_place.h) when the planner lets the output take over the input's bytes.
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "runtime/cpu/kernels/pad_in_place.h"
#include "runtime/cpu/kernels/shape_axis_map.h"
#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

enum class PadMode : uint8_t { kConstant, kReflect, kEdge, kWrap };

// Input index read by output index `o` along an axis of `dim` elements padded by `begin` in
// front, or -1 for the constant.
int64_t source_index(int64_t o, int64_t begin, int64_t dim, PadMode mode) {
  const int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return std::clamp<int64_t>(i, 0, dim - 1);
    case PadMode::kWrap:
      return ((i % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

Expected<PadMode> read_mode(const NodeContext& node) {
  const std::string mode = node.node().attributes.get_string("mode", "constant");
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  return node.error(StatusCode::kUnsupported, "mode '", mode,
                    "' (expected constant, reflect, edge or wrap)");
}

// Full-rank begin/end pads: [b_0..b_{r-1}, e_0..e_{r-1}].
Expected<std::vector<int64_t>> read_pads(const NodeContext& node, int rank) {
  ONEPOOL_ASSIGN_OR_RETURN(auto pads, ints_from_input_or_attribute(node, 1, "pads"));
  if (!pads) return node.error(StatusCode::kInvalidModel, "pads are missing");
  ONEPOOL_ASSIGN_OR_RETURN(auto axes, ints_from_input_or_attribute(node, 3, "axes"));
  std::vector<int64_t> axis_list;
  if (axes) axis_list = *axes;
  if (!axes) {
    for (int k = 0; k < rank; ++k) axis_list.push_back(k);
  }
  if (pads->size() != 2 * axis_list.size()) {
    return node.error(StatusCode::kInvalidModel, "pads has ", pads->size(),
                      " entries, expected 2 * ", axis_list.size());
  }
  std::vector<int64_t> full(2 * static_cast<size_t>(rank), 0);
  const size_t n = axis_list.size();
  for (size_t k = 0; k < n; ++k) {
    ONEPOOL_ASSIGN_OR_RETURN(int axis, normalize_axis(node, axis_list[k], rank, "axes entry"));
    full[static_cast<size_t>(axis)] = (*pads)[k];
    full[static_cast<size_t>(axis + rank)] = (*pads)[k + n];
  }
  return full;
}

// The fill bytes known at prepare time: constant input 2, the opset < 11 'value' attribute, or 0.
Expected<uint64_t> read_fill(const NodeContext& node, DType dtype) {
  uint64_t bits = 0;
  if (const HostTensor* value = node.constant_input(2)) {
    if (value->dtype != dtype) {
      return node.error(StatusCode::kInvalidModel, "constant_value: expected ", dtype_name(dtype),
                        ", got ", dtype_name(value->dtype));
    }
    if (value->element_count() > 0) std::memcpy(&bits, value->data.data(), dtype_size(dtype));
    return bits;
  }
  return element_bits(dtype, node.node().attributes.get_float("value", 0.0f));
}

// The table copy, or the in-place walk when the planner put the output over the input.
class GrowingPadKernel final : public Kernel {
 public:
  GrowingPadKernel(AxisMapCopy copy, GrowingPad pad)
      : copy_(std::move(copy)), pad_(std::move(pad)) {}

  Status run(const RunContext& context) override {
    auto* out = static_cast<std::byte*>(context.outputs[0].data);
    if (out == context.inputs[0].data) {
      pad_in_place(pad_, out);
    } else {
      copy_.run(static_cast<const std::byte*>(context.inputs[0].data), out, *context.threads);
    }
    return Status::ok();
  }

 private:
  AxisMapCopy copy_;
  GrowingPad pad_;
};

// The in-place geometry when the Pad only grows with a fill known now, else nothing.
std::optional<GrowingPad> growing_pad(const Shape& input, const std::vector<int64_t>& pads,
                                      PadMode mode, bool runtime_fill, size_t element_size,
                                      uint64_t fill) {
  if (mode != PadMode::kConstant || runtime_fill || input.rank() == 0) return std::nullopt;
  if (std::any_of(pads.begin(), pads.end(), [](int64_t pad) { return pad < 0; })) {
    return std::nullopt;
  }
  const auto rank = static_cast<size_t>(input.rank());
  GrowingPad pad;
  pad.input = input;
  pad.begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  pad.end.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  pad.element_size = element_size;
  pad.fill_bits = fill;
  return pad;
}

}  // namespace

Expected<PreparedKernel> make_pad_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  const Value& input = node.input(0);
  const Value& output = node.output(0);
  const int rank = input.shape.rank();
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, input.dtype));
  ONEPOOL_ASSIGN_OR_RETURN(PadMode mode, read_mode(node));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> pads, read_pads(node, rank));
  ONEPOOL_ASSIGN_OR_RETURN(uint64_t fill, read_fill(node, input.dtype));
  const std::vector<int64_t> strides = contiguous_strides(input.shape);
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(rank));
  for (int k = 0; k < rank; ++k) {
    const int64_t dim = input.shape[k];
    const int64_t begin = pads[static_cast<size_t>(k)];
    const int64_t out_dim = dim + begin + pads[static_cast<size_t>(k + rank)];
    if (output.shape.rank() != rank || output.shape[k] != out_dim) {
      return node.error(StatusCode::kInvalidModel, "output '", output.name, "' has shape ",
                        output.shape.to_string(), ", but padding ", input.shape.to_string(),
                        " gives ", out_dim, " on axis ", k);
    }
    if (dim == 0 && out_dim > 0 && mode != PadMode::kConstant) {
      return node.error(StatusCode::kInvalidModel, "cannot pad empty axis ", k, " in this mode");
    }
    for (int64_t o = 0; o < out_dim; ++o) {
      const int64_t i = source_index(o, begin, dim, mode);
      tables[static_cast<size_t>(k)].push_back(i < 0 ? AxisMapCopy::kFill
                                                     : i * strides[static_cast<size_t>(k)]);
    }
  }
  const bool runtime_fill = node.has_input(2) && node.constant_input(2) == nullptr;
  AxisMapCopy copy(std::move(tables), element_size, fill);
  PreparedKernel prepared;
  if (auto growing = growing_pad(input.shape, pads, mode, runtime_fill, element_size, fill)) {
    prepared.kernel = std::make_unique<GrowingPadKernel>(std::move(copy), std::move(*growing));
    prepared.in_place_grows = true;
    return prepared;
  }
  prepared.kernel = std::make_unique<AxisMapKernel>(std::move(copy), runtime_fill ? 2 : -1);
  return prepared;
}

}  // namespace onepool::cpu::data
