// Winograd F(2x2, 3x3) and F(4x4, 3x3) convolution (see conv_winograd.h).
#include "runtime/cpu/kernels/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "runtime/cpu/kernels/conv_winograd_transforms.h"
#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/sgemm_channels.h"

namespace onepool::cpu::nn {
namespace {

// One block's V and M: about this many bytes, so that they stay in a core's L2 cache.
constexpr int64_t kBlockBudgetBytes = int64_t{512} << 10;
constexpr int64_t kBlockTileMultiple = 32;  // the widest GEMM column tile
constexpr int64_t kMaxBlockTiles = 256;
constexpr int64_t kPositionPadFloats = 16;  // one cache line (see WinogradPlan::v_stride)
constexpr int64_t kMinChannels = 8;
// A map of at least this many 2x2 tiles takes Winograd whatever its channels.
constexpr int64_t kMinTiles = 32;
// A smaller one (7x7 and 8x8 maps: 16 tiles; fewer keep the implicit GEMM) streams 16 transformed
// weight matrices, 16/9 of the weights, for little work: it pays with at least kMinSmallMapDepth
// input channels. ResNet-18's three 512 -> 512 convolutions on 7x7 took 0.97-1.05 instead of
// 1.29-1.33 ms at one thread and 0.54-0.63 instead of 0.69-0.76 at two (`bench --profile`, three
// alternated rounds); whole models, two Sessions alternated in one process (p50s of 25-100 runs,
// four rounds): ResNet-18 0.945-0.953x at one thread, 0.953-0.976x at two, ResNet-50 0.988-0.999x
// / 0.991-0.997x, U-Net (its 8x8 bottleneck, 256 -> 512 and 512 -> 512) 0.97x at one thread
// and 1.00x at two. Inception's 160 -> 320 and 192 -> 384 on 7x7 ran 0.87x at one thread but 1.00x
// and 1.09x at two (one block: the transforms and products each split over the threads, too little
// work a part); the rule may not follow the thread count, which would make the bits depend on it.
// (Measured before the channel-vector products, the 512-channel ones were no faster.)
constexpr int64_t kMinSmallMapTiles = 16;
constexpr int64_t kMinSmallMapDepth = 256;
// F(4x4, 3x3) where a tile row holds at least this many tiles and its products' columns (36 a
// tile of 16 outputs) come to at most 4/5 of F(2x2, 3x3)'s (16 a tile of 4). Its transforms cost
// more per output and run a tile row's tiles side by side in 16 lanes: on 14x14 maps (4 tiles a
// row, 7 for F(2x2, 3x3)) ResNet-50's and Inception's convolutions ran 0.87-1.18x as long as on
// F(2x2, 3x3), on 28x28 and 56x56 maps 0.72-0.85x.
constexpr int64_t kMinRowTiles4 = 6;
constexpr int64_t kTile4CostNumerator = 4;
constexpr int64_t kTile4CostDenominator = 5;
constexpr int64_t kMaxChannels = int64_t{1} << 16;
// One-thread AVX-512 plans whose blocks fill less of the column tiles' lanes than this, with at
// least kMinChannelVectorDepth input channels, run their products on the channel vectors
// (WinogradPlan::channel_vectors). At one thread ResNet-50's and ResNet-18's F(2x2, 3x3) 256 ->
// 256 on 14x14 (49 tiles in 64 lanes) ran 0.89-0.96x; with 96-160 input channels (Inception's
// 28x28 and 14x14 ones) 1.05-1.25x, the sums' transposes then a larger part of the work; at two
// threads no faster (0.98-1.08x: the 4 MB of transformed weights such a node streams a run are
// what it waits on there). p50s of 40-80 runs alternated in one process.
constexpr double kColumnLaneUse = 0.85;
constexpr int64_t kMinChannelVectorDepth = 256;
constexpr int64_t kAlignment = 64;
constexpr auto kFloat = static_cast<int64_t>(sizeof(float));

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// A dilated convolution runs phase by phase (conv_winograd_run.cc): the largest phase's output
// counts.
struct PhaseSize {
  int64_t h = 0;
  int64_t w = 0;
};
PhaseSize largest_phase(const WindowGeometry& g) {
  return PhaseSize{(g.output[1] + g.dilation[1] - 1) / g.dilation[1],
                   (g.output[2] + g.dilation[2] - 1) / g.dilation[2]};
}

// V = B^T d B for the tiles of `run` in input channel `channel`, stored at their slots of the
// 16 matrices. False when an input read is NaN, Inf or above 2^40.
bool transform_input_run(const WinogradImage& image, const TileRun& run, int64_t channel,
                         float* v) {
  const WindowGeometry& g = image.g;
  const float* plane = image.x + channel * g.input_size();
  float buffers[4][kWinogradRowFloats];
  float d[4][4][kWinogradLanes];
  int bad = 0;
  for (int r = 0; r < 4; ++r) {
    const float* row = winograd_input_row(g, plane, 2 * run.ty - g.pad_begin[1] + r,
                                          2 * run.tx - g.pad_begin[2], buffers[r]);
    for (int j = 0; j < 4; ++j) {
      for (int64_t l = 0; l < kWinogradLanes; ++l) d[r][j][l] = row[2 * l + j];
      for (int64_t l = 0; l < kWinogradLanes; ++l) bad |= within_winograd_limit(d[r][j][l]) ? 0 : 1;
    }
  }
  float t[4][4][kWinogradLanes];  // B^T d
  for (int j = 0; j < 4; ++j) {
    for (int64_t l = 0; l < kWinogradLanes; ++l) {
      t[0][j][l] = d[0][j][l] - d[2][j][l];
      t[1][j][l] = d[1][j][l] + d[2][j][l];
      t[2][j][l] = d[2][j][l] - d[1][j][l];
      t[3][j][l] = d[1][j][l] - d[3][j][l];
    }
  }
  const int64_t stride = image.plan.v_stride;  // between positions
  float* out = v + channel * image.plan.block_tiles + run.slot;
  // (B^T d) B, written straight to the 16 matrices (a copy loop would become a memcpy call).
  const int64_t lanes = run.count;
  for (int i = 0; i < 4; ++i) {
    float* v0 = out + (4 * i) * stride;
    float* v1 = out + (4 * i + 1) * stride;
    float* v2 = out + (4 * i + 2) * stride;
    float* v3 = out + (4 * i + 3) * stride;
    for (int64_t l = 0; l < lanes; ++l) v0[l] = t[i][0][l] - t[i][2][l];
    for (int64_t l = 0; l < lanes; ++l) v1[l] = t[i][1][l] + t[i][2][l];
    for (int64_t l = 0; l < lanes; ++l) v2[l] = t[i][2][l] - t[i][1][l];
    for (int64_t l = 0; l < lanes; ++l) v3[l] = t[i][1][l] - t[i][3][l];
  }
  return bad == 0;
}

// Input channels [first, end) of `block`; false when an input read is NaN, Inf or above 2^40.
ONEPOOL_ISA_CLONES bool transform_input_portable(const WinogradImage& image, const TileBlock& block,
                                                 int64_t first, int64_t end) {
  return for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    return transform_input_run(image, run, channel, block.v);
  });
}

bool transform_input(const WinogradImage& image, const TileBlock& block, int64_t first,
                     int64_t end) {
  const bool avx512 = image.plan.isa == SgemmIsa::kAvx512;
  if (image.plan.tile == 4) {
    return avx512 ? transform4_input_avx512(image, block, first, end)
                  : transform4_input_portable(image, block, first, end);
  }
  return avx512 ? transform_input_avx512(image, block, first, end)
                : transform_input_portable(image, block, first, end);
}

// Position e's packed weights. They start on a cache line (the storage holds kLineFloats more):
// a large std::vector's floats sit 16 bytes past one, and the channel vectors' weight loads would
// each straddle two lines.
const float* position_weights(const WinogradPlan& plan, int64_t e) {
  return line_aligned(plan.packed->data()) + e * plan.packed_floats;
}

// The most runs a block's tiles cut into for the channel-vector GEMM.
constexpr int64_t kMaxBlockRuns = (kMaxBlockTiles + kChannelRunColumns - 1) / kChannelRunColumns;

// M_e = U_e V_e for positions [first, end) of `block` on the channel-vector GEMM.
void multiply_channel_vectors(const WinogradPlan& plan, const TileBlock& block, int64_t first,
                              int64_t end) {
  ColumnRun runs[kMaxBlockRuns];
  const int64_t run_count = cut_column_runs(0, block.count, runs);
  const int64_t panels = (plan.out_channels + kChannelPanelRows - 1) / kChannelPanelRows;
  for (int64_t e = first; e < end; ++e) {
    const ChannelProduct product{position_weights(plan, e),
                                 plan.out_channels,
                                 plan.in_channels,
                                 block.v + e * plan.v_stride,
                                 plan.v_rows.data(),
                                 runs,
                                 run_count,
                                 block.m + e * plan.m_stride,
                                 plan.block_tiles,
                                 nullptr};
    sgemm_channels(product, 0, panels);
  }
}

// M_e = U_e V_e for positions [first, end) of `block`.
void multiply(const WinogradPlan& plan, const TileBlock& block, int64_t first, int64_t end) {
  if (plan.channel_vectors) return multiply_channel_vectors(plan, block, first, end);
  const int64_t tb = plan.block_tiles;
  for (int64_t e = first; e < end; ++e) {
    const PackedA u{position_weights(plan, e), plan.out_channels, plan.in_channels};
    sgemm_packed_a(plan.isa, u, 0, plan.out_channels, block.count, block.v + e * plan.v_stride, tb,
                   block.m + e * plan.m_stride, tb);
  }
}

// Y = A^T m A + bias, then the activation, for the tiles of `run` in output channel `channel`.
void transform_output_run(const WinogradImage& image, const TileRun& run, int64_t channel,
                          const float* m) {
  const WindowGeometry& g = image.g;
  const int64_t stride = image.plan.m_stride;  // between positions
  const float* in = m + channel * image.plan.block_tiles + run.slot;
  float t[2][4][kWinogradLanes];  // A^T m
  for (int j = 0; j < 4; ++j) {
    const float* m0 = in + j * stride;
    const float* m1 = in + (4 + j) * stride;
    const float* m2 = in + (8 + j) * stride;
    const float* m3 = in + (12 + j) * stride;
    for (int64_t l = 0; l < kWinogradLanes; ++l) {
      t[0][j][l] = m0[l] + m1[l] + m2[l];
      t[1][j][l] = m1[l] - m2[l] - m3[l];
    }
  }
  const float bias = image.bias != nullptr ? image.bias[channel] : 0.0f;
  const int64_t out_w = g.output[2];
  const int64_t x0 = 2 * run.tx;
  const int64_t columns = std::min(2 * run.count, out_w - x0);
  for (int i = 0; i < 2; ++i) {
    const int64_t oy = 2 * run.ty + i;
    if (oy >= g.output[1]) break;
    // Two columns per tile, written straight to Y, then the residual and the activation over
    // them in place.
    const int64_t at = channel * g.output_size() + oy * out_w + x0;
    float* dst = image.y + at;
    if (columns == 2 * kWinogradLanes) {
      for (int64_t l = 0; l < kWinogradLanes; ++l) {
        dst[2 * l] = t[i][0][l] + t[i][1][l] + t[i][2][l] + bias;
        dst[2 * l + 1] = t[i][1][l] - t[i][2][l] - t[i][3][l] + bias;
      }
    } else {
      for (int64_t l = 0; 2 * l < columns; ++l) {
        dst[2 * l] = t[i][0][l] + t[i][1][l] + t[i][2][l] + bias;
        if (2 * l + 1 < columns) dst[2 * l + 1] = t[i][1][l] - t[i][2][l] - t[i][3][l] + bias;
      }
    }
    if (image.residual != nullptr) add_residual(dst, image.residual + at, columns);
    apply_activation(image.activation, dst, columns);
  }
}

// Output channels [first, end) of `block`.
ONEPOOL_ISA_CLONES void transform_output_portable(const WinogradImage& image,
                                                  const TileBlock& block, int64_t first,
                                                  int64_t end) {
  for_each_channel_run(image, block, first, end, [&](int64_t channel, const TileRun& run) {
    transform_output_run(image, run, channel, block.m);
    return true;
  });
}

void transform_output(const WinogradImage& image, const TileBlock& block, int64_t first,
                      int64_t end) {
  const bool avx512 = image.plan.isa == SgemmIsa::kAvx512;
  if (image.plan.tile == 4) {
    return avx512 ? transform4_output_avx512(image, block, first, end)
                  : transform4_output_portable(image, block, first, end);
  }
  return avx512 ? transform_output_avx512(image, block, first, end)
                : transform_output_portable(image, block, first, end);
}

TileBlock block_at(const WinogradPlan& plan, int64_t first, int64_t count, std::byte* part) {
  auto* v = reinterpret_cast<float*>(part);
  const int64_t v_bytes = aligned(plan.positions() * plan.v_stride * kFloat);
  auto* m = reinterpret_cast<float*>(part + v_bytes);
  return TileBlock{first, count, v, m};
}

// Tiles [first, end) on the calling thread, block by block in `part`. False (at the first block
// that has one) when an input read is NaN, Inf or above 2^40.
bool run_tiles(const WinogradImage& image, int64_t first, int64_t end, std::byte* part) {
  const WinogradPlan& plan = image.plan;
  for (int64_t tile = first; tile < end; tile += plan.block_tiles) {
    const TileBlock block = block_at(plan, tile, std::min(plan.block_tiles, end - tile), part);
    if (!transform_input(image, block, 0, plan.in_channels)) return false;
    multiply(plan, block, 0, plan.positions());
    transform_output(image, block, 0, plan.out_channels);
  }
  return true;
}

// A map of fewer blocks than threads: each block in turn, every phase split over the threads.
bool run_blocks_shared(const WinogradImage& image, std::byte* workspace, ThreadPool& threads) {
  const WinogradPlan& plan = image.plan;
  for (int64_t tile = 0; tile < image.tiles(); tile += plan.block_tiles) {
    const TileBlock block =
        block_at(plan, tile, std::min(plan.block_tiles, image.tiles() - tile), workspace);
    std::atomic<bool> finite{true};
    threads.parallel_for(plan.in_channels, 1, [&](int64_t begin, int64_t end) {
      if (!transform_input(image, block, begin, end)) finite.store(false);
    });
    if (!finite.load()) return false;
    threads.parallel_for(plan.positions(), 1,
                         [&](int64_t begin, int64_t end) { multiply(plan, block, begin, end); });
    threads.parallel_for(plan.out_channels, 1, [&](int64_t begin, int64_t end) {
      transform_output(image, block, begin, end);
    });
  }
  return true;
}

// A map of at least as many blocks as threads: each thread a contiguous range of tiles.
bool run_parts(const WinogradImage& image, int64_t parts, std::byte* workspace,
               ThreadPool& threads) {
  const WinogradPlan& plan = image.plan;
  const int64_t tiles = image.tiles();
  std::atomic<bool> finite{true};
  threads.parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const Share run = contiguous_share(tiles, part, parts);
      if (!run_tiles(image, run.begin, run.end, workspace + part * plan.part_bytes)) {
        finite.store(false);
      }
    }
  });
  return finite.load();
}

// Blocks of `block_tiles` tiles: the strides between positions and one part's bytes. M's last
// run reads up to kWinogradLanes floats past its last tile (lanes it then discards).
void set_block_tiles(WinogradPlan& plan, int64_t block_tiles) {
  const int64_t positions = plan.positions();
  plan.block_tiles = block_tiles;
  plan.v_rows.resize(static_cast<size_t>(plan.in_channels));
  for (int64_t p = 0; p < plan.in_channels; ++p)
    plan.v_rows[static_cast<size_t>(p)] = p * block_tiles;
  plan.v_stride = plan.in_channels * block_tiles + kPositionPadFloats;
  plan.m_stride = plan.out_channels * block_tiles + kPositionPadFloats;
  plan.part_bytes = aligned(positions * plan.v_stride * kFloat) +
                    aligned((positions * plan.m_stride + kWinogradLanes) * kFloat);
}

// Lanes the blocks of a part's `count` tiles take.
int64_t part_lanes(const WinogradPlan& plan, int64_t count) {
  return count / plan.block_tiles * plan.block_tiles +
         avx512_column_lanes(count % plan.block_tiles);
}

// The fraction of the column tiles' lanes that hold a tile, over the blocks an undilated map of
// `tiles` runs in (run_winograd_undilated: the parts' contiguous shares, or the map's blocks).
double column_lane_use(const WinogradPlan& plan, int64_t tiles) {
  const int64_t blocks = (tiles + plan.block_tiles - 1) / plan.block_tiles;
  int64_t lanes = 0;
  if (blocks >= plan.parts) {
    for (int64_t part = 0; part < plan.parts; ++part) {
      const Share share = contiguous_share(tiles, part, plan.parts);
      lanes += part_lanes(plan, share.end - share.begin);
    }
  } else {
    lanes = part_lanes(plan, tiles);
  }
  return lanes == 0 ? 1.0 : static_cast<double>(tiles) / static_cast<double>(lanes);
}

// Tiles of an undilated map's output at tile edge `tile`.
int64_t winograd_tiles(const WindowGeometry& g, int64_t tile) {
  return (g.output[1] + tile - 1) / tile * ((g.output[2] + tile - 1) / tile);
}

// Tiles per block that the budget gives blocks of `positions` positions.
int64_t budget_block_tiles(int64_t positions, int64_t in_channels, int64_t out_channels) {
  const int64_t tile_bytes = positions * (in_channels + out_channels) * kFloat;
  return std::clamp(kBlockBudgetBytes / tile_bytes / kBlockTileMultiple * kBlockTileMultiple,
                    kBlockTileMultiple, kMaxBlockTiles);
}

// One workspace part of F(2x2, 3x3) with these channels. F(4x4, 3x3) asks for exactly the workspace
// F(2x2, 3x3) asks for with the same channels (its blocks of tiles as many as fit), and prefers its
// own budget's blocks where those are larger: a convolution's workspace then never depends on which
// tile its map takes, so a smaller shape of a DynamicSession (F(2x2, 3x3) on a 16x16 map) fits the
// workspace planned at the top of its range (F(4x4, 3x3) on 32x32). Its 36 positions of 32 tiles
// take 2.25x F(2x2, 3x3)'s bytes (Inception's pool at two threads: 4.11 MiB on F(2x2, 3x3), 5.32
// with 32-tile blocks everywhere, 4.11 as planned); where the plan grants no more, Inception's
// 28x28 convolutions ran 1.06-1.07x as long (blocks of 14-16 tiles instead of 32).
int64_t tile2_part_bytes(int64_t in_channels, int64_t out_channels) {
  WinogradPlan plan;
  plan.tile = 2;
  plan.in_channels = in_channels;
  plan.out_channels = out_channels;
  set_block_tiles(plan, budget_block_tiles(kWinogradPositions, in_channels, out_channels));
  return plan.part_bytes;
}

// An F(4x4, 3x3) plan in parts of exactly `part_bytes`: blocks of as many tiles as fit (at most
// kMaxBlockTiles; a part holds at least one tile, F(2x2, 3x3)'s part at least 14).
void fit_tile4_blocks(WinogradPlan& plan, int64_t part_bytes) {
  int64_t block_tiles = kMaxBlockTiles;
  for (; block_tiles > 1; --block_tiles) {
    set_block_tiles(plan, block_tiles);
    if (plan.part_bytes <= part_bytes) break;
  }
  set_block_tiles(plan, block_tiles);
  plan.part_bytes = part_bytes;
}

// U = G g G^T for one 3x3 filter, in double (rounded once), G = [1 0 0; .5 .5 .5; .5 -.5 .5;
// 0 0 1].
void transform_filter(const float* filter, float* u, int64_t stride) {
  double t[4][3];  // G g
  for (int j = 0; j < 3; ++j) {
    const double g0 = filter[j];
    const double g1 = filter[3 + j];
    const double g2 = filter[6 + j];
    t[0][j] = g0;
    t[1][j] = 0.5 * (g0 + g1 + g2);
    t[2][j] = 0.5 * (g0 - g1 + g2);
    t[3][j] = g2;
  }
  for (int i = 0; i < 4; ++i) {
    const double values[4] = {t[i][0], 0.5 * (t[i][0] + t[i][1] + t[i][2]),
                              0.5 * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
    for (int j = 0; j < 4; ++j) u[(4 * i + j) * stride] = static_cast<float>(values[j]);
  }
}

}  // namespace

int64_t winograd_tile(const WindowGeometry& g) {
  const PhaseSize phase = largest_phase(g);
  const int64_t tiles2 = ((phase.h + 1) / 2) * ((phase.w + 1) / 2);
  const int64_t tiles4 = ((phase.h + 3) / 4) * ((phase.w + 3) / 4);
  const bool f4_pays = kWinograd4Positions * tiles4 * kTile4CostDenominator <=
                       kWinogradPositions * tiles2 * kTile4CostNumerator;
  return (phase.w + 3) / 4 >= kMinRowTiles4 && f4_pays ? 4 : 2;
}

bool winograd_fits(const WindowGeometry& g, int64_t group, int64_t in_channels,
                   int64_t out_channels) {
  const PhaseSize phase = largest_phase(g);
  const int64_t tiles = (phase.h + 1) / 2 * ((phase.w + 1) / 2);
  const bool enough_tiles =
      tiles >= kMinTiles || (tiles >= kMinSmallMapTiles && in_channels >= kMinSmallMapDepth);
  return g.spatial_rank == 2 && group == 1 && g.kernel[1] == 3 && g.kernel[2] == 3 &&
         g.stride[1] == 1 && g.stride[2] == 1 && in_channels >= kMinChannels &&
         out_channels >= kMinChannels && in_channels <= kMaxChannels &&
         out_channels <= kMaxChannels && enough_tiles;
}

std::optional<WinogradPlan> plan_winograd(const WindowGeometry& g, SgemmIsa isa,
                                          const float* weights, int64_t in_channels,
                                          int64_t out_channels, int threads,
                                          const WinogradWeightSharing& share) {
  const int64_t filters = in_channels * out_channels;
  if (!std::all_of(weights, weights + filters * 9, within_winograd_limit)) return std::nullopt;
  WinogradPlan plan;
  plan.isa = isa;
  plan.tile = winograd_tile(g);
  plan.in_channels = in_channels;
  plan.out_channels = out_channels;
  const int64_t positions = plan.positions();
  set_block_tiles(plan, budget_block_tiles(positions, in_channels, out_channels));
  // F(4x4, 3x3)'s least workspace is F(2x2, 3x3)'s (see tile2_part_bytes): where
  // its budget's blocks take less, blocks of as many tiles as that holds.
  const int64_t tile2_bytes = tile2_part_bytes(in_channels, out_channels);
  if (plan.tile == 4 && plan.part_bytes < tile2_bytes) fit_tile4_blocks(plan, tile2_bytes);
  plan.parts = std::max(threads, 1);
  plan.phase_bytes = winograd_phase_bytes(g, in_channels, out_channels);
  plan.channel_vectors = isa == SgemmIsa::kAvx512 && plan.parts == 1 && g.dilation[1] == 1 &&
                         g.dilation[2] == 1 && in_channels >= kMinChannelVectorDepth &&
                         column_lane_use(plan, winograd_tiles(g, plan.tile)) < kColumnLaneUse;
  plan.packed_floats = plan.channel_vectors ? channel_packed_floats(out_channels, in_channels)
                                            : packed_a_floats(isa, out_channels, in_channels);
  const auto pack = [&]() -> std::shared_ptr<const std::vector<float>> {
    std::vector<float> transformed(static_cast<size_t>(positions * filters));
    for (int64_t filter = 0; filter < filters; ++filter) {
      float* u = transformed.data() + filter;
      if (plan.tile == 4) {
        transform4_filter(weights + filter * 9, u, filters);
      } else {
        transform_filter(weights + filter * 9, u, filters);
      }
    }
    auto packed = std::make_shared<std::vector<float>>(
        static_cast<size_t>(positions * plan.packed_floats + kLineFloats));
    for (int64_t e = 0; e < positions; ++e) {
      const float* u = transformed.data() + e * filters;
      float* slot = line_aligned(packed->data()) + e * plan.packed_floats;
      if (plan.channel_vectors) {
        pack_a_channels(u, out_channels, in_channels, in_channels, slot);
      } else {
        pack_a(isa, u, out_channels, in_channels, in_channels, slot);
      }
    }
    return packed;
  };
  const PackedLayout layout =
      plan.channel_vectors ? PackedLayout::kWinogradChannelPanels : PackedLayout::kWinogradPanels;
  plan.packed = share ? share(layout, pack) : pack();
  return plan;
}

std::optional<WinogradPlan> winograd_least_plan(const WinogradPlan& plan) {
  if (plan.tile != 4) return std::nullopt;
  WinogradPlan least = plan;
  fit_tile4_blocks(least, tile2_part_bytes(plan.in_channels, plan.out_channels));
  if (least.part_bytes >= plan.part_bytes) return std::nullopt;  // `plan` is the least
  return least;
}

bool run_winograd_on_one_thread(const WinogradImage& image, std::byte* part) {
  return run_tiles(image, 0, image.tiles(), part);
}

bool run_winograd_undilated(const WinogradImage& image, std::byte* workspace, ThreadPool& threads) {
  const WinogradPlan& plan = image.plan;
  const int64_t blocks = (image.tiles() + plan.block_tiles - 1) / plan.block_tiles;
  const int64_t thread_count = threads.thread_count();
  return blocks >= thread_count
             ? run_parts(image, std::min(plan.parts, thread_count), workspace, threads)
             : run_blocks_shared(image, workspace, threads);
}

}  // namespace onepool::cpu::nn
