// Concat and Split: the tensor viewed as [outer, axis, inner]; each input (Concat) or output
// (Split) owns a contiguous block of axis_i * inner elements in every outer row, so both are a
// memcpy per (outer row, part). A Concat input that the planner placed at its slice of the output
// (its producer wrote it there) is already in place: its copy is skipped.
#include <algorithm>
#include <cstring>

#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

struct Part {
  int64_t block_bytes = 0;   // bytes of this part in one outer row
  int64_t offset_bytes = 0;  // where the part starts inside the joined row
};

// Joined row: the concatenated tensor's row of outer index o. `gather` = true copies parts into
// the joined tensor (Concat); false copies the joined tensor into parts (Split).
class BlockCopyKernel final : public Kernel {
 public:
  BlockCopyKernel(std::vector<Part> parts, int64_t outer, int64_t row_bytes, bool gather)
      : parts_(std::move(parts)), outer_(outer), row_bytes_(row_bytes), gather_(gather) {}

  Status run(const RunContext& context) override {
    const int64_t min_rows = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, row_bytes_));
    context.threads->parallel_for(outer_, min_rows, [&](int64_t begin, int64_t end) {
      for (size_t p = 0; p < parts_.size(); ++p) copy_part(context, p, begin, end);
    });
    return Status::ok();
  }

 private:
  void copy_part(const RunContext& context, size_t p, int64_t begin, int64_t end) const {
    const Part& part = parts_[p];
    if (part.block_bytes == 0) return;
    auto* joined =
        static_cast<std::byte*>(gather_ ? context.outputs[0].data : context.inputs[0].data);
    auto* piece =
        static_cast<std::byte*>(gather_ ? context.inputs[p].data : context.outputs[p].data);
    if (piece == nullptr) return;  // an omitted Split output
    for (int64_t row = begin; row < end; ++row) {
      std::byte* whole = joined + row * row_bytes_ + part.offset_bytes;
      std::byte* own = piece + row * part.block_bytes;
      if (own == whole) continue;
      if (gather_) {
        std::memcpy(whole, own, static_cast<size_t>(part.block_bytes));
      } else {
        std::memcpy(own, whole, static_cast<size_t>(part.block_bytes));
      }
    }
  }

  std::vector<Part> parts_;
  int64_t outer_;
  int64_t row_bytes_;
  bool gather_;
};

// Checks that `part` equals `whole` except along `axis`.
Status check_part_shape(const NodeContext& node, const Value& whole, const Value& part, int axis) {
  bool same = whole.shape.rank() == part.shape.rank() && whole.dtype == part.dtype;
  for (int k = 0; same && k < whole.shape.rank(); ++k) {
    same = k == axis || whole.shape[k] == part.shape[k];
  }
  if (same) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "tensor '", part.name, "' ", dtype_name(part.dtype),
                    part.shape.to_string(), " does not match '", whole.name, "' ",
                    dtype_name(whole.dtype), whole.shape.to_string(), " outside axis ", axis);
}

// Builds the parts from the axis dims of `pieces`; fails unless they sum to the whole's dim.
Expected<PreparedKernel> prepare_blocks(const NodeContext& node, const Value& whole,
                                        const std::vector<const Value*>& pieces, int axis,
                                        bool gather) {
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= whole.shape[k];
  for (int k = axis + 1; k < whole.shape.rank(); ++k) inner *= whole.shape[k];
  const auto element = static_cast<int64_t>(dtype_size(whole.dtype));
  std::vector<Part> parts;
  int64_t offset = 0;
  for (const Value* piece : pieces) {
    Part part;
    if (piece != nullptr) {
      ONEPOOL_RETURN_IF_ERROR(check_part_shape(node, whole, *piece, axis));
      part.block_bytes = piece->shape[axis] * inner * element;
    }
    part.offset_bytes = offset;
    offset += part.block_bytes;
    parts.push_back(part);
  }
  if (offset != whole.shape[axis] * inner * element) {
    return node.error(StatusCode::kInvalidModel, "parts along axis ", axis, " sum to ",
                      offset / std::max<int64_t>(1, inner * element), ", but '", whole.name,
                      "' has ", whole.shape[axis]);
  }
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<BlockCopyKernel>(std::move(parts), outer, offset, gather);
  return prepared;
}

}  // namespace

Expected<PreparedKernel> make_concat_kernel(const NodeContext& node) {
  if (!node.has_output(0) || node.input_count() == 0) {
    return node.error(StatusCode::kInvalidModel, "expected at least one input and output 0");
  }
  const Value& output = node.output(0);
  ONEPOOL_ASSIGN_OR_RETURN(int axis, normalize_axis(node, node.node().attributes.get_int("axis", 0),
                                                    output.shape.rank(), "axis"));
  std::vector<const Value*> pieces;
  for (size_t i = 0; i < node.input_count(); ++i) {
    if (!node.has_input(i)) return node.error(StatusCode::kInvalidModel, "input ", i, " is empty");
    pieces.push_back(&node.input(i));
  }
  ONEPOOL_ASSIGN_OR_RETURN(PreparedKernel prepared,
                           prepare_blocks(node, output, pieces, axis, true));
  prepared.concat_in_place = true;
  return prepared;
}

// Split sizes are the outputs' static dims along the axis; a constant `split` input or attribute
// must agree with them.
Expected<PreparedKernel> make_split_kernel(const NodeContext& node) {
  if (!node.has_input(0)) return node.error(StatusCode::kInvalidModel, "input 0 is missing");
  const Value& input = node.input(0);
  ONEPOOL_ASSIGN_OR_RETURN(int axis, normalize_axis(node, node.node().attributes.get_int("axis", 0),
                                                    input.shape.rank(), "axis"));
  std::vector<const Value*> pieces;
  for (size_t i = 0; i < node.output_count(); ++i) {
    if (!node.has_output(i)) {
      return node.error(StatusCode::kUnsupported, "omitted output ", i, " of Split");
    }
    pieces.push_back(&node.output(i));
  }
  const HostTensor* split_input = node.constant_input(1);
  std::vector<int64_t> split =
      split_input != nullptr ? host_ints(*split_input) : node.node().attributes.get_ints("split");
  for (size_t i = 0; i < split.size() && i < pieces.size(); ++i) {
    if (split.size() != pieces.size() || split[i] != pieces[i]->shape[axis]) {
      return node.error(StatusCode::kInvalidModel, "split has ", split.size(), " entries (", i,
                        ": ", split[i], ") but output '", pieces[i]->name, "' has shape ",
                        pieces[i]->shape.to_string());
    }
  }
  return prepare_blocks(node, input, pieces, axis, false);
}

}  // namespace onepool::cpu::data
