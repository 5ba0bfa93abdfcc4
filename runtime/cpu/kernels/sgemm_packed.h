// OnePool's own single-precision GEMM for convolutions: C[m, n] = A[m, k] * B[k, n], row-major,
// with A (the weights) packed into panels of `rows_per_panel` rows, k-major, stored block of k
// by block of k (see PackedA), and B (a narrow
// im2col tile, at most a few hundred columns, so its rows stay within the cache's reach) read in
// place. Micro-kernels for AVX-512 (12 x 32 tile), AVX2 + FMA (6 x 16) and a portable one
// (4 x 8, std::fma), picked by CPUID at prepare time: one binary runs on any x86-64, and
// OpenBLAS's environment settings (OPENBLAS_CORETYPE) play no part.
//
// Numerics: every element of C is one fused multiply-add chain over k in order 0..k-1, starting
// from 0. Vector width, tile edges and panels only decide which chains run together, never the
// order inside one: the same inputs give the same bits on every ISA, at every thread count and
// for every tiling of the columns.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/cpu/kernels/sgemm_epilogue.h"

namespace onepool::cpu::nn {

enum class SgemmIsa : uint8_t { kPortable, kAvx2, kAvx512 };

/// Packed weights start on a cache line (a std::vector's own storage is only 16-byte aligned): the
/// micro-kernels load whole vectors of them, and one that straddles two lines costs two (a 3x3
/// 512 -> 512 convolution on 7x7 ran 1.25x longer misaligned). Storage for packed floats holds
/// kLineFloats more than they need, and they start at line_aligned(storage).
constexpr int64_t kLineFloats = 16;

template <typename T>
T* line_aligned(T* data) {
  const auto address = reinterpret_cast<uintptr_t>(data);
  const uintptr_t line = kLineFloats * sizeof(float);
  return reinterpret_cast<T*>((address + line - 1) / line * line);
}

/// The widest micro-kernel this CPU runs.
SgemmIsa best_sgemm_isa();
/// "avx512", "avx2" or "portable", for the profiler.
const char* sgemm_isa_name(SgemmIsa isa);
/// Rows of A per packed panel (the micro-kernel's tile height) and columns per tile.
int64_t sgemm_panel_rows(SgemmIsa isa);
int64_t sgemm_tile_cols(SgemmIsa isa);
/// Lanes the AVX-512 column tiles take for `columns` columns of a product: 32-wide tiles, a last
/// one of up to 16 columns one vector wide (49 columns take 64).
int64_t avx512_column_lanes(int64_t columns);
/// Floats the packed A of an m x k matrix takes (whole panels, the last one zero-padded).
int64_t packed_a_floats(SgemmIsa isa, int64_t m, int64_t k);

/// A packed by pack_a. Layout: blocks of k (all of k up to 192, or 256 on AVX-512 cores with a
/// 48 KiB L1, else 128 deep, the last block shorter), each block holding every panel's slice of
/// it one after the other, so the product streams A from memory in long sequential runs (one
/// block of all panels at a time), not one short run per panel.
struct PackedA {
  const float* data = nullptr;
  int64_t rows = 0;  // m, as packed
  int64_t k = 0;
};

/// True when a product over k writes each element of C once, its whole chain and epilogue in one
/// store (k in one block): C may then be the epilogue's residual itself, each element's residual
/// read before that element is written. Deeper products keep partial sums in C between blocks.
bool sgemm_writes_once(SgemmIsa isa, int64_t k);

/// Packs A (m x k, row stride lda) into `packed` (packed_a_floats floats).
void pack_a(SgemmIsa isa, const float* a, int64_t m, int64_t k, int64_t lda, float* packed);

/// Packs only panels [first_panel, end_panel) of A into their places in the full layout (for
/// packing in parallel); a is the whole matrix.
void pack_a_panels(SgemmIsa isa, const float* a, int64_t m, int64_t k, int64_t lda,
                   int64_t first_panel, int64_t end_panel, float* packed);

/// Rows [first_row, first_row + m) of C = A * B on the calling thread (first_row a multiple of
/// the panel height); B is k x n with row stride ldb, C's first row is row first_row of the
/// product, m x n with row stride ldc (overwritten). With an epilogue (sgemm_epilogue.h), each
/// element is finished in registers before it is stored: its bias is epilogue->bias[i] for row i
/// of this call's C and its residual sits at the element's place in a matrix of C's layout.
void sgemm_packed_a(SgemmIsa isa, const PackedA& a, int64_t first_row, int64_t m, int64_t n,
                    const float* b, int64_t ldb, float* c, int64_t ldc,
                    const GemmEpilogue* epilogue = nullptr);

/// B (k x n, constant weights) packed once for sgemm_packed_ab: blocks of k as in PackedA, each
/// block holding every column tile's slice of it (kc rows of sgemm_tile_cols floats, the last
/// tile zero-padded), so a product reads each strip of B in place, contiguous, instead of copying
/// it out of rows n floats apart at every run.
struct PackedB {
  const float* data = nullptr;
  int64_t k = 0;
  int64_t n = 0;  // as packed
};

/// Floats the packed B of a k x n matrix takes (whole column tiles).
int64_t packed_b_floats(SgemmIsa isa, int64_t k, int64_t n);

/// Packs B (k x n, row stride ldb) into `packed` (packed_b_floats floats).
void pack_b(SgemmIsa isa, const float* b, int64_t k, int64_t n, int64_t ldb, float* packed);

/// As sgemm_packed_a over all m rows of A, for columns [first_col, first_col + n) of a packed B
/// (first_col a multiple of the tile width); c points at column first_col of C's first row.
/// The same chains as sgemm_packed_a, so the same bits.
void sgemm_packed_ab(SgemmIsa isa, const PackedA& a, int64_t m, const PackedB& b, int64_t first_col,
                     int64_t n, float* c, int64_t ldc);

/// As sgemm_packed_a, with row p of B starting at b + row_offsets[p] (an implicit GEMM: the
/// rows of a convolution's column matrix read straight from the input planes).
void sgemm_packed_a_rows(SgemmIsa isa, const PackedA& a, int64_t first_row, int64_t m, int64_t n,
                         const float* b, const int64_t* row_offsets, float* c, int64_t ldc,
                         const GemmEpilogue* epilogue = nullptr);

}  // namespace onepool::cpu::nn
