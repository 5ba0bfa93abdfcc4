// Transpose, DepthToSpace and SpaceToDepth: each is a reshape plus a TransposePlan.
#include <numeric>

#include "runtime/cpu/kernels/bounded_readers.h"
#include "runtime/cpu/kernels/shape_ops.h"
#include "runtime/cpu/kernels/shape_util.h"
#include "runtime/cpu/kernels/transpose.h"

namespace onepool::cpu::data {

namespace {

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(TransposePlan plan) : plan_(std::move(plan)) {}
  Status run(const RunContext& context) override {
    plan_.run(static_cast<const std::byte*>(context.inputs[0].data),
              static_cast<std::byte*>(context.outputs[0].data), *context.threads);
    return Status::ok();
  }

 private:
  TransposePlan plan_;
};

Status check_io(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).dtype != node.output(0).dtype) {
    return node.error(StatusCode::kInvalidModel, "output dtype ", dtype_name(node.output(0).dtype),
                      " differs from input dtype ", dtype_name(node.input(0).dtype));
  }
  return Status::ok();
}

Expected<std::vector<int>> read_perm(const NodeContext& node, int rank) {
  std::vector<int64_t> raw = node.node().attributes.get_ints("perm");
  if (raw.empty()) {
    for (int axis = rank - 1; axis >= 0; --axis) raw.push_back(axis);
  }
  if (static_cast<int>(raw.size()) != rank) {
    return node.error(StatusCode::kInvalidModel, "perm has ", raw.size(),
                      " entries, expected rank ", rank);
  }
  std::vector<int> perm;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : raw) {
    ONEPOOL_ASSIGN_OR_RETURN(int normalized, normalize_axis(node, axis, rank, "perm axis"));
    if (seen[static_cast<size_t>(normalized)]) {
      return node.error(StatusCode::kInvalidModel, "perm repeats axis ", axis);
    }
    seen[static_cast<size_t>(normalized)] = true;
    perm.push_back(normalized);
  }
  return perm;
}

// Prepares `dims` (a reshape of the input) transposed by `perm` and checks the output count.
Expected<PreparedKernel> prepare_plan(const NodeContext& node, const std::vector<int64_t>& dims,
                                      const std::vector<int>& perm) {
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, movable_element_size(node, node.input(0).dtype));
  ONEPOOL_RETURN_IF_ERROR(check_output_count(node, 0, node.input(0).shape.element_count()));
  PreparedKernel prepared;
  prepared.kernel = std::make_unique<TransposeKernel>(TransposePlan(dims, perm, element_size));
  return prepared;
}

// DepthToSpace / SpaceToDepth need NCHW with dims divisible by the block size.
Expected<int64_t> read_blocksize(const NodeContext& node) {
  const Shape& shape = node.input(0).shape;
  const int64_t block = node.node().attributes.get_int("blocksize", 0);
  if (shape.rank() != 4 || block <= 0) {
    return node.error(StatusCode::kInvalidModel, "expected a rank-4 input and blocksize > 0, got ",
                      shape.to_string(), " and blocksize ", block);
  }
  return block;
}

}  // namespace

Expected<PreparedKernel> make_transpose_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  const Shape& in = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int> perm, read_perm(node, in.rank()));
  if (reads_bounded_input(node)) return make_bounded_transpose_kernel(node, perm);
  const Shape& out = node.output(0).shape;
  for (int k = 0; k < in.rank(); ++k) {
    if (out.rank() != in.rank() || out[k] != in[perm[static_cast<size_t>(k)]]) {
      return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "' has shape ",
                        out.to_string(), ", but input ", in.to_string(),
                        " transposed gives a different one (axis ", k, ")");
    }
  }
  return prepare_plan(node, {in.begin(), in.end()}, perm);
}

Expected<PreparedKernel> make_depth_to_space_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  ONEPOOL_ASSIGN_OR_RETURN(int64_t b, read_blocksize(node));
  const Shape& in = node.input(0).shape;
  if (in[1] % (b * b) != 0) {
    return node.error(StatusCode::kInvalidModel, "channels ", in[1], " not divisible by ", b * b);
  }
  const int64_t c = in[1] / (b * b);
  if (node.node().attributes.get_string("mode", "DCR") == "CRD") {
    return prepare_plan(node, {in[0], c, b, b, in[2], in[3]}, {0, 1, 4, 2, 5, 3});
  }
  return prepare_plan(node, {in[0], b, b, c, in[2], in[3]}, {0, 3, 4, 1, 5, 2});
}

Expected<PreparedKernel> make_space_to_depth_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_io(node));
  ONEPOOL_ASSIGN_OR_RETURN(int64_t b, read_blocksize(node));
  const Shape& in = node.input(0).shape;
  if (in[2] % b != 0 || in[3] % b != 0) {
    return node.error(StatusCode::kInvalidModel, "spatial dims of ", in.to_string(),
                      " not divisible by blocksize ", b);
  }
  return prepare_plan(node, {in[0], in[1], in[2] / b, b, in[3] / b, b}, {0, 3, 5, 1, 2, 4});
}

}  // namespace onepool::cpu::data
