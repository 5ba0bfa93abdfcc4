// ConvTranspose with kernel == stride as kH packed GEMMs (see conv_transpose_taps.h).

#include "runtime/cpu/kernels/conv_transpose_taps.h"

#include <algorithm>
#include <numeric>

#include "runtime/cpu/kernels/conv_implicit.h"
#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu::nn {
namespace {

// Columns per tile: whole X rows, about as many as the packed GEMM runs fastest on (conv.cc's
// kTileColumns) while a tile's rows of X (C x 256 floats) stay in the core's cache.
constexpr int64_t kTileColumns = 256;
// Product rows per chunk, at most: a chunk's buffer (chunk x 256 floats, 192 KiB) stays in L2
// between the GEMM that writes it and the interleaving that reads it.
constexpr int64_t kChunkRowsTarget = 192;
constexpr int64_t kMaxTapKernel = 16;

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Rows of one kernel row's product: (m, kw) pairs.
int64_t product_rows(const TransposeTapsPlan& plan) { return plan.out_channels * plan.kernel_w; }

// The columns of the widest tile: whole X rows, at least one.
int64_t widest_tile(const TransposeTapsPlan& plan) { return std::max(kTileColumns, plan.x_width); }

// The product of kernel row kh packed: rows m * kW + kw, columns c, A[row][c] = W[c, m, kh, kw].
void pack_kernel_row(const TransposeTapsPlan& plan, const float* weights, int64_t kh,
                     std::vector<float>& rows, float* packed) {
  const int64_t m_count = plan.out_channels;
  const int64_t taps = plan.kernel_h * plan.kernel_w;
  const int64_t depth = plan.in_channels;
  rows.assign(static_cast<size_t>(product_rows(plan) * depth), 0.0f);
  for (int64_t c = 0; c < depth; ++c) {
    for (int64_t m = 0; m < m_count; ++m) {
      const float* tap_row = weights + (c * m_count + m) * taps + kh * plan.kernel_w;
      for (int64_t kw = 0; kw < plan.kernel_w; ++kw) {
        rows[static_cast<size_t>((m * plan.kernel_w + kw) * depth + c)] = tap_row[kw];
      }
    }
  }
  pack_a(plan.isa, rows.data(), product_rows(plan), depth, depth, packed);
}

std::shared_ptr<const std::vector<float>> pack_weights(const TransposeTapsPlan& plan,
                                                       const float* weights) {
  auto packed = std::make_shared<std::vector<float>>(
      static_cast<size_t>(plan.kernel_h * plan.packed_floats_kh + kLineFloats));
  float* start = line_aligned(packed->data());
  std::vector<float> rows;
  for (int64_t kh = 0; kh < plan.kernel_h; ++kh) {
    pack_kernel_row(plan, weights, kh, rows, start + kh * plan.packed_floats_kh);
  }
  return packed;
}

// out[iw * 2 + kw] = rows[kw][iw] + bias for kW == 2, the common case (vectorized as interleaved
// stores).
ONEPOOL_ISA_CLONES void interleave_two(const float* first, const float* second, float bias,
                                       int64_t width, float* out) {
  for (int64_t iw = 0; iw < width; ++iw) {
    out[2 * iw] = first[iw] + bias;
    out[2 * iw + 1] = second[iw] + bias;
  }
}

// out[iw * taps + kw] = row kw's [iw] + bias, rows `stride` floats apart.
void interleave_any(const float* rows, int64_t stride, int64_t taps, float bias, int64_t width,
                    float* out) {
  for (int64_t kw = 0; kw < taps; ++kw) {
    const float* row = rows + kw * stride;
    for (int64_t iw = 0; iw < width; ++iw) out[iw * taps + kw] = row[iw] + bias;
  }
}

// Where one work item is: an image, a tile of X rows, a kernel row and a chunk of product rows.
struct TapItem {
  int64_t image;
  int64_t first_x_row;
  int64_t x_rows;
  int64_t kh;
  int64_t first_product_row;
  int64_t product_rows;
};

class TapsRunner {
 public:
  TapsRunner(const TransposeTapsPlan& plan, const float* x, const float* bias, float* y)
      : plan_(plan), x_(x), bias_(bias), y_(y), packed_(line_aligned(plan.packed->data())) {
    const int64_t x_rows = plan.x_depth * plan.x_height;
    tiles_ = (x_rows + plan.tile_rows - 1) / plan.tile_rows;
    chunks_ = (product_rows(plan) + plan.chunk_rows - 1) / plan.chunk_rows;
  }

  int64_t item_count() const { return plan_.batch * tiles_ * plan_.kernel_h * chunks_; }

  // Items are numbered image-major, then tile, kernel row and chunk: a thread's contiguous run
  // reads one tile's X rows for all its products.
  TapItem item(int64_t index) const {
    TapItem item{};
    const int64_t chunk = index % chunks_;
    index /= chunks_;
    item.kh = index % plan_.kernel_h;
    index /= plan_.kernel_h;
    const int64_t tile = index % tiles_;
    item.image = index / tiles_;
    const int64_t x_rows = plan_.x_depth * plan_.x_height;
    item.first_x_row = tile * plan_.tile_rows;
    item.x_rows = std::min(plan_.tile_rows, x_rows - item.first_x_row);
    item.first_product_row = chunk * plan_.chunk_rows;
    item.product_rows = std::min(plan_.chunk_rows, product_rows(plan_) - item.first_product_row);
    return item;
  }

  void run(const TapItem& item, float* buffer) const {
    const int64_t plane = plan_.x_depth * plan_.x_height * plan_.x_width;
    const int64_t columns = item.x_rows * plan_.x_width;
    const float* b = x_ + item.image * plan_.in_channels * plane + item.first_x_row * plan_.x_width;
    const PackedA weights{packed_ + item.kh * plan_.packed_floats_kh, product_rows(plan_),
                          plan_.in_channels};
    sgemm_packed_a(plan_.isa, weights, item.first_product_row, item.product_rows, columns, b, plane,
                   buffer, columns);
    scatter(item, buffer, columns);
  }

 private:
  // The buffer's rows (m, kw) into Y's rows ih * kH + kh, interleaved over kw.
  void scatter(const TapItem& item, const float* buffer, int64_t columns) const {
    const int64_t kw_count = plan_.kernel_w;
    const int64_t y_width = plan_.x_width * kw_count;
    const int64_t y_height = plan_.x_height * plan_.kernel_h;
    const int64_t y_plane = plan_.x_depth * y_height * y_width;
    const int64_t first_m = item.first_product_row / kw_count;
    const int64_t m_count = item.product_rows / kw_count;
    for (int64_t local_m = 0; local_m < m_count; ++local_m) {
      const int64_t m = first_m + local_m;
      const float bias = bias_ == nullptr ? 0.0f : bias_[m];
      float* y_plane_start = y_ + (item.image * plan_.out_channels + m) * y_plane;
      const float* rows = buffer + local_m * kw_count * columns;
      for (int64_t r = 0; r < item.x_rows; ++r) {
        const int64_t x_row = item.first_x_row + r;
        const int64_t depth = x_row / plan_.x_height;
        const int64_t y_row =
            depth * y_height + (x_row % plan_.x_height) * plan_.kernel_h + item.kh;
        float* out = y_plane_start + y_row * y_width;
        const float* in = rows + r * plan_.x_width;
        if (kw_count == 2) {
          interleave_two(in, in + columns, bias, plan_.x_width, out);
        } else {
          interleave_any(in, columns, kw_count, bias, plan_.x_width, out);
        }
        apply_activation(plan_.activation, out, y_width);
      }
    }
  }

  const TransposeTapsPlan& plan_;
  const float* x_;
  const float* bias_;
  float* y_;
  const float* packed_;
  int64_t tiles_ = 0;
  int64_t chunks_ = 0;
};

}  // namespace

bool transpose_taps_fit(const WindowGeometry& g, int64_t group, SgemmIsa isa) {
  if (group != 1 || isa == SgemmIsa::kPortable) return false;
  // Kernels up to kMaxTapKernel a side: a chunk holds lcm(panel, kW) rows at least, so a huge kW
  // from a model would size each thread's buffer by it (col2im's tiles stay bounded instead).
  if (g.kernel[0] != 1 || g.kernel[1] > kMaxTapKernel || g.kernel[2] > kMaxTapKernel) return false;
  for (int axis = 0; axis < kMaxSpatialRank; ++axis) {
    if (g.kernel[axis] != g.stride[axis] || g.dilation[axis] != 1 || g.pad_begin[axis] != 0 ||
        g.pad_end[axis] != 0 || g.input[axis] != g.output[axis] * g.stride[axis]) {
      return false;
    }
  }
  return true;
}

int64_t TransposeTapsPlan::workspace_bytes() const {
  return parts * buffer_floats * static_cast<int64_t>(sizeof(float));
}

TransposeTapsPlan plan_transpose_taps(const WindowGeometry& g, SgemmIsa isa, int64_t batch,
                                      int64_t in_channels, int64_t out_channels,
                                      const float* weights, int threads,
                                      const PackedWeightSharing& share) {
  TransposeTapsPlan plan;
  plan.isa = isa;
  plan.batch = batch;
  plan.in_channels = in_channels;
  plan.out_channels = out_channels;
  plan.kernel_h = g.kernel[1];
  plan.kernel_w = g.kernel[2];
  plan.x_depth = g.output[0];
  plan.x_height = g.output[1];
  plan.x_width = g.output[2];
  const int64_t x_rows = std::max<int64_t>(1, plan.x_depth * plan.x_height);
  plan.tile_rows = balanced_band_rows(
      x_rows, std::clamp<int64_t>(kTileColumns / plan.x_width, 1, x_rows), threads);
  // Chunks start on a panel of the packed A and on an m (its kW rows stay together).
  const int64_t step = std::lcm(sgemm_panel_rows(isa), plan.kernel_w);
  plan.chunk_rows = std::min(round_up(product_rows(plan), plan.kernel_w),
                             std::max(step, kChunkRowsTarget / step * step));
  plan.buffer_floats = round_up(plan.chunk_rows * widest_tile(plan), kLineFloats);
  plan.parts = std::max(threads, 1);
  plan.packed_floats_kh =
      round_up(packed_a_floats(isa, product_rows(plan), in_channels), kLineFloats);
  const PackedWeightCache::Factory pack = [&] {
    return std::shared_ptr<const std::vector<float>>(pack_weights(plan, weights));
  };
  plan.packed = share ? share(pack) : pack();
  return plan;
}

void run_transpose_taps(const TransposeTapsPlan& plan, const float* x, const float* bias, float* y,
                        std::byte* workspace, ThreadPool& threads) {
  const TapsRunner runner(plan, x, bias, y);
  const int64_t items = runner.item_count();
  const int64_t parts = std::min<int64_t>({plan.parts, threads.thread_count(), items});
  threads.parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      float* buffer = reinterpret_cast<float*>(workspace) + part * plan.buffer_floats;
      const Share share = contiguous_share(items, part, parts);
      for (int64_t index = share.begin; index < share.end; ++index) {
        runner.run(runner.item(index), buffer);
      }
    }
  });
}

}  // namespace onepool::cpu::nn
