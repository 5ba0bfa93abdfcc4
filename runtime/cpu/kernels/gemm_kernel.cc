// CPU Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast unidirectionally to [M,N].
// float32 products that MatMul would run on the packed-A GEMM (matmul_packed.h: op(A) = A, at
// least one panel of rows, an AVX2 or AVX-512 micro-kernel) run there too, op(B) = B read in place
// or a constant B (B^T of a constant B transposed once at prepare) packed once and shared by the
// Model's Sessions; then Y = alpha * Y + beta * C, element by element. So OpenBLAS's environment
// settings (OPENBLAS_CORETYPE) do not pick the kernel of a linear layer, and every element is the
// micro-kernel's one chain over k. The other products (transA, a B^T that is not constant, one
// row, float64, the portable instruction set) copy C into Y and let CBLAS accumulate onto it with
// beta, or take the one-row dot products. A fused activation epilogue then runs over Y.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/gemm_blas.h"
#include "runtime/cpu/kernels/gemm_vector.h"
#include "runtime/cpu/kernels/matmul_common.h"
#include "runtime/cpu/kernels/matmul_packed.h"
#include "runtime/cpu/thread_pool.h"

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

// C's element for Y[i][j] (GemmLayout's broadcast strides).
template <class T>
T c_at(const GemmLayout& layout, const T* c, int64_t i, int64_t j) {
  return c[i * layout.c_row_stride + j * layout.c_col_stride];
}

template <class T>
class GemmKernel final : public Kernel {
 public:
  GemmKernel(GemmLayout layout, Activation activation, std::optional<PackedProduct> packed = {})
      : layout_(layout), activation_(activation), packed_(std::move(packed)) {}

  Status run(const RunContext& context) override {
    const GemmShape& g = layout_.gemm;
    T* y = context.outputs[0].as<T>();
    const int64_t count = g.m * g.n;
    if (count == 0) return Status::ok();
    if constexpr (std::is_same_v<T, float>) {
      if (packed_) {
        run_packed_product(*packed_, context.inputs[0].as<const float>(),
                           context.inputs[1].as<const float>(), y, context.workspace,
                           context.threads);
        scale_and_add_c(layout_.use_c ? context.inputs[2].as<const float>() : nullptr, y,
                        context.threads);
        apply_activation(activation_, y, count);
        return Status::ok();
      }
    }
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

  // Y = alpha * Y + beta * C (C nullptr: Y = alpha * Y), each element rounded after each step
  // as ONNX's definition reads; rows shared over the threads.
  void scale_and_add_c(const float* c, float* y, ThreadPool* threads) const {
    const GemmShape& g = layout_.gemm;
    const float alpha = layout_.alpha;
    const float beta = layout_.beta;
    if (c == nullptr && alpha == 1.0f) return;
    const auto rows = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float* y_row = y + i * g.n;
        for (int64_t j = 0; j < g.n; ++j) {
          const float scaled = alpha * y_row[j];
          y_row[j] = c == nullptr ? scaled : scaled + beta * c_at(layout_, c, i, j);
        }
      }
    };
    if (threads == nullptr) return rows(0, g.m);
    threads->parallel_for(g.m, std::max<int64_t>(1, (int64_t{1} << 14) / g.n), rows);
  }

  void broadcast_c(const T* c, T* y) const {
    const GemmShape& g = layout_.gemm;
    for (int64_t i = 0; i < g.m; ++i) {
      T* y_row = y + i * g.n;
      for (int64_t j = 0; j < g.n; ++j) y_row[j] = c_at(layout_, c, i, j);
    }
  }

  GemmLayout layout_;
  Activation activation_;
  std::optional<PackedProduct> packed_;  // float32 on the packed-A GEMM instead of CBLAS
};

// B^T of a constant B [N, K] as a K x N matrix (row stride N), for pack_constant_b.
std::vector<float> transposed(const float* b, int64_t n, int64_t k) {
  std::vector<float> t(static_cast<size_t>(n * k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) t[static_cast<size_t>(p * n + j)] = b[j * k + p];
  }
  return t;
}

// The packed-A GEMM's plan for a float32 Gemm, or nullopt where CBLAS or the one-row products run
// it (see the top of this file). B^T needs a constant B: it is transposed and packed here.
std::optional<PackedProduct> plan_packed_gemm(const NodeContext& node, const GemmLayout& layout) {
  const GemmShape& g = layout.gemm;
  if (g.trans_a || g.k == 0 || gemv_row_fits(g)) return std::nullopt;
  const HostTensor* constant_b = node.constant_input(1);
  if (g.trans_b && constant_b == nullptr) return std::nullopt;
  GemmShape shape = g;
  shape.trans_b = false;
  shape.ldb = g.n;  // B [K, N] read in place, or the transposed copy of B [N, K]
  const nn::SgemmIsa isa = sgemm_isa_for(node.cpu_isa());
  std::optional<PackedProduct> packed = plan_packed_product(shape, isa);
  if (!packed || constant_b == nullptr) return packed;
  const float* b = constant_b->as<float>();
  packed->packed_b = node.packed_weight(1, PackedLayout::kMatMulStrips, static_cast<uint8_t>(isa),
                                        g.trans_b ? 1 : 0, [&] {
                                          if (!g.trans_b) return pack_constant_b(*packed, b);
                                          const std::vector<float> b_t = transposed(b, g.n, g.k);
                                          return pack_constant_b(*packed, b_t.data());
                                        });
  return packed;
}

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
    std::optional<PackedProduct> packed = plan_packed_gemm(node, layout);
    if (packed) {
      result.workspace_bytes = packed_product_workspace_bytes(*packed);
      result.implementation = packed_product_name(*packed);
    } else if (gemv_row_fits(layout.gemm)) {
      result.implementation = "one-row dot products";
    }
    result.kernel = std::make_unique<GemmKernel<float>>(layout, activation, std::move(packed));
  }
  return result;
}

}  // namespace onepool::cpu
