// CPU Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast unidirectionally to [M,N].
// C is broadcast-copied into Y first and CBLAS accumulates onto it with beta; a fused activation
// epilogue then runs over Y.
#include <algorithm>
#include <memory>
#include <type_traits>

#include "runtime/cpu/kernels/gemm_blas.h"
#include "runtime/cpu/kernels/gemm_vector.h"
#include "runtime/cpu/kernels/matmul_common.h"

namespace onepool::cpu {
namespace {

struct GemmLayout {
  GemmShape gemm;
  float alpha = 1.0f;
  float beta = 1.0f;
  bool use_c = false;        // C present and beta != 0
  int64_t c_row_stride = 0;  // elements between C rows (0 when C broadcasts along M)
  int64_t c_col_stride = 0;  // 1, or 0 when C broadcasts along N
};

Status check_matrix(const NodeContext& node, size_t input) {
  const Shape& shape = node.input(input).shape;
  if (shape.rank() == 2) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "input '", node.input(input).name,
                    "': expected a 2-D matrix, got ", shape.to_string());
}

// C must be unidirectionally broadcastable to [M,N]: rank <= 2, each dim 1 or equal.
Status plan_bias(const NodeContext& node, GemmLayout& layout) {
  const Shape& c = node.input(2).shape;
  const int64_t c_rows = c.rank() == 2 ? c[0] : 1;
  const int64_t c_cols = c.rank() >= 1 ? c[c.rank() - 1] : 1;
  const int64_t m = layout.gemm.m;
  const int64_t n = layout.gemm.n;
  if (c.rank() > 2 || (c_rows != 1 && c_rows != m) || (c_cols != 1 && c_cols != n)) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(2).name, "' ", c.to_string(),
                      " cannot broadcast to [", m, ",", n, "]");
  }
  layout.c_row_stride = c_rows == 1 ? 0 : c_cols;
  layout.c_col_stride = c_cols == 1 ? 0 : 1;
  return Status::ok();
}

Expected<GemmLayout> plan_gemm(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_matrix(node, 0));
  ONEPOOL_RETURN_IF_ERROR(check_matrix(node, 1));
  const AttributeMap& attributes = node.node().attributes;
  GemmLayout layout;
  layout.alpha = attributes.get_float("alpha", 1.0f);
  layout.beta = attributes.get_float("beta", 1.0f);
  GemmShape& g = layout.gemm;
  g.trans_a = attributes.get_int("transA", 0) != 0;
  g.trans_b = attributes.get_int("transB", 0) != 0;
  const Shape& a = node.input(0).shape;
  const Shape& b = node.input(1).shape;
  g.m = g.trans_a ? a[1] : a[0];
  g.k = g.trans_a ? a[0] : a[1];
  g.n = g.trans_b ? b[0] : b[1];
  const int64_t k_b = g.trans_b ? b[1] : b[0];
  g.lda = a[1];
  g.ldb = b[1];
  g.ldc = g.n;
  if (g.k != k_b) {
    return node.error(StatusCode::kInvalidModel, "op(A) from '", node.input(0).name, "' ",
                      a.to_string(), " has K=", g.k, " but op(B) from '", node.input(1).name, "' ",
                      b.to_string(), " has K=", k_b, " (transA=", g.trans_a, ", transB=", g.trans_b,
                      ")");
  }
  const Shape expected{g.m, g.n};
  if (!(node.output(0).shape == expected)) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected shape ", expected.to_string(), ", got ",
                      node.output(0).shape.to_string());
  }
  if (!gemm_fits_blas(g)) {
    return node.error(StatusCode::kUnsupported, "matrix dims M=", g.m, " N=", g.n, " K=", g.k,
                      " exceed the 32-bit BLAS range");
  }
  layout.use_c = node.has_input(2) && layout.beta != 0.0f;
  if (node.has_input(2)) ONEPOOL_RETURN_IF_ERROR(plan_bias(node, layout));
  return layout;
}

template <class T>
class GemmKernel final : public Kernel {
 public:
  GemmKernel(GemmLayout layout, Activation activation) : layout_(layout), activation_(activation) {}

  Status run(const RunContext& context) override {
    const GemmShape& g = layout_.gemm;
    T* y = context.outputs[0].as<T>();
    const int64_t count = g.m * g.n;
    if (count == 0) return Status::ok();
    if (layout_.use_c) {
      broadcast_c(context.inputs[2].as<const T>(), y);
    } else {
      std::fill(y, y + count, T{0});
    }
    const float beta = layout_.use_c ? layout_.beta : 0.0f;
    if (g.k == 0) {
      // An empty product: Y = beta * C (BLAS may skip writing C at all when K == 0).
      for (int64_t i = 0; i < count; ++i) y[i] = static_cast<T>(beta * y[i]);
    } else {
      product(context.inputs[0].as<const T>(), context.inputs[1].as<const T>(), beta, y,
              context.threads);
    }
    if constexpr (std::is_same_v<T, float>) apply_activation(activation_, y, count);
    return Status::ok();
  }

 private:
  void product(const T* a, const T* b, float beta, T* y, ThreadPool* threads) const {
    if constexpr (std::is_same_v<T, float>) {
      if (gemv_row_fits(layout_.gemm)) {
        gemv_row(layout_.gemm, layout_.alpha, a, b, beta, y, threads);
        return;
      }
    }
    gemm(layout_.gemm, layout_.alpha, a, b, beta, y, threads);
  }

  void broadcast_c(const T* c, T* y) const {
    const GemmShape& g = layout_.gemm;
    for (int64_t i = 0; i < g.m; ++i) {
      const T* c_row = c + i * layout_.c_row_stride;
      T* y_row = y + i * g.n;
      for (int64_t j = 0; j < g.n; ++j) y_row[j] = c_row[j * layout_.c_col_stride];
    }
  }

  GemmLayout layout_;
  Activation activation_;
};

}  // namespace

Expected<PreparedKernel> make_gemm_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_arity(node, 2));
  ONEPOOL_ASSIGN_OR_RETURN(const DType dtype,
                           common_dtype(node, {DType::kFloat32, DType::kFloat64}));
  ONEPOOL_ASSIGN_OR_RETURN(const Activation activation, read_fused_activation(node, dtype));
  ONEPOOL_ASSIGN_OR_RETURN(const GemmLayout layout, plan_gemm(node));
  PreparedKernel result;
  if (dtype == DType::kFloat64) {
    result.kernel = std::make_unique<GemmKernel<double>>(layout, activation);
  } else {
    result.kernel = std::make_unique<GemmKernel<float>>(layout, activation);
    if (gemv_row_fits(layout.gemm)) result.implementation = "one-row dot products";
  }
  return result;
}

}  // namespace onepool::cpu
