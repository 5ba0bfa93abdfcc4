// Slice at run-time positions (see slice_at_runtime.h).
#include "runtime/cpu/kernels/slice_at_runtime.h"

#include <cstring>
#include <set>
#include <vector>

#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"
#include "runtime/cpu/kernels/slice_axis.h"

namespace onepool::cpu::data {

namespace {

// Position k of a starts or ends view (int64 or int32, checked at prepare).
int64_t position_at(const TensorView& view, size_t k) {
  if (view.dtype == DType::kInt64) return view.as<const int64_t>()[k];
  return view.as<const int32_t>()[k];
}

class RuntimeSliceKernel final : public Kernel {
 public:
  RuntimeSliceKernel(std::string label, const Shape& input, const Shape& output,
                     std::vector<int> axes, std::vector<int64_t> steps, size_t element_size)
      : label_(std::move(label)),
        input_(input),
        output_(output),
        axes_(std::move(axes)),
        steps_(std::move(steps)),
        element_size_(element_size),
        strides_(contiguous_strides(input)),
        ranges_(static_cast<size_t>(input.rank())),
        position_(static_cast<size_t>(input.rank()), 0) {
    for (int k = 0; k < input.rank(); ++k) ranges_[static_cast<size_t>(k)].count = input[k];
  }

  Status run(const RunContext& context) override {
    for (size_t k = 0; k < axes_.size(); ++k) {
      const int axis = axes_[k];
      const int64_t start = position_at(context.inputs[1], k);
      const int64_t end = position_at(context.inputs[2], k);
      const AxisRange range = clamp_axis(start, end, steps_[k], input_[axis]);
      if (range.count != output_[axis]) {
        return make_status(StatusCode::kOutOfRange, label_, ": starts ", start, " and ends ", end,
                           " select ", range.count, " of the ", input_[axis], " elements of axis ",
                           axis, ", but the output is planned for ", output_[axis],
                           " (the length ends - starts proven at load; a position "
                           "past an end of the axis clamps the slice shorter)");
      }
      ranges_[static_cast<size_t>(axis)] = range;
    }
    copy(context.inputs[0].as<const std::byte>(), context.outputs[0].as<std::byte>());
    return Status::ok();
  }

 private:
  // Row by row: an odometer over the outer output axes, the last axis copied in one piece when
  // its step is 1.
  void copy(const std::byte* in, std::byte* out) {
    if (output_.element_count() == 0) return;
    const size_t rank = ranges_.size();
    const AxisRange& last = ranges_[rank - 1];
    const size_t row_elements = static_cast<size_t>(last.count);
    std::fill(position_.begin(), position_.end(), 0);
    for (;;) {
      int64_t offset = 0;
      for (size_t k = 0; k + 1 < rank; ++k) {
        offset += (ranges_[k].start + position_[k] * ranges_[k].step) * strides_[k];
      }
      const std::byte* row = in + (offset + last.start) * static_cast<int64_t>(element_size_);
      if (last.step == 1) {
        std::memcpy(out, row, row_elements * element_size_);
      } else {
        for (size_t i = 0; i < row_elements; ++i) {
          std::memcpy(
              out + i * element_size_,
              row + static_cast<int64_t>(i) * last.step * static_cast<int64_t>(element_size_),
              element_size_);
        }
      }
      out += row_elements * element_size_;
      if (!advance_outer_position(rank)) return;
    }
  }

  // The next outer position in row-major order; false after the last.
  bool advance_outer_position(size_t rank) {
    for (size_t k = rank - 1; k-- > 0;) {
      if (++position_[k] < ranges_[k].count) return true;
      position_[k] = 0;
    }
    return false;
  }

  std::string label_;
  Shape input_;
  Shape output_;
  std::vector<int> axes_;
  std::vector<int64_t> steps_;
  size_t element_size_;
  std::vector<int64_t> strides_;
  std::vector<AxisRange> ranges_;  // per input axis; sliced ones rewritten each run
  std::vector<int64_t> position_;  // the odometer, sized at prepare
};

bool is_position_vector(const Value& value) {
  return (value.dtype == DType::kInt64 || value.dtype == DType::kInt32) && value.shape.rank() == 1;
}

Expected<std::vector<int64_t>> constant_or(const NodeContext& node, size_t index, const char* name,
                                           std::vector<int64_t> absent) {
  if (!node.has_input(index)) return absent;
  const HostTensor* constant = node.constant_input(index);
  if (constant == nullptr) {
    return node.error(StatusCode::kUnsupported, "input ", index, " ('", node.input(index).name,
                      "', ", name,
                      ") must be a constant when starts or ends are computed at "
                      "run time");
  }
  return host_ints(*constant);
}

Expected<std::vector<int>> normalized_axes(const NodeContext& node,
                                           const std::vector<int64_t>& axes, int rank) {
  std::vector<int> normalized;
  for (int64_t axis : axes) {
    ONEPOOL_ASSIGN_OR_RETURN(int a, normalize_axis(node, axis, rank, "axes entry"));
    normalized.push_back(a);
  }
  if (std::set<int>(normalized.begin(), normalized.end()).size() != normalized.size()) {
    return node.error(StatusCode::kInvalidModel, "axes repeat an axis");
  }
  return normalized;
}

}  // namespace

bool slices_at_runtime(const NodeContext& node) {
  if (node.input_count() < 3 || !node.has_input(1) || !node.has_input(2)) return false;
  return node.constant_input(1) == nullptr || node.constant_input(2) == nullptr;
}

Expected<PreparedKernel> make_runtime_slice_kernel(const NodeContext& node, size_t element_size) {
  const Value& data = node.input(0);
  const Value& output = node.output(0);
  const Value& starts = node.input(1);
  const Value& ends = node.input(2);
  if (!is_position_vector(starts) || !is_position_vector(ends) ||
      starts.shape[0] != ends.shape[0]) {
    return node.error(StatusCode::kInvalidModel,
                      "starts and ends must be int32 or int64 vectors of one length, got ",
                      starts.shape.to_string(), " and ", ends.shape.to_string());
  }
  const auto count = static_cast<size_t>(starts.shape[0]);
  std::vector<int64_t> default_axes(count);
  for (size_t k = 0; k < count; ++k) default_axes[k] = static_cast<int64_t>(k);
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> axes, constant_or(node, 3, "axes", default_axes));
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> steps,
                           constant_or(node, 4, "steps", std::vector<int64_t>(count, 1)));
  if (axes.size() != count || steps.size() != count) {
    return node.error(StatusCode::kInvalidModel, "starts, ends, axes, steps have ", count, ", ",
                      count, ", ", axes.size(), ", ", steps.size(), " entries (expected equal)");
  }
  const int rank = data.shape.rank();
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int> sliced, normalized_axes(node, axes, rank));
  std::vector<bool> is_sliced(static_cast<size_t>(rank), false);
  for (size_t k = 0; k < count; ++k) {
    if (steps[k] == 0) return node.error(StatusCode::kInvalidModel, "steps[", k, "] is 0");
    is_sliced[static_cast<size_t>(sliced[k])] = true;
  }
  bool fits = output.shape.rank() == rank && rank > 0;
  for (int k = 0; fits && k < rank; ++k) {
    fits = is_sliced[static_cast<size_t>(k)] ? output.shape[k] <= data.shape[k]
                                             : output.shape[k] == data.shape[k];
  }
  if (!fits) {
    return node.error(StatusCode::kInvalidModel, "output '", output.name, "' has shape ",
                      output.shape.to_string(), ", which slicing ", data.shape.to_string(),
                      " on the axes given cannot produce");
  }
  PreparedKernel prepared;
  prepared.kernel =
      std::make_unique<RuntimeSliceKernel>(describe_node(node.node()), data.shape, output.shape,
                                           std::move(sliced), std::move(steps), element_size);
  prepared.implementation = "Slice (positions read at run time)";
  return prepared;
}

}  // namespace onepool::cpu::data
