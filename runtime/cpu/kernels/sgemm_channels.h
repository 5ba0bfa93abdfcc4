// A GEMM for convolutions whose column tiles waste work: C[m, n] = A[m, k] * B[k, n] with the
// vectors across A's rows (output channels) instead of across B's columns (positions). Its
// AVX-512 micro-kernel holds 64 rows of C (four vectors) by up to 7 columns and broadcasts each
// column's element of B straight from the input planes:
// - no strip of B is copied (sgemm_packed copies one per column tile and block of k, which a
//   product with few rows, a stem's 64 output channels, does not amortize);
// - a 7x7 map's 49 positions run 49 columns' work (sgemm_packed's 32-wide tiles run 64);
// - a last panel of fewer than 64 rows runs only its vectors of 16 (160 rows: 64 + 64 + 32);
// - a padded band writes its valid outputs straight into Y (no wide output copied out).
//
// The columns of one call are runs of consecutive positions: a run reads B at b + offsets[p] + its
// B column on, and the runs' C columns follow one another from C column 0 (an implicit GEMM's
// padded band: B's rows plane_w wide, C's OW wide). The sums of a stretch of runs wait in a
// buffer, [column][64 rows], and leave it through 16 x 16 transposes, one vector per row of C,
// through the epilogue (sgemm_epilogue.h).
//
// Numerics: every element of C is one fused multiply-add chain over k in order 0..k-1 from 0, its
// partial sums kept in fp32 between blocks of k, then its epilogue: the bits of sgemm_packed.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/sgemm_epilogue.h"

namespace onepool::cpu::nn {

constexpr int64_t kChannelPanelRows = 64;   // rows of A (output channels) per packed panel
constexpr int64_t kChannelVectorRows = 16;  // rows of a panel per vector (AVX-512's 16 floats)
constexpr int64_t kChannelRunColumns = 7;   // the most columns one run (one micro-tile) holds

/// Floats A packed for sgemm_channels takes (whole panels, the last one zero-padded).
int64_t channel_packed_floats(int64_t m, int64_t k);

/// Packs A (m x k, row stride lda): panels of 64 rows one after another, each [k][64].
void pack_a_channels(const float* a, int64_t m, int64_t k, int64_t lda, float* packed);

/// A run of consecutive columns of B from b_column on; its C columns follow the previous run's.
struct ColumnRun {
  int64_t b_column;
  int64_t count;  // 1..kChannelRunColumns
};

/// Columns [first_column, first_column + length) cut into near-equal runs of at most
/// kChannelRunColumns (the first length % count ones one longer), written to `runs`; returns
/// their count, ceil(length / kChannelRunColumns).
int64_t cut_column_runs(int64_t first_column, int64_t length, ColumnRun* runs);

/// The runs of output rows `width` positions long whose B rows start plane_w apart (plane_w ==
/// width: one run of rows * width positions), each cut into near-equal runs of at most
/// kChannelRunColumns (8 as 4 + 4: a run of one column is a quarter as fast a column). A 7x7
/// map's rows are one run each: the 7-column tile holds 28 accumulators (one waits on the stack),
/// where runs of 4 + 3 waited on their loads (see conv_implicit.cc's kMinChannelRunColumns).
void append_column_runs(int64_t rows, int64_t width, int64_t plane_w, std::vector<ColumnRun>& runs);

struct ChannelProduct {
  const float* packed;  // A, packed by pack_a_channels
  int64_t m;            // rows of A and C
  int64_t k;
  const float* b;  // row p of B at b + offsets[p]
  const int64_t* offsets;
  const ColumnRun* runs;
  int64_t run_count;
  float* c;                      // C column 0 of row 0: the first run's
  int64_t ldc;                   // and the epilogue's residual has C's layout
  const GemmEpilogue* epilogue;  // or nullptr
};

/// Rows [first_panel * 64, min(m, end_panel * 64)) of C, on the calling thread, AVX-512 only.
void sgemm_channels(const ChannelProduct& product, int64_t first_panel, int64_t end_panel);

}  // namespace onepool::cpu::nn
