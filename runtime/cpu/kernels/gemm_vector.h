// A product with one row of A (Gemm or MatMul with M == 1: a classifier head, a decoder step)
// as dot products or row sweeps over B instead of a BLAS GEMM, which handles M == 1 poorly
// (MobileNetV2's 1280 -> 1000 head ran at 4.6 GFLOP/s). The work is reading B once, so the
// columns are split over the Session's threads. Each output is summed in a fixed order (16
// lanes, then the lanes in order, then the tail), so the bits never depend on the threads.
#pragma once

#include "runtime/cpu/kernels/gemm_blas.h"

namespace onepool::cpu {

class ThreadPool;

/// True when gemv_row handles `shape` (one row of op(A)).
inline bool gemv_row_fits(const GemmShape& shape) { return shape.m == 1 && shape.k > 0; }

/// y[j] = alpha * sum_p a[p] * op(B)[p][j] + beta * y[j] over the n columns (beta == 0: y is
/// not read). op(B) is B [K, N] (row stride ldb) or, with trans_b, B^T of B [N, K].
void gemv_row(const GemmShape& shape, float alpha, const float* a, const float* b, float beta,
              float* y, ThreadPool* threads);

}  // namespace onepool::cpu
