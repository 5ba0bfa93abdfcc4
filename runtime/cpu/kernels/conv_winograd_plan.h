// What Winograd F(2x2, 3x3) or F(4x4, 3x3) prepares for one convolution (conv_winograd.h): the
// tile size, the block size, the workspace and the transformed, packed weights.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu::nn {

/// Positions of F(2x2, 3x3)'s 4x4 transformed tile and of F(4x4, 3x3)'s 6x6 one: one GEMM each.
constexpr int kWinogradPositions = 16;
constexpr int kWinograd4Positions = 36;

struct WinogradPlan {
  SgemmIsa isa = SgemmIsa::kPortable;
  int64_t tile = 2;  // output tile edge: 2 for F(2x2, 3x3), 4 for F(4x4, 3x3)
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t block_tiles = 0;  // tiles per block (a multiple of 32)
  // Floats from one position's V (C_in x block_tiles) to the next's, and the same for M: one
  // cache line more than the matrix, so that the positions of a tile run (written by the input
  // transform, read by the output transform) do not all fall in one set of the L1 cache, as they
  // did at a multiple of 4 KiB apart.
  int64_t v_stride = 0;
  int64_t m_stride = 0;
  int64_t part_bytes = 0;     // one block's V and M (64-byte aligned)
  int64_t parts = 1;          // workspace parts: one per thread
  int64_t phase_bytes = 0;    // a dilated conv: one phase's input and output, per part
  int64_t packed_floats = 0;  // one position's packed C_out x C_in matrix
  // AVX-512 plans whose blocks fill the GEMM's 32-wide column tiles poorly (a 14x14 or 28x28 map's
  // 49 tiles take 64 lanes): the products run on the channel-vector GEMM (sgemm_channels.h), its
  // vectors across the output channels and its runs of up to 7 tiles, the weights packed for it.
  // The same chains over C_in, so the same bits.
  bool channel_vectors = false;
  std::vector<int64_t> v_rows;  // channel_vectors: row p of a position's V at v_rows[p]
  // The positions() transformed weight matrices, packed, one after the other (the Session holds
  // them).
  std::shared_ptr<const std::vector<float>> packed;

  int64_t workspace_bytes() const { return parts * (part_bytes + phase_bytes); }
  /// Transformed tile positions: (tile + 2)^2, one GEMM each.
  int64_t positions() const { return (tile + 2) * (tile + 2); }
};

}  // namespace onepool::cpu::nn
