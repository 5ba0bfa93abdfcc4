// The channel-vector GEMM (see sgemm_channels.h).
#include "runtime/cpu/kernels/sgemm_channels.h"

#include <immintrin.h>

#include <algorithm>

namespace onepool::cpu::nn {
namespace {

// Rows of k per block: a panel's block (64 x 64 floats, 16 KB) is read by every run of a pass
// while the runs' partial sums wait in the pass's buffer. It stays in L1 beside the lines of B a
// run reads (one per step of k, in as many planes); a block of 128 (32 KB) did not, in a 48 KB L1
// (32 KB on older AVX-512 cores): with 64, ResNet-50's 1x1 reductions ran 0.86-0.93x at one
// thread and 0.90-0.97x at two, its 3x3s on 7x7 0.93-0.96x, MobileNetV2's channel-vector nodes
// 0.89-0.99x (the p50s of 30-100 runs alternated in one process; the other nodes 0.98-1.02x).
// A panel's blocks follow one another in the packing, so its weights stream from memory as one
// run.
constexpr int64_t kBlockDepth = 64;
// A k up to this deep is one block all the same: each run then starts its chain once instead of
// once a block (28 partial sums loaded and stored, the loop's start-up, a few percent of a 64-deep
// block each), and the 64 KB panel of a 256-deep product, read from L2 by each run, kept up.
// ResNet-50's k = 256 nodes (the 1x1 256 -> 64 / 128 reductions, the 1x1 256 -> 1024
// expansions on 14x14) ran 0.88-0.97x at one thread, its channel-vector nodes 0.97x in all at
// one thread and 0.985x at two, MobileNetV2's 0.99x / 1.0x, Inception's 0.997x (p50s of 60-80
// runs alternated in one process). Deeper products keep blocks of 64: one block of 256 (or 128)
// for all of k measured 1.02-1.03x longer on MobileNetV2's projections (k = 384-960 onto 64-160
// channels) and 1.04-1.07x on ResNet-50's stride-2 3x3 512 -> 512 onto 7x7.
constexpr int64_t kMaxSingleBlockDepth = 256;
// Columns whose sums one pass keeps (64 KB on the stack); more take several passes, each of which
// reads the panel's weights again (a 14x14 map's 196 positions in one).
constexpr int64_t kPassColumns = 256;
constexpr int kVectors = static_cast<int>(kChannelPanelRows / kChannelVectorRows);
constexpr int64_t kLineFloats = 16;

int64_t padded_rows(int64_t m) {
  return (m + kChannelPanelRows - 1) / kChannelPanelRows * kChannelPanelRows;
}

int64_t block_depth(int64_t k) { return k <= kMaxSingleBlockDepth ? k : kBlockDepth; }

// The B a run kRunsAhead later reads (in this block or the next): its rows, asked for one a step
// while this run multiplies. A map that the other core wrote (half of every input at two
// threads) arrives from the other core's cache, and a run reads a line of each of its kc rows.
struct RunAhead {
  const float* b = nullptr;  // B + that run's B column, or nullptr
  const int64_t* offsets = nullptr;
  int64_t rows = 0;
};
constexpr int64_t kRunsAhead = 2;

// One run of one panel over one block of k.
struct RunTile {
  const float* a;  // the panel's [kc][64] slice of the block
  int64_t kc;
  const float* b;          // B + the run's B column
  const int64_t* offsets;  // the block's rows of B
  float* partial;          // [kColumns][64]: the sums so far, and after
  bool accumulate;         // continue from partial (a later block), else start from 0
  const float* prefetch;   // lines of the next block to ask for, one a step
  int64_t prefetch_lines;
  RunAhead ahead;  // the B rows a later run reads, one a step
};

// Whether a tile's accumulators, its weight vectors and one broadcast outnumber the 32 vector
// registers (7 x 4: 28 + 4 + 1). Such a tile reads its last weight vector from L1 in each of its
// multiply-adds instead of holding it, so that every accumulator stays in a register: held, GCC
// kept one accumulator on the stack, loaded and stored at every step of k (ResNet-50's channel-
// vector convolutions 0.92-0.96x the time without that spill on a Zen 5 core, the whole model
// 0.95-0.97x at one and two threads; same bits).
template <int kColumns, int kRowVectors>
constexpr bool last_weights_from_memory() {
  return kColumns * kRowVectors + kRowVectors + 1 > 32;
}

// The accumulators stay in registers: kColumns (1..7) and kRowVectors (1..4, the panel's rows
// that exist in vectors of 16: a last panel of 32 rows multiplies no zero padding) are constants,
// so every loop unrolls. The run also asks for its share of the next block's lines, one a step
// (see multiply_pass).
template <int kColumns, int kRowVectors>
__attribute__((target("avx512f"))) void run_tile(const RunTile& t) {
  constexpr bool kLastFromMemory = last_weights_from_memory<kColumns, kRowVectors>();
  constexpr int kHeld = kLastFromMemory ? kRowVectors - 1 : kRowVectors;
  __m512 acc[kColumns][kRowVectors];
  for (int j = 0; j < kColumns; ++j) {
    for (int v = 0; v < kRowVectors; ++v) {
      acc[j][v] = t.accumulate ? _mm512_loadu_ps(t.partial + j * kChannelPanelRows + 16 * v)
                               : _mm512_setzero_ps();
    }
  }
  const float* a = t.a;
  for (int64_t p = 0; p < t.kc; ++p, a += kChannelPanelRows) {
    const float* row = t.b + t.offsets[p];
    if (p < t.prefetch_lines) __builtin_prefetch(t.prefetch + p * kLineFloats, 0, 3);
    if (p < t.ahead.rows) __builtin_prefetch(t.ahead.b + t.ahead.offsets[p], 0, 3);
    __m512 weights[kRowVectors];
    for (int v = 0; v < kHeld; ++v) {
      weights[v] = _mm512_loadu_ps(a + 16 * v);
    }
#pragma GCC unroll 7
    for (int j = 0; j < kColumns; ++j) {
      const __m512 bj = _mm512_set1_ps(row[j]);
      for (int v = 0; v < kHeld; ++v) acc[j][v] = _mm512_fmadd_ps(weights[v], bj, acc[j][v]);
      if constexpr (kLastFromMemory) {
        // An opaque copy of the address for each column: GCC would otherwise load the vector
        // once and hold it, which is the spill again. Each load folds into its multiply-add.
        const float* last = a + 16 * kHeld;
        asm volatile("" : "+r"(last));
        acc[j][kHeld] = _mm512_fmadd_ps(_mm512_loadu_ps(last), bj, acc[j][kHeld]);
      }
    }
  }
  for (int j = 0; j < kColumns; ++j) {
    for (int v = 0; v < kRowVectors; ++v) {
      _mm512_storeu_ps(t.partial + j * kChannelPanelRows + 16 * v, acc[j][v]);
    }
  }
}

template <int kRowVectors>
void run_tile_columns(int64_t columns, const RunTile& t) {
  switch (columns) {
    case 1:
      return run_tile<1, kRowVectors>(t);
    case 2:
      return run_tile<2, kRowVectors>(t);
    case 3:
      return run_tile<3, kRowVectors>(t);
    case 4:
      return run_tile<4, kRowVectors>(t);
    case 5:
      return run_tile<5, kRowVectors>(t);
    case 6:
      return run_tile<6, kRowVectors>(t);
    default:
      return run_tile<7, kRowVectors>(t);
  }
}

// A panel's rows in vectors of 16 (the last panel of m rows may hold fewer than four).
void run_tile_shape(int64_t row_vectors, int64_t columns, const RunTile& t) {
  switch (row_vectors) {
    case 1:
      return run_tile_columns<1>(columns, t);
    case 2:
      return run_tile_columns<2>(columns, t);
    case 3:
      return run_tile_columns<3>(columns, t);
    default:
      return run_tile_columns<4>(columns, t);
  }
}

// All lanes of a double vector (the masked forms below, all lanes set, compute the plain ones; the
// plain ones trip GCC 12's uninitialized-value warning, as in sgemm_epilogue.h).
constexpr __mmask8 kAllPairs = 0xFF;

// r[i] = row i of a 16 x 16 block in, column i of it out.
__attribute__((target("avx512f"))) void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // per 128-bit lane: pairs of rows interleaved
    t[i] = _mm512_mask_unpacklo_ps(r[i], kAllLanes, r[i], r[i + 1]);
    t[i + 1] = _mm512_mask_unpackhi_ps(r[i], kAllLanes, r[i], r[i + 1]);
  }
  __m512 u[16];  // u[4 q + s]: rows 4q..4q+3 of column 4 L + s in each 128-bit lane L
  for (int q = 0; q < 4; ++q) {
    const __m512d t0 = _mm512_castps_pd(t[4 * q]);
    const __m512d t1 = _mm512_castps_pd(t[4 * q + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * q + 2]);
    const __m512d t3 = _mm512_castps_pd(t[4 * q + 3]);
    u[4 * q] = _mm512_castpd_ps(_mm512_mask_unpacklo_pd(t0, kAllPairs, t0, t2));
    u[4 * q + 1] = _mm512_castpd_ps(_mm512_mask_unpackhi_pd(t0, kAllPairs, t0, t2));
    u[4 * q + 2] = _mm512_castpd_ps(_mm512_mask_unpacklo_pd(t1, kAllPairs, t1, t3));
    u[4 * q + 3] = _mm512_castpd_ps(_mm512_mask_unpackhi_pd(t1, kAllPairs, t1, t3));
  }
  for (int s = 0; s < 4; ++s) {  // column 4 L + s gathers lane L of u[s], u[4+s], u[8+s], u[12+s]
    const __m512 low01 = _mm512_mask_shuffle_f32x4(u[s], kAllLanes, u[s], u[4 + s], 0x44);
    const __m512 high01 = _mm512_mask_shuffle_f32x4(u[s], kAllLanes, u[s], u[4 + s], 0xEE);
    const __m512 low23 = _mm512_mask_shuffle_f32x4(u[8 + s], kAllLanes, u[8 + s], u[12 + s], 0x44);
    const __m512 high23 = _mm512_mask_shuffle_f32x4(u[8 + s], kAllLanes, u[8 + s], u[12 + s], 0xEE);
    r[s] = _mm512_mask_shuffle_f32x4(low01, kAllLanes, low01, low23, 0x88);
    r[4 + s] = _mm512_mask_shuffle_f32x4(low01, kAllLanes, low01, low23, 0xDD);
    r[8 + s] = _mm512_mask_shuffle_f32x4(high01, kAllLanes, high01, high23, 0x88);
    r[12 + s] = _mm512_mask_shuffle_f32x4(high01, kAllLanes, high01, high23, 0xDD);
  }
}

// The finished sums of a pass (`partials`, [column][64], `columns` of them from C column
// `c_column` on) into rows [row0, row0 + rows) of C, through the epilogue when there is one.
__attribute__((target("avx512f"))) void store_pass(const ChannelProduct& p, const float* partials,
                                                   int64_t row0, int64_t rows, int64_t c_column,
                                                   int64_t columns) {
  const GemmEpilogue* e = p.epilogue;
  for (int64_t g = 0; g < columns; g += 16) {
    const int64_t valid = std::min<int64_t>(16, columns - g);
    const auto mask = static_cast<__mmask16>((1u << valid) - 1u);
    for (int v = 0; v < kVectors && 16 * v < rows; ++v) {
      __m512 block[16];
      for (int j = 0; j < 16; ++j) {
        block[j] = j < valid ? _mm512_loadu_ps(partials + (g + j) * kChannelPanelRows + 16 * v)
                             : _mm512_setzero_ps();
      }
      transpose16(block);
      const int64_t first = row0 + 16 * v;
      const TileEpilogue finish{e != nullptr && e->bias != nullptr ? e->bias + first : nullptr,
                                nullptr, e != nullptr ? &e->activation : nullptr};
      for (int64_t i = 0; i < 16 && 16 * v + i < rows; ++i) {
        const int64_t at = (first + i) * p.ldc + c_column + g;
        __m512 out = block[i];
        if (e != nullptr) {
          out = finish_avx512(finish, i, e->residual != nullptr ? e->residual + at : nullptr, mask,
                              out);
        }
        _mm512_mask_storeu_ps(p.c + at, mask, out);
      }
    }
  }
}

// What run r of the pass [first, end) prefetches: the run kRunsAhead later in this block (from
// k0), or, past the pass's end, among the first runs of the next block (from next_k0; none past
// k).
RunAhead run_ahead(const ChannelProduct& p, int64_t first, int64_t end, int64_t r, int64_t k0,
                   int64_t next_k0) {
  int64_t later = r + kRunsAhead;
  if (later >= end) {
    later -= end - first;
    k0 = next_k0;
  }
  if (later >= end || k0 >= p.k) return RunAhead{};
  return RunAhead{p.b + p.runs[later].b_column, p.offsets + k0,
                  std::min(block_depth(p.k), p.k - k0)};
}

// Runs [first, end) of one panel (their columns at most kPassColumns), all of k, into `partials`.
// While a block runs, its runs share out the asking for the next block's lines (the panel's next
// block, or the next panel's first), one line a step: a network's weights stream from memory
// (ResNet's 3x3 512 -> 512 filters, 9.4 MB, on a 7x7 map), and a block asked for only by its own
// first run arrived in a burst while that run waited, then nothing came while the others ran.
void multiply_pass(const ChannelProduct& p, int64_t panel, int64_t first, int64_t end,
                   float* partials) {
  const int64_t depth = block_depth(p.k);
  const int64_t block_lines = depth * kChannelPanelRows / kLineFloats;
  const int64_t share = (block_lines + (end - first) - 1) / std::max<int64_t>(end - first, 1);
  const int64_t rows = std::min(kChannelPanelRows, p.m - panel * kChannelPanelRows);
  const int64_t row_vectors = (rows + kChannelVectorRows - 1) / kChannelVectorRows;
  for (int64_t k0 = 0; k0 < p.k; k0 += depth) {
    const int64_t kc = std::min(depth, p.k - k0);
    const float* a = p.packed + (panel * p.k + k0) * kChannelPanelRows;
    const float* next = a + kc * kChannelPanelRows;  // a hint past the last panel is harmless
    float* partial = partials;
    for (int64_t r = first; r < end; ++r) {
      const int64_t lines = std::clamp<int64_t>(block_lines - (r - first) * share, 0, share);
      const RunAhead ahead = run_ahead(p, first, end, r, k0, k0 + kc);
      const RunTile tile{a,
                         kc,
                         p.b + p.runs[r].b_column,
                         p.offsets + k0,
                         partial,
                         k0 > 0,
                         next + (r - first) * share * kLineFloats,
                         std::min(lines, kc),
                         ahead};
      run_tile_shape(row_vectors, p.runs[r].count, tile);
      partial += p.runs[r].count * kChannelPanelRows;
    }
  }
}

void run_panel(const ChannelProduct& p, int64_t panel) {
  alignas(64) float partials[kPassColumns * kChannelPanelRows];
  const int64_t row0 = panel * kChannelPanelRows;
  const int64_t rows = std::min(kChannelPanelRows, p.m - row0);
  int64_t c_column = 0;
  for (int64_t first = 0; first < p.run_count;) {
    int64_t end = first;
    int64_t columns = 0;
    while (end < p.run_count && columns + p.runs[end].count <= kPassColumns) {
      columns += p.runs[end++].count;
    }
    if (p.k <= 0) std::fill(partials, partials + columns * kChannelPanelRows, 0.0f);
    multiply_pass(p, panel, first, end, partials);
    store_pass(p, partials, row0, rows, c_column, columns);
    c_column += columns;
    first = end;
  }
}

}  // namespace

int64_t channel_packed_floats(int64_t m, int64_t k) { return padded_rows(m) * k; }

void pack_a_channels(const float* a, int64_t m, int64_t k, int64_t lda, float* packed) {
  const int64_t all_rows = padded_rows(m);
  for (int64_t panel = 0; panel < all_rows / kChannelPanelRows; ++panel) {
    float* slice = packed + panel * kChannelPanelRows * k;
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t i = 0; i < kChannelPanelRows; ++i) {
        const int64_t row = panel * kChannelPanelRows + i;
        slice[p * kChannelPanelRows + i] = row < m ? a[row * lda + p] : 0.0f;
      }
    }
  }
}

int64_t cut_column_runs(int64_t first_column, int64_t length, ColumnRun* runs) {
  const int64_t count = (length + kChannelRunColumns - 1) / kChannelRunColumns;
  int64_t column = first_column;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t run = length / count + (r < length % count ? 1 : 0);
    runs[r] = ColumnRun{column, run};
    column += run;
  }
  return count;
}

void append_column_runs(int64_t rows, int64_t width, int64_t plane_w,
                        std::vector<ColumnRun>& runs) {
  const bool flat = plane_w == width;
  const int64_t lines = flat ? std::min<int64_t>(rows, 1) : rows;
  const int64_t length = flat ? rows * width : width;
  const int64_t count = (length + kChannelRunColumns - 1) / kChannelRunColumns;
  for (int64_t line = 0; line < lines; ++line) {
    const size_t at = runs.size();
    runs.resize(at + static_cast<size_t>(count));
    cut_column_runs(line * plane_w, length, runs.data() + at);
  }
}

void sgemm_channels(const ChannelProduct& product, int64_t first_panel, int64_t end_panel) {
  for (int64_t panel = first_panel; panel < end_panel; ++panel) run_panel(product, panel);
}

}  // namespace onepool::cpu::nn
