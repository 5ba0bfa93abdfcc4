#include "runtime/cpu/kernels/matmul_layout.h"

#include <array>

namespace onepool::cpu {
namespace {

using Strides = std::array<int64_t, Shape::kMaxRank>;

// An operand split into batch dims and one matrix (after numpy's 1-D promotion).
struct Operand {
  Shape batch;
  int64_t rows = 0;
  int64_t cols = 0;
};

Shape leading_dims(const Shape& shape, int count) {
  Shape dims;
  for (int i = 0; i < count; ++i) dims.push_back(shape[i]);
  return dims;
}

// A 1-D A is a [1,K] row; a 1-D B is a [K,1] column.
Operand split_operand(const Shape& shape, bool is_a) {
  if (shape.rank() == 1) return is_a ? Operand{{}, 1, shape[0]} : Operand{{}, shape[0], 1};
  const int rank = shape.rank();
  return Operand{leading_dims(shape, rank - 2), shape[rank - 2], shape[rank - 1]};
}

// Dim `i` of `batch` right-aligned to `rank` dims, 1 where `batch` has no dim.
int64_t aligned_dim(const Shape& batch, int rank, int i) {
  const int j = i - (rank - batch.rank());
  return j < 0 ? 1 : batch[j];
}

Expected<Shape> broadcast_batch(const NodeContext& node, const Operand& a, const Operand& b) {
  const int rank = std::max(a.batch.rank(), b.batch.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    const int64_t da = aligned_dim(a.batch, rank, i);
    const int64_t db = aligned_dim(b.batch, rank, i);
    if (da != db && da != 1 && db != 1) {
      return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name, "' ",
                        node.input(0).shape.to_string(), " and input '", node.input(1).name, "' ",
                        node.input(1).shape.to_string(), ": batch dim ", i, " cannot broadcast (",
                        da, " vs ", db, ")");
    }
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

// Element strides of an operand's batch dims, aligned to `out`; 0 where the operand broadcasts.
Strides batch_strides(const Operand& operand, const Shape& out) {
  Strides strides{};
  int64_t stride = operand.rows * operand.cols;
  for (int i = out.rank() - 1; i >= 0; --i) {
    const int64_t dim = aligned_dim(operand.batch, out.rank(), i);
    strides[static_cast<size_t>(i)] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return strides;
}

// Walks the output batch in row-major order, recording each product's A and B offsets.
void fill_offsets(const Shape& out_batch, const Strides& a_strides, const Strides& b_strides,
                  MatMulLayout& layout) {
  layout.a_offsets.resize(static_cast<size_t>(layout.batch_count));
  layout.b_offsets.resize(static_cast<size_t>(layout.batch_count));
  std::array<int64_t, Shape::kMaxRank> index{};
  int64_t a_offset = 0;
  int64_t b_offset = 0;
  for (int64_t batch = 0; batch < layout.batch_count; ++batch) {
    layout.a_offsets[static_cast<size_t>(batch)] = a_offset;
    layout.b_offsets[static_cast<size_t>(batch)] = b_offset;
    for (int axis = out_batch.rank() - 1; axis >= 0; --axis) {
      const auto u = static_cast<size_t>(axis);
      ++index[u];
      a_offset += a_strides[u];
      b_offset += b_strides[u];
      if (index[u] < out_batch[axis]) break;
      a_offset -= a_strides[u] * index[u];
      b_offset -= b_strides[u] * index[u];
      index[u] = 0;
    }
  }
}

Shape output_shape_of(const Shape& out_batch, const Shape& a, const Shape& b, const Operand& oa,
                      const Operand& ob) {
  Shape out = out_batch;
  if (a.rank() != 1) out.push_back(oa.rows);
  if (b.rank() != 1) out.push_back(ob.cols);
  return out;
}

// True when B is one shared matrix and A's batch equals the output batch: A is [batch*M, K].
bool can_fold(const Operand& a, const Operand& b, const Shape& out_batch) {
  for (int i = 0; i < out_batch.rank(); ++i) {
    if (aligned_dim(b.batch, out_batch.rank(), i) != 1) return false;
    if (aligned_dim(a.batch, out_batch.rank(), i) != out_batch[i]) return false;
  }
  return true;
}

Status check_operands(const NodeContext& node, const Operand& a, const Operand& b) {
  const Shape& sa = node.input(0).shape;
  const Shape& sb = node.input(1).shape;
  if (sa.rank() == 0 || sb.rank() == 0) {
    return node.error(StatusCode::kInvalidModel, "inputs must have rank >= 1, got A ",
                      sa.to_string(), " and B ", sb.to_string());
  }
  if (a.cols != b.rows) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name, "' ",
                      sa.to_string(), " x input '", node.input(1).name, "' ", sb.to_string(),
                      ": inner dims differ (K = ", a.cols, " vs ", b.rows, ")");
  }
  return Status::ok();
}

}  // namespace

Expected<MatMulLayout> plan_matmul(const NodeContext& node) {
  // Step 1. Promote 1-D operands and broadcast the batch dims.
  const Shape& sa = node.input(0).shape;
  const Shape& sb = node.input(1).shape;
  const Operand a = split_operand(sa, true);
  const Operand b = split_operand(sb, false);
  ONEPOOL_RETURN_IF_ERROR(check_operands(node, a, b));
  ONEPOOL_ASSIGN_OR_RETURN(Shape out_batch, broadcast_batch(node, a, b));

  // Step 2. The output shape must be what the model declares.
  MatMulLayout layout;
  layout.output_shape = output_shape_of(out_batch, sa, sb, a, b);
  const Shape& declared = node.output(0).shape;
  if (!(declared == layout.output_shape)) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", layout.output_shape.to_string(), " from A ",
                      sa.to_string(), " x B ", sb.to_string(), ", got ", declared.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(layout.output_count, layout.output_shape.element_count_checked());
  layout.gemm = GemmShape{false, false, a.rows, b.cols, a.cols, a.cols, b.cols, b.cols};
  if (layout.output_count == 0) return layout;  // nothing to compute; no offsets needed
  // M*N >= 1 here, so the batch count is at most output_count and cannot overflow.
  layout.batch_count = layout.output_count / (a.rows * b.cols);

  // Step 3. One folded product when possible, else one offset pair per product.
  GemmShape folded = layout.gemm;
  folded.m = a.rows * layout.batch_count;  // <= output_count: cannot overflow
  if (can_fold(a, b, out_batch) && gemm_fits_blas(folded)) {
    layout.gemm = folded;
    layout.batch_count = 1;
    layout.fold_batch = true;
    return layout;
  }
  if (!gemm_fits_blas(layout.gemm)) {
    return node.error(StatusCode::kUnsupported, "matrix dims M=", layout.gemm.m,
                      " N=", layout.gemm.n, " K=", layout.gemm.k, " exceed the 32-bit BLAS range");
  }
  fill_offsets(out_batch, batch_strides(a, out_batch), batch_strides(b, out_batch), layout);
  return layout;
}

}  // namespace onepool::cpu
