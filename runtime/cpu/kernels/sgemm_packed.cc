// The packed-A GEMM and its micro-kernels (see sgemm_packed.h).
#include "runtime/cpu/kernels/sgemm_packed.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "runtime/cpu/kernels/avx512_lanes.h"

namespace onepool::cpu::nn {
namespace {

// One micro-tile: a packed panel of A against `cols` columns of B. Row p of B starts at
// b + p * ldb, or at b + offsets[p] when offsets is set (an implicit GEMM's rows).
struct Tile {
  const float* panel;  // [k][rows_per_panel]
  const float* b;
  int64_t ldb;
  const int64_t* offsets;
  float* c;
  int64_t ldc;
  int64_t k;
  int64_t rows;     // valid rows of the panel (the rest is padding)
  int64_t cols;     // valid columns, at most the kernel's width
  bool accumulate;  // continue the chains from C (a later block of k), else start from 0
  // Ask for B's rows ahead: the first panel against a strip of B read in place or packed (the
  // later ones find it in L1, and a copied strip is there from the start).
  bool prefetch_b;
  const TileEpilogue* epilogue;  // on the last block of k of a product with one, else nullptr
};

constexpr int kAvx512Rows = 12;
constexpr int64_t kAvx512Cols = 32;
constexpr int kAvx2Rows = 6;
constexpr int64_t kAvx2Cols = 16;
constexpr int kPortableRows = 4;
constexpr int64_t kKBlock = 128;
// A k up to this deep is one block: a second, short block (ResNet's 7x7 stem has k = 147, 128 and
// then 19) reads and writes every tile of C again for a few multiply-adds a tile.
constexpr int64_t kMaxSingleBlock = 192;
// On AVX-512 cores whose L1 holds a 256-deep strip of B and slice of A (32 + 12 KiB), k up to 256
// is one block: ResNet-50's stride-2 1x1 downsample onto 28x28 (k = 256, im2col) ran 0.86-0.90x
// at two threads, each element's partial sum no longer stored and loaded back between two
// blocks. Cores with a 32 KiB L1 (Skylake-SP, Zen 4) keep 192.
constexpr int64_t kMaxSingleBlockWideL1 = 256;
constexpr long kWideL1Bytes = 48 << 10;
// The packed A a product keeps in L2 across its column tiles: all of it when it fits (a
// transformer's 128 activation rows up to k = 512), else spans of its blocks of k.
constexpr int64_t kASpanBytes = int64_t{256} << 10;
// Products this shallow (one block) copy their strips a chunk at a time (run_chunked_product):
// MobileNetV2's 1x1 expansions at two threads, k = 24 on 56x56 0.27 -> 0.23 ms, k = 32 on 28x28
// 0.13 -> 0.09 ms (alternated profiles); at k = 96 on 14x14 (two strips a chunk) it measured
// 1.03-1.05x slower in one order and faster in the other, so deeper products keep one strip.
constexpr int64_t kMostChunkedDepth = 64;
constexpr int64_t kPortableCols = 8;
constexpr int64_t kMaxTileCols = kAvx512Cols;

// Rows of B a micro-kernel asks the cache for ahead of the row it multiplies. A strip of a packed
// B (a MatMul's weights) comes from memory or the last-level cache on its first panel; without the
// hint the kernel waited on it: 12 x 32 tiles of a 128 x 768 x 3072 product ran at 133 GFLOP/s on
// one AVX-512 core, 180 with it (200 with B in L1). A hint never faults, so one past the end of B
// is harmless.
constexpr int64_t kPrefetchRows = 16;
// And the packed A this many steps of k ahead: a convolution's weights stream from memory once the
// network's weights outgrow the caches (eight 3x3 512 -> 512 convolutions on 7x7 maps: 14.1 ->
// 12.6 ms at one thread). The panels of a block of k are contiguous, so this runs on into the
// next panel's.
constexpr int64_t kPrefetchDepth = 64;

// Asks for the `lines` 64-byte lines from `address` on (a hint: no effect on the results).
inline void prefetch_row(const float* address, int lines) {
  for (int line = 0; line < lines; ++line) {
    __builtin_prefetch(address + line * 16, 0, 3);
  }
}

// Before the multiply-adds, asks for the lines the tile's end touches, so that they have arrived
// by then: its rows of C (for writing; a tile's rows sit a plane apart in a convolution's output,
// short runs across hundreds of rows that the hardware prefetcher does not follow, and each store
// waited on its line: a 64 -> 256 1x1 convolution on 56x56 with its data in L3 ran at 120 GFLOP/s
// on one AVX-512 core, 160 with this and the strip prefetch below) and its residual.
inline void prefetch_tile_end(const Tile& t, int lines) {
  for (int64_t i = 0; !t.accumulate && i < t.rows; ++i) {
    for (int line = 0; line < lines; ++line) __builtin_prefetch(t.c + i * t.ldc + line * 16, 1, 3);
  }
  if (t.epilogue == nullptr || t.epilogue->residual == nullptr) return;
  for (int64_t i = 0; i < t.rows; ++i) prefetch_row(t.epilogue->residual + i * t.ldc, lines);
}

// The accumulators stay in registers: every loop over rows has a constant trip count (a loop to
// t.rows would make the compiler keep them on the stack and store them at every k). kRows (4, 8
// or 12) rows of the panel are computed: a last panel of 64 output channels has 4 valid rows of
// 12, and the full kernel would spend two thirds of its multiplies on padding. kVectors (1 or 2)
// vectors of 16 columns: a tile of at most 16 columns (the last of 196, a 14x14 map) takes one,
// not two of which one is all padding. Each element's chain is the same whichever kernel runs it.
// kFull: every column valid (32 or 16), so the loop loads B unmasked: with masked loads it reloaded
// both masks into k registers at every step, on the port the multiply-adds need (a 120 x 128 x 32
// product in L1: 156 -> 185 GFLOP/s on one AVX-512 core).
template <bool kOffsets, int kRows, int kVectors, bool kFull>
__attribute__((target("avx512f"))) void tile_avx512(const Tile& t) {
  static_assert(kRows > 0 && kRows <= kAvx512Rows && (kVectors == 1 || kVectors == 2));
  const __mmask16 mask0 = first_lanes(t.cols);
  const __mmask16 mask1 = first_lanes(t.cols - 16);
  __m512 acc0[kRows];
  __m512 acc1[kRows];
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) {
    const bool load = t.accumulate && i < t.rows;
    acc0[i] = load ? _mm512_maskz_loadu_ps(mask0, t.c + i * t.ldc) : _mm512_setzero_ps();
    if constexpr (kVectors == 2) {
      acc1[i] = load ? _mm512_maskz_loadu_ps(mask1, t.c + i * t.ldc + 16) : _mm512_setzero_ps();
    }
  }
  prefetch_tile_end(t, kVectors);
  const float* a = t.panel;
  const float* b = t.b;
  for (int64_t p = 0; p < t.k; ++p, a += kAvx512Rows, b += t.ldb) {
    const float* row = kOffsets ? t.b + t.offsets[p] : b;
    const __m512 b0 = kFull ? _mm512_loadu_ps(row) : _mm512_maskz_loadu_ps(mask0, row);
    const __m512 b1 = kVectors == 1 ? b0
                      : kFull       ? _mm512_loadu_ps(row + 16)
                                    : _mm512_maskz_loadu_ps(mask1, row + 16);
    if constexpr (!kOffsets) {
      if (t.prefetch_b) prefetch_row(row + kPrefetchRows * t.ldb, kVectors);
    }
    __builtin_prefetch(a + kPrefetchDepth * kAvx512Rows, 0, 3);
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
      if constexpr (kVectors == 2) acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
    }
  }
  if (t.epilogue != nullptr) {
    const TileEpilogue& e = *t.epilogue;
#pragma GCC unroll 12
    for (int i = 0; i < kRows; ++i) {
      if (i >= t.rows) break;
      const float* r = e.residual != nullptr ? e.residual + i * t.ldc : nullptr;
      acc0[i] = finish_avx512(e, i, r, mask0, acc0[i]);
      if constexpr (kVectors == 2) {
        acc1[i] = finish_avx512(e, i, r != nullptr ? r + 16 : nullptr, mask1, acc1[i]);
      }
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < kRows; ++i) {
    if (i >= t.rows) break;
    _mm512_mask_storeu_ps(t.c + i * t.ldc, mask0, acc0[i]);
    if constexpr (kVectors == 2) _mm512_mask_storeu_ps(t.c + i * t.ldc + 16, mask1, acc1[i]);
  }
}

// kFull: all 16 columns valid (plain loads and stores); else masked ones, which never touch
// memory past the last column.
template <bool kFull, bool kOffsets>
__attribute__((target("avx2,fma"))) void tile_avx2(const Tile& t) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(t.cols)), lane);
  const __m256i mask1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(t.cols) - 8), lane);
  __m256 acc0[kAvx2Rows];
  __m256 acc1[kAvx2Rows];
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Rows; ++i) {
    const bool load = t.accumulate && i < t.rows;
    const float* c = t.c + i * t.ldc;
    acc0[i] = !load   ? _mm256_setzero_ps()
              : kFull ? _mm256_loadu_ps(c)
                      : _mm256_maskload_ps(c, mask0);
    acc1[i] = !load   ? _mm256_setzero_ps()
              : kFull ? _mm256_loadu_ps(c + 8)
                      : _mm256_maskload_ps(c + 8, mask1);
  }
  prefetch_tile_end(t, 1);
  const float* a = t.panel;
  const float* b = t.b;
  for (int64_t p = 0; p < t.k; ++p, a += kAvx2Rows, b += t.ldb) {
    const float* row = kOffsets ? t.b + t.offsets[p] : b;
    const __m256 b0 = kFull ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, mask0);
    const __m256 b1 = kFull ? _mm256_loadu_ps(row + 8) : _mm256_maskload_ps(row + 8, mask1);
    if constexpr (!kOffsets) {
      if (t.prefetch_b) prefetch_row(row + kPrefetchRows * t.ldb, 1);
    }
    __builtin_prefetch(a + kPrefetchDepth * kAvx2Rows, 0, 3);
#pragma GCC unroll 6
    for (int i = 0; i < kAvx2Rows; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
    }
  }
  if (t.epilogue != nullptr) {
    const TileEpilogue& e = *t.epilogue;
    const bool residual = e.residual != nullptr;
#pragma GCC unroll 6
    for (int i = 0; i < kAvx2Rows; ++i) {
      if (i >= t.rows) break;
      __m256 r0 = _mm256_setzero_ps();
      __m256 r1 = _mm256_setzero_ps();
      if (residual) {
        const float* r = e.residual + i * t.ldc;
        r0 = kFull ? _mm256_loadu_ps(r) : _mm256_maskload_ps(r, mask0);
        r1 = kFull ? _mm256_loadu_ps(r + 8) : _mm256_maskload_ps(r + 8, mask1);
      }
      acc0[i] = finish_avx2(e, i, residual, r0, acc0[i]);
      acc1[i] = finish_avx2(e, i, residual, r1, acc1[i]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < kAvx2Rows; ++i) {
    if (i >= t.rows) break;
    float* c = t.c + i * t.ldc;
    if (kFull) {
      _mm256_storeu_ps(c, acc0[i]);
      _mm256_storeu_ps(c + 8, acc1[i]);
    } else {
      _mm256_maskstore_ps(c, mask0, acc0[i]);
      _mm256_maskstore_ps(c + 8, mask1, acc1[i]);
    }
  }
}

void tile_portable(const Tile& t) {
  float acc[kPortableRows][kPortableCols] = {};
  for (int64_t i = 0; t.accumulate && i < t.rows; ++i) {
    std::copy(t.c + i * t.ldc, t.c + i * t.ldc + t.cols, acc[i]);
  }
  const float* a = t.panel;
  const float* b = t.b;
  for (int64_t p = 0; p < t.k; ++p, a += kPortableRows, b += t.ldb) {
    const float* row = t.offsets != nullptr ? t.b + t.offsets[p] : b;
    for (int i = 0; i < kPortableRows; ++i) {
      for (int64_t j = 0; j < t.cols; ++j) acc[i][j] = std::fma(a[i], row[j], acc[i][j]);
    }
  }
  for (int64_t i = 0; t.epilogue != nullptr && i < t.rows; ++i) {
    const float* r = t.epilogue->residual;
    for (int64_t j = 0; j < t.cols; ++j) {
      acc[i][j] =
          finish_element(*t.epilogue, i, r != nullptr ? r + i * t.ldc + j : nullptr, acc[i][j]);
    }
  }
  for (int64_t i = 0; i < t.rows; ++i) std::copy(acc[i], acc[i] + t.cols, t.c + i * t.ldc);
}

// The narrowest AVX-512 kernel that covers the tile's valid rows.
template <bool kOffsets, int kVectors, bool kFull>
void run_tile_avx512_vectors(const Tile& tile) {
  if (tile.rows <= 4) {
    tile_avx512<kOffsets, 4, kVectors, kFull>(tile);
  } else if (tile.rows <= 8) {
    tile_avx512<kOffsets, 8, kVectors, kFull>(tile);
  } else {
    tile_avx512<kOffsets, kAvx512Rows, kVectors, kFull>(tile);
  }
}

template <bool kOffsets>
void run_tile_avx512(const Tile& tile) {
  if (tile.cols == kAvx512Cols) {
    run_tile_avx512_vectors<kOffsets, 2, true>(tile);
  } else if (tile.cols == 16) {
    run_tile_avx512_vectors<kOffsets, 1, true>(tile);
  } else if (tile.cols < 16) {
    run_tile_avx512_vectors<kOffsets, 1, false>(tile);
  } else {
    run_tile_avx512_vectors<kOffsets, 2, false>(tile);
  }
}

int64_t tile_rows(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAvx512:
      return kAvx512Rows;
    case SgemmIsa::kAvx2:
      return kAvx2Rows;
    case SgemmIsa::kPortable:
      return kPortableRows;
  }
  return kPortableRows;
}

int64_t tile_cols(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAvx512:
      return kAvx512Cols;
    case SgemmIsa::kAvx2:
      return kAvx2Cols;
    case SgemmIsa::kPortable:
      return kPortableCols;
  }
  return kPortableCols;
}

void run_tile(SgemmIsa isa, const Tile& tile) {
  switch (isa) {
    case SgemmIsa::kAvx512:
      if (tile.offsets != nullptr) {
        run_tile_avx512<true>(tile);
      } else {
        run_tile_avx512<false>(tile);
      }
      return;
    case SgemmIsa::kAvx2: {
      const bool full = tile.cols == kAvx2Cols;
      if (tile.offsets != nullptr) {
        full ? tile_avx2<true, true>(tile) : tile_avx2<false, true>(tile);
      } else {
        full ? tile_avx2<true, false>(tile) : tile_avx2<false, false>(tile);
      }
      return;
    }
    case SgemmIsa::kPortable:
      tile_portable(tile);
      return;
  }
}

// The strip copies ask for the same rows' columns this many strips ahead: each row of a strip is
// a separate short run (a plane apart in an implicit GEMM), which the hardware prefetcher does not
// follow (the 56x56 product above with 256 input channels: 115 -> 140-160 GFLOP/s with its data
// in L3). Past B's last column the hint asks for lines nobody reads, which is harmless.
constexpr int64_t kStripsAhead = 2;

// A strip of B: `depth` rows of `width` columns, row p at b + offsets[p] (or b + p * ldb),
// copied into `strip`. A full-width row moves as two vectors of the micro-kernel's ISA (through
// std::copy's run-time length every row was a library call, which cost a 72-row product a fifth
// of its speed; a baseline build's fixed-size copy is eight 16-byte moves).
struct StripSource {
  const float* b;
  const int64_t* offsets;  // or nullptr: rows ldb apart
  int64_t ldb;
  const float* row(int64_t p) const { return offsets != nullptr ? b + offsets[p] : b + p * ldb; }
};

__attribute__((target("avx512f"))) void copy_strip_avx512(const StripSource& source, int64_t depth,
                                                          float* strip) {
  for (int64_t p = 0; p < depth; ++p, strip += kAvx512Cols) {
    const float* row = source.row(p);
    prefetch_row(row + kStripsAhead * kAvx512Cols, 2);
    _mm512_storeu_ps(strip, _mm512_loadu_ps(row));
    _mm512_storeu_ps(strip + 16, _mm512_loadu_ps(row + 16));
  }
}

__attribute__((target("avx"))) void copy_strip_avx2(const StripSource& source, int64_t depth,
                                                    float* strip) {
  for (int64_t p = 0; p < depth; ++p, strip += kAvx2Cols) {
    const float* row = source.row(p);
    prefetch_row(row + kStripsAhead * kAvx2Cols, 1);
    _mm256_storeu_ps(strip, _mm256_loadu_ps(row));
    _mm256_storeu_ps(strip + 8, _mm256_loadu_ps(row + 8));
  }
}

// Rows of the strip are `stride` (the ISA's tile width) floats apart.
void copy_strip(SgemmIsa isa, const StripSource& source, int64_t depth, int64_t width,
                int64_t stride, float* strip) {
  if (isa == SgemmIsa::kAvx512 && width == kAvx512Cols) {
    return copy_strip_avx512(source, depth, strip);
  }
  if (isa == SgemmIsa::kAvx2 && width == kAvx2Cols) return copy_strip_avx2(source, depth, strip);
  for (int64_t p = 0; p < depth; ++p) {
    const float* row = source.row(p);
    std::copy(row, row + width, strip + p * stride);
  }
}

// The deepest k one block holds on `isa` (see kMaxSingleBlockWideL1). The L1 size is the
// machine's: read once per process (asking the CPU traps to the hypervisor in a virtual machine),
// so packing and every product agree.
int64_t max_single_block(SgemmIsa isa) {
  static const bool wide_l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE) >= kWideL1Bytes;
  return isa == SgemmIsa::kAvx512 && wide_l1 ? kMaxSingleBlockWideL1 : kMaxSingleBlock;
}

// Rows of k per block: all of k when it is at most max_single_block deep, else kKBlock (the last
// block shorter). Packing and products agree through this one rule.
int64_t block_depth(SgemmIsa isa, int64_t k) {
  return k <= max_single_block(isa) ? std::max<int64_t>(k, 1) : kKBlock;
}

int64_t padded_rows(SgemmIsa isa, int64_t m) {
  const int64_t rows = tile_rows(isa);
  return (m + rows - 1) / rows * rows;
}

// Where the product reads B: rows ldb apart, rows at offsets, or strips of a packed B.
struct BSource {
  const float* b = nullptr;
  int64_t ldb = 0;
  const int64_t* offsets = nullptr;
  const PackedB* packed = nullptr;
  int64_t first_col = 0;  // of the packed B
};

// The epilogue of the tile at (row, col) of a product's C.
TileEpilogue tile_epilogue(const GemmEpilogue& e, int64_t row, int64_t col, int64_t ldc) {
  return TileEpilogue{e.bias != nullptr ? e.bias + row : nullptr,
                      e.residual != nullptr ? e.residual + row * ldc + col : nullptr,
                      &e.activation};
}

// C = epilogue(0): a product over k = 0.
void finish_empty_product(const GemmEpilogue* epilogue, int64_t m, int64_t n, float* c,
                          int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    if (epilogue == nullptr) continue;
    const TileEpilogue e = tile_epilogue(*epilogue, i, 0, ldc);
    for (int64_t j = 0; j < n; ++j) {
      c[i * ldc + j] =
          finish_element(e, 0, e.residual != nullptr ? e.residual + j : nullptr, c[i * ldc + j]);
    }
  }
}

// Rows [first_row, first_row + m) of C = A * B over column tiles (outside) and panels of A
// (inside): one strip of B serves every panel of A while it is in cache.

// A product of one block of k whose strips are copied (B read in place, more than one panel):
// the strips of a chunk of column tiles are copied together into `chunk`, then each panel of A runs
// along the whole chunk. Each panel then writes its rows of C (and reads a residual's) in runs of
// the chunk's width instead of one tile's: a 1x1 convolution's output rows sit a plane apart, and
// with every panel inside each tile the tiles of a strip wrote 128-byte runs into all of C's rows
// at once, more streams than the hardware prefetcher follows. Same tiles, same bits.
void run_chunked_product(SgemmIsa isa, const PackedA& a, int64_t first_row, int64_t m, int64_t n,
                         const BSource& source, float* c, int64_t ldc, const GemmEpilogue* epilogue,
                         float* chunk) {
  const int64_t k = a.k;
  const int64_t rows = tile_rows(isa);
  const int64_t cols = tile_cols(isa);
  const int64_t strips = std::max<int64_t>(1, kMaxSingleBlock * kMaxTileCols / (k * cols));
  for (int64_t first_col = 0; first_col < n; first_col += strips * cols) {
    const int64_t end_col = std::min(n, first_col + strips * cols);
    for (int64_t col = first_col; col < end_col; col += cols) {
      const StripSource strip_source{source.b + col, source.offsets, source.ldb};
      copy_strip(isa, strip_source, k, std::min(cols, n - col), cols,
                 chunk + (col - first_col) / cols * k * cols);
    }
    for (int64_t row = 0; row < m; row += rows) {
      for (int64_t col = first_col; col < end_col; col += cols) {
        TileEpilogue finish;
        if (epilogue != nullptr) finish = tile_epilogue(*epilogue, row, col, ldc);
        const Tile tile{a.data + (first_row + row) * k,
                        chunk + (col - first_col) / cols * k * cols,
                        cols,
                        nullptr,
                        c + row * ldc + col,
                        ldc,
                        k,
                        std::min(rows, m - row),
                        std::min(cols, n - col),
                        false,
                        false,
                        epilogue != nullptr ? &finish : nullptr};
        run_tile(isa, tile);
      }
    }
  }
}

void run_product(SgemmIsa isa, const PackedA& a, int64_t first_row, int64_t m, int64_t n,
                 const BSource& source, float* c, int64_t ldc, const GemmEpilogue* epilogue) {
  const float* const b = source.b;
  const int64_t ldb = source.ldb;
  const int64_t* const offsets = source.offsets;
  if (m <= 0 || n <= 0) return;
  const int64_t k = a.k;
  if (k <= 0) return finish_empty_product(epilogue, m, n, c, ldc);
  const int64_t rows = tile_rows(isa);
  const int64_t cols = tile_cols(isa);
  const int64_t all_rows = padded_rows(isa, a.rows);
  // With more than one panel to serve, each strip of B is first copied into one contiguous
  // block on the stack: its rows sit far apart in B (a MatMul's weights N floats apart, an
  // implicit GEMM's rows across the input planes), which the panels would each walk again.
  const bool copy_strips = m > rows && source.packed == nullptr;
  const int64_t packed_cols =
      source.packed != nullptr ? (source.packed->n + cols - 1) / cols * cols : 0;
  alignas(64) float strip[kMaxSingleBlockWideL1 * kMaxTileCols];
  if (copy_strips && k <= kMostChunkedDepth) {
    return run_chunked_product(isa, a, first_row, m, n, source, c, ldc, epilogue, strip);
  }
  const int64_t depth = block_depth(isa, k);
  // Spans of A's blocks of k that fit kASpanBytes outside, column tiles inside them, then the
  // blocks of the span: a block's strip of B (depth rows of one column tile) stays in L1 while
  // every panel of A runs against it, the span's A stays in L2 for every column tile, and later
  // blocks continue the chains from the tile's C while it is still in L1. (With every block
  // outside, a 128 x 768 x 3072 product wrote and read back all of C, 1.5 MiB, six times.)
  const int64_t span = std::max<int64_t>(
      depth, kASpanBytes / (all_rows * static_cast<int64_t>(sizeof(float))) / depth * depth);
  for (int64_t span_k = 0; span_k < k; span_k += span) {
    for (int64_t col = 0; col < n; col += cols) {
      const int64_t width = std::min(cols, n - col);
      for (int64_t k0 = span_k; k0 < std::min(k, span_k + span); k0 += depth) {
        const int64_t kc = std::min(depth, k - k0);
        const float* block = a.data + k0 * all_rows;  // every panel's slice of this block
        const float* strip_b = nullptr;
        int64_t strip_ldb = ldb;
        const int64_t* strip_offsets = offsets != nullptr ? offsets + k0 : nullptr;
        if (source.packed != nullptr) {
          strip_b = source.packed->data + k0 * packed_cols + (source.first_col + col) * kc;
          strip_ldb = cols;
        } else {
          strip_b = offsets != nullptr ? b + col : b + k0 * ldb + col;
        }
        if (copy_strips) {
          copy_strip(isa, StripSource{strip_b, strip_offsets, ldb}, kc, width, cols, strip);
          strip_b = strip;
          strip_ldb = cols;
          strip_offsets = nullptr;
        }
        const bool last_block = k0 + kc >= k;
        for (int64_t row = 0; row < m; row += rows) {
          TileEpilogue finish;
          if (last_block && epilogue != nullptr) finish = tile_epilogue(*epilogue, row, col, ldc);
          const Tile tile{block + (first_row + row) * kc,
                          strip_b,
                          strip_ldb,
                          strip_offsets,
                          c + row * ldc + col,
                          ldc,
                          kc,
                          std::min(rows, m - row),
                          width,
                          k0 > 0,
                          row == 0 && !copy_strips,
                          last_block && epilogue != nullptr ? &finish : nullptr};
          run_tile(isa, tile);
        }
      }
    }
  }
}

}  // namespace

SgemmIsa best_sgemm_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return SgemmIsa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SgemmIsa::kAvx2;
  return SgemmIsa::kPortable;
}

const char* sgemm_isa_name(SgemmIsa isa) {
  switch (isa) {
    case SgemmIsa::kAvx512:
      return "avx512";
    case SgemmIsa::kAvx2:
      return "avx2";
    case SgemmIsa::kPortable:
      return "portable";
  }
  return "portable";
}

int64_t sgemm_panel_rows(SgemmIsa isa) { return tile_rows(isa); }
bool sgemm_writes_once(SgemmIsa isa, int64_t k) { return k <= max_single_block(isa); }
int64_t sgemm_tile_cols(SgemmIsa isa) { return tile_cols(isa); }

int64_t avx512_column_lanes(int64_t columns) {
  const int64_t tail = columns % kAvx512Cols;
  return columns / kAvx512Cols * kAvx512Cols + (tail == 0                 ? 0
                                                : tail <= kAvx512Cols / 2 ? kAvx512Cols / 2
                                                                          : kAvx512Cols);
}

int64_t packed_a_floats(SgemmIsa isa, int64_t m, int64_t k) { return padded_rows(isa, m) * k; }

namespace {

// Four rows of A (a: the first one's element at the slice's first k, row stride lda) into their
// columns of a panel's slice (`rows` floats per step of k): 4 x 4 transposes, then the last steps
// of k one at a time. The same floats as the element-by-element copy, 3-4x sooner (the products
// of a transformer's activations pack A at every run).
void pack_four_rows(const float* a, int64_t lda, int64_t kc, int64_t rows, float* slice) {
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    __m128 r0 = _mm_loadu_ps(a + p);
    __m128 r1 = _mm_loadu_ps(a + lda + p);
    __m128 r2 = _mm_loadu_ps(a + 2 * lda + p);
    __m128 r3 = _mm_loadu_ps(a + 3 * lda + p);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(slice + p * rows, r0);
    _mm_storeu_ps(slice + (p + 1) * rows, r1);
    _mm_storeu_ps(slice + (p + 2) * rows, r2);
    _mm_storeu_ps(slice + (p + 3) * rows, r3);
  }
  for (; p < kc; ++p) {
    for (int64_t i = 0; i < 4; ++i) slice[p * rows + i] = a[i * lda + p];
  }
}

// Rows [first, end) of a panel's slice, element by element; rows from `m` on are zero padding.
void pack_rows(const float* a, int64_t lda, int64_t kc, int64_t rows, int64_t first_row, int64_t m,
               int64_t first, int64_t end, float* slice) {
  for (int64_t i = first; i < end; ++i) {
    const int64_t row = first_row + i;
    for (int64_t p = 0; p < kc; ++p) slice[p * rows + i] = row < m ? a[row * lda + p] : 0.0f;
  }
}

}  // namespace

void pack_a_panels(SgemmIsa isa, const float* a, int64_t m, int64_t k, int64_t lda,
                   int64_t first_panel, int64_t end_panel, float* packed) {
  const int64_t rows = tile_rows(isa);
  const int64_t all_rows = padded_rows(isa, m);
  const int64_t depth = block_depth(isa, k);
  for (int64_t k0 = 0; k0 < k; k0 += depth) {
    const int64_t kc = std::min(depth, k - k0);
    for (int64_t panel = first_panel; panel < end_panel; ++panel) {
      float* slice = packed + k0 * all_rows + panel * rows * kc;
      const int64_t first_row = panel * rows;
      int64_t i = 0;
      for (; i + 4 <= rows && first_row + i + 4 <= m; i += 4) {
        pack_four_rows(a + (first_row + i) * lda + k0, lda, kc, rows, slice + i);
      }
      pack_rows(a + k0, lda, kc, rows, first_row, m, i, rows, slice);
    }
  }
}

void pack_a(SgemmIsa isa, const float* a, int64_t m, int64_t k, int64_t lda, float* packed) {
  pack_a_panels(isa, a, m, k, lda, 0, padded_rows(isa, m) / tile_rows(isa), packed);
}

void sgemm_packed_a(SgemmIsa isa, const PackedA& a, int64_t first_row, int64_t m, int64_t n,
                    const float* b, int64_t ldb, float* c, int64_t ldc,
                    const GemmEpilogue* epilogue) {
  run_product(isa, a, first_row, m, n, BSource{b, ldb}, c, ldc, epilogue);
}

int64_t packed_b_floats(SgemmIsa isa, int64_t k, int64_t n) {
  const int64_t cols = tile_cols(isa);
  return (n + cols - 1) / cols * cols * k;
}

void pack_b(SgemmIsa isa, const float* b, int64_t k, int64_t n, int64_t ldb, float* packed) {
  const int64_t cols = tile_cols(isa);
  const int64_t all_cols = (n + cols - 1) / cols * cols;
  const int64_t depth = block_depth(isa, k);
  for (int64_t k0 = 0; k0 < k; k0 += depth) {
    const int64_t kc = std::min(depth, k - k0);
    for (int64_t col = 0; col < all_cols; col += cols) {
      float* strip = packed + k0 * all_cols + col * kc;
      const int64_t width = std::min(cols, n - col);
      for (int64_t p = 0; p < kc; ++p) {
        const float* row = b + (k0 + p) * ldb + col;
        std::copy(row, row + width, strip + p * cols);
        std::fill(strip + p * cols + width, strip + (p + 1) * cols, 0.0f);
      }
    }
  }
}

void sgemm_packed_ab(SgemmIsa isa, const PackedA& a, int64_t m, const PackedB& b, int64_t first_col,
                     int64_t n, float* c, int64_t ldc) {
  run_product(isa, a, 0, m, n, BSource{nullptr, 0, nullptr, &b, first_col}, c, ldc, nullptr);
}

void sgemm_packed_a_rows(SgemmIsa isa, const PackedA& a, int64_t first_row, int64_t m, int64_t n,
                         const float* b, const int64_t* row_offsets, float* c, int64_t ldc,
                         const GemmEpilogue* epilogue) {
  run_product(isa, a, first_row, m, n, BSource{b, 0, row_offsets}, c, ldc, epilogue);
}

}  // namespace onepool::cpu::nn
