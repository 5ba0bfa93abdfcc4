#include "runtime/cpu/kernels/broadcast.h"

#include <string>
#include <vector>

namespace onepool::cpu {
namespace {

struct Operand {
  Shape shape;
  std::string label;  // "input 1 'b'"
};

// Per-axis strides of `shape` right-aligned against an output of rank `out_rank`; 0 where the
// operand broadcasts. Fails when an axis is neither equal to the output's nor 1.
Expected<std::array<int64_t, Shape::kMaxRank>> operand_strides(const NodeContext& node,
                                                               const Operand& operand,
                                                               const Shape& output,
                                                               const std::string& output_label) {
  std::array<int64_t, Shape::kMaxRank> strides{};
  const int offset = output.rank() - operand.shape.rank();
  if (offset < 0) {
    return node.error(StatusCode::kInvalidModel, operand.label, " has shape ",
                      operand.shape.to_string(), " of rank ", operand.shape.rank(), ", more than ",
                      output_label, " shape ", output.to_string(), " (rank ", output.rank(), ")");
  }
  int64_t stride = 1;
  for (int d = output.rank() - 1; d >= offset; --d) {
    const int64_t dim = operand.shape[d - offset];
    const int64_t out_dim = output[d];
    if (dim != out_dim && dim != 1) {
      return node.error(StatusCode::kInvalidModel, operand.label, " shape ",
                        operand.shape.to_string(), " does not broadcast to ", output_label,
                        " shape ", output.to_string(), ": axis ", d, " is ", dim, ", expected ",
                        out_dim, " or 1");
    }
    strides[static_cast<size_t>(d)] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return strides;
}

// Drops size-1 output axes and merges adjacent axes across which every operand is contiguous.
void merge_axes(const Shape& output, BroadcastPlan& plan,
                const std::array<std::array<int64_t, Shape::kMaxRank>, 3>& strides) {
  int rank = 0;
  for (int d = 0; d < output.rank(); ++d) {
    const int64_t dim = output[d];
    if (dim == 1) continue;
    bool mergeable = rank > 0;
    for (int i = 0; i < plan.input_count && mergeable; ++i) {
      const auto& s = strides[static_cast<size_t>(i)];
      const auto& merged = plan.strides[static_cast<size_t>(i)];
      mergeable = merged[static_cast<size_t>(rank - 1)] == s[static_cast<size_t>(d)] * dim;
    }
    if (mergeable) {
      plan.dims[static_cast<size_t>(rank - 1)] *= dim;
      for (int i = 0; i < plan.input_count; ++i) {
        plan.strides[static_cast<size_t>(i)][static_cast<size_t>(rank - 1)] =
            strides[static_cast<size_t>(i)][static_cast<size_t>(d)];
      }
      continue;
    }
    plan.dims[static_cast<size_t>(rank)] = dim;
    for (int i = 0; i < plan.input_count; ++i) {
      plan.strides[static_cast<size_t>(i)][static_cast<size_t>(rank)] =
          strides[static_cast<size_t>(i)][static_cast<size_t>(d)];
    }
    ++rank;
  }
  if (rank == 0) {  // every axis is 1 (or a scalar): one row of one element
    plan.dims[0] = 1;
    for (int i = 0; i < plan.input_count; ++i) plan.strides[static_cast<size_t>(i)][0] = 0;
    rank = 1;
  }
  plan.rank = rank;
}

Expected<BroadcastPlan> plan_operands(const NodeContext& node, std::span<const Operand> operands,
                                      const Shape& output, const std::string& output_label) {
  if (operands.empty() || operands.size() > BroadcastPlan::kMaxInputs) {
    return node.error(StatusCode::kInternal, "broadcast of ", operands.size(), " operands");
  }
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t count, output.element_count_checked());
  BroadcastPlan plan;
  plan.input_count = static_cast<int>(operands.size());
  plan.element_count = count;
  std::array<std::array<int64_t, Shape::kMaxRank>, 3> strides{};
  for (size_t i = 0; i < operands.size(); ++i) {
    ONEPOOL_ASSIGN_OR_RETURN(strides[i], operand_strides(node, operands[i], output, output_label));
  }
  merge_axes(output, plan, strides);
  return plan;
}

std::string input_label(const NodeContext& node, size_t i) {
  return str_cat("input ", i, " '", node.input(i).name, "'");
}

std::string output_label(const NodeContext& node) {
  return str_cat("output '", node.output(0).name, "'");
}

}  // namespace

bool BroadcastPlan::same_shape() const {
  if (rank != 1) return false;
  for (int i = 0; i < input_count; ++i) {
    if (inner_stride(i) != 1) return false;
  }
  return true;
}

Expected<BroadcastPlan> make_broadcast_plan(const NodeContext& node,
                                            std::span<const size_t> input_indices) {
  std::vector<Operand> operands;
  for (const size_t i : input_indices) {
    if (!node.has_input(i)) {
      return node.error(StatusCode::kInvalidModel, "input ", i, " is missing");
    }
    operands.push_back({node.input(i).shape, input_label(node, i)});
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  return plan_operands(node, operands, node.output(0).shape, output_label(node));
}

Expected<BroadcastPlan> make_broadcast_plan_for_shapes(const NodeContext& node,
                                                       std::span<const Shape> shapes,
                                                       const Shape& output) {
  std::vector<Operand> operands;
  for (size_t i = 0; i < shapes.size(); ++i) {
    operands.push_back({shapes[i], str_cat("operand ", i)});
  }
  return plan_operands(node, operands, output, "output");
}

Status check_output_is_broadcast(const NodeContext& node, std::span<const size_t> input_indices) {
  const Shape& output = node.output(0).shape;
  for (int d = 0; d < output.rank(); ++d) {
    // The broadcast dim is the inputs' common non-1 dim, or 1 when every input has 1 there.
    int64_t expected = 1;
    for (const size_t i : input_indices) {
      const Shape& shape = node.input(i).shape;
      const int axis = d - (output.rank() - shape.rank());
      if (axis >= 0 && shape[axis] != 1) expected = shape[axis];
    }
    if (expected != output[d]) {
      return node.error(StatusCode::kInvalidModel, output_label(node), " shape ",
                        output.to_string(), " is not the broadcast of its inputs: axis ", d, " is ",
                        output[d], ", expected ", expected);
    }
  }
  return Status::ok();
}

}  // namespace onepool::cpu
