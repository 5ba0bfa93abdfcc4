// One row-major matrix product C = alpha * op(A) * op(B) + beta * C, dispatched by element type:
// float and double go to CBLAS (OpenBLAS, which threads internally); integer types go to a plain
// loop that computes C = op(A) * op(B) (integer MatMul has no alpha or beta).
//
// Callers check gemm_fits_blas() at prepare time: CBLAS takes 32-bit dims.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {

/// Dims and leading dimensions of one product; op(A) is [m,k], op(B) is [k,n], C is [m,n].
struct GemmShape {
  bool trans_a = false;
  bool trans_b = false;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t lda = 0;
  int64_t ldb = 0;
  int64_t ldc = 0;
};

/// True when every dim and leading dimension fits CBLAS's 32-bit blasint.
inline bool gemm_fits_blas(const GemmShape& s) {
  const int64_t limit = std::numeric_limits<blasint>::max();
  return s.m <= limit && s.n <= limit && s.k <= limit && s.lda <= limit && s.ldb <= limit &&
         s.ldc <= limit;
}

inline CBLAS_TRANSPOSE blas_trans(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// CBLAS rejects a leading dimension of 0 even when the matrix is empty.
inline blasint blas_ld(int64_t ld) { return static_cast<blasint>(std::max<int64_t>(ld, 1)); }

inline void sgemm_block(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
                        float* c) {
  cblas_sgemm(CblasRowMajor, blas_trans(s.trans_a), blas_trans(s.trans_b),
              static_cast<blasint>(s.m), static_cast<blasint>(s.n), static_cast<blasint>(s.k),
              alpha, a, blas_ld(s.lda), b, blas_ld(s.ldb), beta, c, blas_ld(s.ldc));
}

/// How gemm() cuts a product into blocks, one CBLAS call each: by rows when m >= n, else by
/// columns, into `count` contiguous blocks (contiguous_share). The cut follows the shape alone,
/// never the thread count: OpenBLAS rounds a block differently from the whole product (its
/// small-matrix kernels, and with OPENBLAS_CORETYPE=Haswell its tiles: 160 x 49 x 320 cut in
/// half by rows changed 2,361 of 7,840 elements), so a cut by threads made the bits depend on
/// them. Blocks hold at least kMinGemmBlock rows (columns) and 2^18 multiply-adds, at most
/// kMaxGemmBlocks of them, so that up to that many threads share a product.
struct GemmBlocks {
  bool by_rows = true;
  int64_t count = 1;
};
constexpr int64_t kMinGemmBlock = 64;
constexpr int64_t kMaxGemmBlocks = 16;
constexpr int64_t kMinGemmBlockFlops = int64_t{1} << 18;

inline GemmBlocks gemm_blocks(const GemmShape& s) {
  const bool by_rows = s.m >= s.n;
  const int64_t extent = by_rows ? s.m : s.n;
  const int64_t flops = s.m * s.n * std::max<int64_t>(s.k, 1);
  const int64_t count =
      std::min({extent / kMinGemmBlock, flops / kMinGemmBlockFlops, kMaxGemmBlocks});
  return GemmBlocks{by_rows, std::max<int64_t>(count, 1)};
}

/// C = alpha * op(A) * op(B) + beta * C on the Session's threads. OpenBLAS runs single-threaded
/// (its threaded driver allocates a job array on the heap at every call, which run() must not
/// do); the product's blocks (gemm_blocks) are shared over the threads instead, and run one after
/// another without them, so every thread count gives the same bits.
inline void gemm(const GemmShape& s, float alpha, const float* a, const float* b, float beta,
                 float* c, ThreadPool* threads = nullptr) {
  if (s.m == 0 || s.n == 0) return;
  const GemmBlocks blocks = gemm_blocks(s);
  const int64_t extent = blocks.by_rows ? s.m : s.n;
  const auto run_blocks = [&](int64_t first, int64_t end) {
    for (int64_t block = first; block < end; ++block) {
      const Share share = contiguous_share(extent, block, blocks.count);
      GemmShape part = s;
      if (blocks.by_rows) {
        part.m = share.end - share.begin;
        sgemm_block(part, alpha, s.trans_a ? a + share.begin : a + share.begin * s.lda, b, beta,
                    c + share.begin * s.ldc);
      } else {
        part.n = share.end - share.begin;
        sgemm_block(part, alpha, a, s.trans_b ? b + share.begin * s.ldb : b + share.begin, beta,
                    c + share.begin);
      }
    }
  };
  if (threads == nullptr || blocks.count == 1) {
    run_blocks(0, blocks.count);
    return;
  }
  threads->parallel_for(blocks.count, 1, run_blocks);
}

inline void gemm(const GemmShape& s, float alpha, const double* a, const double* b, float beta,
                 double* c, ThreadPool* threads = nullptr) {
  (void)threads;  // float64 products stay on one thread
  if (s.m == 0 || s.n == 0) return;
  cblas_dgemm(CblasRowMajor, blas_trans(s.trans_a), blas_trans(s.trans_b),
              static_cast<blasint>(s.m), static_cast<blasint>(s.n), static_cast<blasint>(s.k),
              alpha, a, blas_ld(s.lda), b, blas_ld(s.ldb), beta, c, blas_ld(s.ldc));
}

/// Integer product C = op(A) * op(B); wraps on overflow like ONNX Runtime (unsigned arithmetic,
/// so no undefined behaviour).
template <class T>
void integer_matmul(const GemmShape& s, const T* a, const T* b, T* c) {
  using U = std::make_unsigned_t<T>;
  for (int64_t i = 0; i < s.m; ++i) {
    T* c_row = c + i * s.ldc;
    std::fill(c_row, c_row + s.n, T{0});
    for (int64_t p = 0; p < s.k; ++p) {
      const U a_ip = static_cast<U>(s.trans_a ? a[p * s.lda + i] : a[i * s.lda + p]);
      for (int64_t j = 0; j < s.n; ++j) {
        const U b_pj = static_cast<U>(s.trans_b ? b[j * s.ldb + p] : b[p * s.ldb + j]);
        c_row[j] = static_cast<T>(static_cast<U>(c_row[j]) + a_ip * b_pj);
      }
    }
  }
}

}  // namespace onepool::cpu
