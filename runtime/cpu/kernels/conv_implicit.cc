#include "runtime/cpu/kernels/conv_implicit.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu::nn {
namespace {

// About this many wide-output columns per band: enough for long runs of full column tiles,
// small enough for a band's planes and output to stay in a core's L2 cache.
constexpr int64_t kBandColumns = 768;
// Strides up to this run on phase planes (stride * stride per channel); larger ones take im2col.
constexpr int64_t kMaxImplicitStride = 4;
// The channel-vector GEMM takes a convolution with k at least this deep: each run's sums leave
// through a transpose, which a short k does not amortize (ResNet-50's 64 -> 256 1x1 on 56x56,
// k = 64, ran 1.15-1.27x longer at two threads; 256 -> 64, k = 256, 0.87-0.96x).
constexpr int64_t kMinChannelDepth = 256;
// Or at least this deep where the column tiles leave more than a fifth of their lanes idle (a 7x7
// map's 49 positions in 64 lanes): MobileNetV2's 160 -> 960 expansions on 7x7 ran 0.87-0.91x.
constexpr int64_t kMinChannelDepthIdleColumns = 128;
constexpr double kIdleColumnLaneUse = 0.8;
// And runs this long on average: each step of k loads a run's four weight vectors and its
// offsets whatever its length, so short runs wait on loads (a padded 7x7 map's rows as 4 + 3: 3x3
// convolutions onto 7x7 maps ran 1.02-1.17x longer than on the column tiles; rows of 14 as
// 5 + 5 + 4 ran 0.83-0.91x). With runs of up to 7, a 7x7 row is one run: four of ResNet-50's 3x3
// 512 -> 512 on 7x7 in a chain ran 8.27 -> 6.05 ms at one thread, 5.58 -> 3.05 at two. Rows of 8
// as 4 + 4 beat the column tiles' 64 of 96 lanes: UNet's 3x3 256 / 512 -> 512 on 8x8 ran
// 0.77-0.81x at one thread and 0.92x at two (the untouched nodes of the same runs 0.87-0.93 /
// 0.95-1.02).
constexpr double kMinChannelRunColumns = 4.0;
// Output rows at least this wide, in whole multiples of this, run row by row straight into Y
// (ImplicitGemmPlan::rows_direct): full column tiles with no lanes idle; narrower rows keep the
// wide band, whose column tiles run across rows (a 7x7 map's rows would fill 7 of 16 lanes).
constexpr int64_t kLeastDirectRow = 32;
constexpr int64_t kDirectRowMultiple = 16;
constexpr int64_t kAlignment = 64;
constexpr auto kFloat = static_cast<int64_t>(sizeof(float));

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// Copies the input rows band row `first_row` reads into zero-padded planes of plane_h x plane_w:
// padded (r, col) holds input (first_row - pad_top + r, col - pad_left), or 0 outside it.
void pad_band(const WindowGeometry& g, const ImplicitGemmPlan& plan, const float* x,
              int64_t channels, int64_t first_row, float* padded) {
  const int64_t left = g.pad_begin[2];
  const int64_t first = std::clamp<int64_t>(left, 0, plan.plane_w);
  const int64_t last = std::clamp<int64_t>(left + g.input[2], first, plan.plane_w);
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = x + c * g.input_size();
    for (int64_t r = 0; r < plan.plane_h; ++r) {
      float* dst = padded + (c * plan.plane_h + r) * plan.plane_w;
      const int64_t y = first_row - g.pad_begin[1] + r;
      if (y < 0 || y >= g.input[1]) {
        std::fill(dst, dst + plan.plane_w, 0.0f);
        continue;
      }
      std::fill(dst, dst + first, 0.0f);
      std::memcpy(dst + first, plane + y * g.input[2] + (first - left),
                  static_cast<size_t>(last - first) * sizeof(float));
      std::fill(dst + last, dst + plan.plane_w, 0.0f);
    }
  }
}

// dst[q] = row[stride * q] for q in [0, count): one phase plane's row. Stride 2 (the common case)
// has its own loop, which the compiler turns into vector permutes; a loop over a run-time stride
// stays one element at a time (a tenth of ResNet-50's stride-2 3x3 convolutions' time).
ONEPOOL_ISA_CLONES void copy_strided(const float* __restrict row, int64_t stride,
                                     float* __restrict dst, int64_t count) {
  if (stride == 2) {
    for (int64_t q = 0; q < count; ++q) dst[q] = row[2 * q];
    return;
  }
  for (int64_t q = 0; q < count; ++q) dst[q] = row[stride * q];
}

// Stride s > 1: the band's input split into s x s phase planes per channel, phase (a, b) row r
// column q holding padded input (s (first_row + r) + a - pad_top, s q + b - pad_left), or 0
// outside the input. Tap (kh, kw) of output (r, q) then sits in phase (kh mod s, kw mod s) at
// (r + kh div s, q + kw div s): one contiguous run per tap again (plan.row_offsets).
void phase_band(const WindowGeometry& g, const ImplicitGemmPlan& plan, const float* x,
                int64_t channels, int64_t first_row, float* padded) {
  const int64_t s = plan.stride;
  const int64_t plane = plan.plane_h * plan.plane_w;
  const auto rows = static_cast<int64_t>(plan.phase_rows.size());
  const auto columns = static_cast<int64_t>(plan.phase_columns.size());
  float* phase = padded;
  for (int64_t c = 0; c < channels; ++c) {
    const float* input = x + c * g.input_size();
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < columns; ++j, phase += plane) {
        const int64_t a = plan.phase_rows[static_cast<size_t>(i)];
        const int64_t b = plan.phase_columns[static_cast<size_t>(j)];
        // Columns q whose input column s q + b - pad_left lies inside the row.
        const ValidRange inside =
            valid_output_range(b - g.pad_begin[2], s, g.input[2], plan.plane_w);
        for (int64_t r = 0; r < plan.plane_h; ++r) {
          float* dst = phase + r * plan.plane_w;
          const int64_t y = s * (first_row + r) + a - g.pad_begin[1];
          if (y < 0 || y >= g.input[1]) {
            std::fill(dst, dst + plan.plane_w, 0.0f);
            continue;
          }
          const float* row = input + y * g.input[2] + b - g.pad_begin[2];
          std::fill(dst, dst + inside.first, 0.0f);
          copy_strided(row + s * inside.first, s, dst + inside.first, inside.last - inside.first);
          std::fill(dst + inside.last, dst + plan.plane_w, 0.0f);
        }
      }
    }
  }
}

// Floats one input channel takes in a band's padded (or phase) planes.
int64_t band_channel_floats(const ImplicitGemmPlan& plan) {
  const int64_t phases =
      plan.stride > 1 ? static_cast<int64_t>(plan.phase_rows.size() * plan.phase_columns.size())
                      : 1;
  return phases * plan.plane_h * plan.plane_w;
}

// One band of output rows [first_row, first_row + rows) in the part of the workspace `part`.
struct Band {
  int64_t first_row;
  int64_t rows;
};

// The planes band `band` reads: the input itself, or its rows padded into `part`.
const float* band_planes(const WindowGeometry& g, const ImplicitGemmPlan& plan, const float* x,
                         int64_t in_channels, const Band& band, std::byte* part) {
  if (!plan.padded) return x + band.first_row * plan.plane_w;
  auto* padded = reinterpret_cast<float*>(part);
  if (plan.stride > 1) {
    phase_band(g, plan, x, in_channels, band.first_row, padded);
  } else {
    pad_band(g, plan, x, in_channels, band.first_row, padded);
  }
  return padded;
}

// As band_planes, with the channels shared out over the threads (a small map's single band: its
// planes were filled by one thread while the other waited, a fifth of a stride-2 3x3
// convolution's time on 14x14 maps at two threads).
const float* band_planes_in_parallel(const WindowGeometry& g, const ImplicitGemmPlan& plan,
                                     const float* x, int64_t in_channels, const Band& band,
                                     std::byte* workspace, ThreadPool& threads) {
  if (!plan.padded) return band_planes(g, plan, x, in_channels, band, workspace);
  const auto channel_bytes = static_cast<int64_t>(band_channel_floats(plan) * sizeof(float));
  threads.parallel_for(in_channels, 1, [&](int64_t begin, int64_t end) {
    band_planes(g, plan, x + begin * g.input_size(), end - begin, band,
                workspace + begin * channel_bytes);
  });
  return reinterpret_cast<const float*>(workspace);
}

// The epilogue on output channels [first, end) of band `band` (its rows of each channel are one
// contiguous run of Y), when the micro-kernels did not apply it.
void finish_band(const WindowGeometry& g, const ImplicitGemmPlan& plan,
                 const BandEpilogue& epilogue, const Band& band, int64_t first, int64_t end,
                 float* y) {
  if (implicit_epilogue_in_tiles(plan, epilogue.activation, epilogue.residual != nullptr)) return;
  if (epilogue.bias == nullptr && epilogue.activation.kind == ActivationKind::kNone) return;
  const int64_t width = g.output[2];
  const int64_t count = band.rows * width;
  for (int64_t m = first; m < end; ++m) {
    float* data = y + m * g.output_size() + band.first_row * width;
    if (epilogue.bias != nullptr) {
      const float b = epilogue.bias[m];
      map_in_place(data, count, [b](float v) { return v + b; });
    }
    apply_activation(epilogue.activation, data, count);
  }
}

// The runs of band `band` (plan.channels).
const std::vector<ColumnRun>& band_runs(const ImplicitGemmPlan& plan, const Band& band) {
  return band.rows == plan.band_rows ? plan.runs : plan.last_runs;
}

// Panels [first_panel, end_panel) by runs [first_run, end_run) of band `band` on the
// channel-vector GEMM, straight into Y's rows; `in_tiles`: with the epilogue.
struct ChannelShare {
  int64_t first_panel, end_panel;
  int64_t first_run, end_run;
};

void multiply_band_channels(const WindowGeometry& g, const ImplicitGemmPlan& plan,
                            const PackedA& weights, const float* planes, const Band& band,
                            const ChannelShare& share, const BandEpilogue& epilogue, bool in_tiles,
                            float* y) {
  const std::vector<ColumnRun>& runs = band_runs(plan, band);
  int64_t column = band.first_row * g.output[2];  // the first run's position in each plane of Y
  for (int64_t r = 0; r < share.first_run; ++r) column += runs[static_cast<size_t>(r)].count;
  const GemmEpilogue finish{epilogue.bias,
                            epilogue.residual != nullptr ? epilogue.residual + column : nullptr,
                            epilogue.activation};
  const ChannelProduct product{weights.data,
                               weights.rows,
                               weights.k,
                               planes,
                               plan.row_offsets.data(),
                               runs.data() + share.first_run,
                               share.end_run - share.first_run,
                               y + column,
                               g.output_size(),
                               in_tiles ? &finish : nullptr};
  sgemm_channels(product, share.first_panel, share.end_panel);
}

// Output channels [first, end) of band `band`, from its planes.
void multiply_band(const WindowGeometry& g, const ImplicitGemmPlan& plan, SgemmIsa isa,
                   const PackedA& weights, const float* planes, const Band& band, int64_t first,
                   int64_t end, const BandEpilogue& epilogue, std::byte* part, float* y) {
  const bool in_tiles =
      implicit_epilogue_in_tiles(plan, epilogue.activation, epilogue.residual != nullptr);
  if (plan.channels) {
    const ChannelShare all{first / kChannelPanelRows,
                           (end + kChannelPanelRows - 1) / kChannelPanelRows, 0,
                           static_cast<int64_t>(band_runs(plan, band).size())};
    return multiply_band_channels(g, plan, weights, planes, band, all, epilogue, in_tiles, y);
  }
  const int64_t width = g.output[2];
  const int64_t columns = (band.rows - 1) * plan.plane_w + width;
  const int64_t y_offset = first * g.output_size() + band.first_row * width;
  GemmEpilogue tile_epilogue{epilogue.bias != nullptr ? epilogue.bias + first : nullptr,
                             epilogue.residual != nullptr ? epilogue.residual + y_offset : nullptr,
                             epilogue.activation};
  const GemmEpilogue* finish = in_tiles ? &tile_epilogue : nullptr;
  if (plan.wide_bytes == 0) {  // plane_w == OW: the wide output is Y's rows
    sgemm_packed_a_rows(isa, weights, first, end - first, columns, planes, plan.row_offsets.data(),
                        y + y_offset, g.output_size(), finish);
    return;
  }
  if (plan.rows_direct) {  // each output row its own product, straight into Y's row
    for (int64_t r = 0; r < band.rows; ++r) {
      GemmEpilogue row_epilogue = tile_epilogue;
      if (epilogue.residual != nullptr) row_epilogue.residual += r * width;
      sgemm_packed_a_rows(isa, weights, first, end - first, width, planes + r * plan.plane_w,
                          plan.row_offsets.data(), y + y_offset + r * width, g.output_size(),
                          in_tiles ? &row_epilogue : nullptr);
    }
    return;
  }
  float* y_first = y + first * g.output_size();
  const int64_t ldw = plan.band_rows * plan.plane_w;
  float* wide = reinterpret_cast<float*>(part + aligned(plan.padded_bytes)) + first * ldw;
  sgemm_packed_a_rows(isa, weights, first, end - first, columns, planes, plan.row_offsets.data(),
                      wide, ldw, finish);
  for (int64_t m = 0; m < end - first; ++m) {
    for (int64_t r = 0; r < band.rows; ++r) {
      const float* src = wide + m * ldw + r * plan.plane_w;
      std::copy(src, src + width, y_first + m * g.output_size() + (band.first_row + r) * width);
    }
  }
}

// The fraction of the column tiles' lanes that hold an output position, the map taken as one band
// of wide rows (each OW + the window's reach past it wide): 32-wide tiles, a last one of up to 16
// columns one vector wide. A 7x7 map's 49 positions take 64 lanes.
double column_lane_use(const WindowGeometry& g) {
  const int64_t plane_w = g.output[2] + (g.kernel[2] - 1) * g.dilation[2] / g.stride[2];
  const int64_t columns = (g.output[1] - 1) * plane_w + g.output[2];
  return static_cast<double>(g.output[1] * g.output[2]) /
         static_cast<double>(avx512_column_lanes(columns));
}

// The mean length of the runs append_column_runs cuts a map's rows into: rows as wide as the
// planes run on into each other (one run of the whole map), padded ones each end their runs.
double mean_run_columns(const WindowGeometry& g) {
  const bool flat = g.kernel[1] == 1 && g.kernel[2] == 1 && g.stride[1] == 1 &&
                    g.pad_begin[1] == 0 && g.pad_begin[2] == 0;
  const int64_t length = flat ? g.output_size() : g.output[2];
  const int64_t runs = (length + kChannelRunColumns - 1) / kChannelRunColumns;
  return static_cast<double>(length) / static_cast<double>(std::max<int64_t>(runs, 1));
}

// The fraction of the channel vectors' lanes that hold an output channel (a last panel of fewer
// than 64 channels runs only the vectors of 16 it needs).
double channel_lane_use(int64_t out_channels) {
  const int64_t padded =
      (out_channels + kChannelVectorRows - 1) / kChannelVectorRows * kChannelVectorRows;
  return static_cast<double>(out_channels) / static_cast<double>(padded);
}

// The (panel, run) pairs of a small map's band weighted by their panel's vectors of 16 rows (four,
// and the last panel's 1-4): pair (p, r) spans weights [first(p) + r * vectors(p), + vectors(p)).
struct WeightedPanels {
  int64_t panels, runs, last_vectors;
  int64_t vectors(int64_t panel) const {
    return panel + 1 < panels ? kVectorsPerPanel : last_vectors;
  }
  int64_t first(int64_t panel) const { return panel * kVectorsPerPanel * runs; }
  int64_t total() const { return first(panels - 1) + last_vectors * runs; }
  // The runs of `panel` whose weight starts in [begin, end).
  Share runs_starting_in(int64_t panel, int64_t begin, int64_t end) const {
    const int64_t v = vectors(panel);
    const auto run_at = [&](int64_t weight) {
      return std::clamp<int64_t>((weight - first(panel) + v - 1) / v, 0, runs);
    };
    return Share{run_at(begin), run_at(end)};
  }
  static constexpr int64_t kVectorsPerPanel = kChannelPanelRows / kChannelVectorRows;
};

// A small map's band on the channel-vector GEMM, its (panel, run) pairs shared out over the
// threads by their weight in vectors, panel by panel: whole panels split coarsely (MobileNetV2's
// 960 -> 160 projection on 7x7 is three 64-channel panels, two on one thread and one on the other:
// 1.44x at two threads where ONNX Runtime gains 1.95x; a single panel left one thread idle), and
// pairs split by count weighed a last panel of 32 rows as much as a full one (its 576 -> 96
// projections on 14x14: one thread ran the 64-row panel, the other the 32-row one, 1.24-1.29x the
// time of the split by weight; the 960 -> 160 ones on 7x7 1.17-1.18x, p50s of 200 runs alternated
// in one process). Each output is still one call's chain over k; then, for activations the tiles
// do not apply, the channels' epilogue.
void share_band_units(const WindowGeometry& g, const ImplicitGemmPlan& plan, const PackedA& weights,
                      const float* planes, const Band& band, int64_t panels,
                      const BandEpilogue& epilogue, float* y, ThreadPool& threads) {
  const bool in_tiles =
      implicit_epilogue_in_tiles(plan, epilogue.activation, epilogue.residual != nullptr);
  const auto runs = static_cast<int64_t>(band_runs(plan, band).size());
  const int64_t last_rows = weights.rows - (panels - 1) * kChannelPanelRows;
  const WeightedPanels units{panels, runs,
                             (last_rows + kChannelVectorRows - 1) / kChannelVectorRows};
  threads.parallel_for(units.total(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t panel = 0; panel < panels && units.first(panel) < end; ++panel) {
      const Share share = units.runs_starting_in(panel, begin, end);
      if (share.begin >= share.end) continue;
      multiply_band_channels(g, plan, weights, planes, band,
                             ChannelShare{panel, panel + 1, share.begin, share.end}, epilogue,
                             in_tiles, y);
    }
  });
  if (in_tiles) return;
  threads.parallel_for(weights.rows, 1, [&](int64_t begin, int64_t end) {
    finish_band(g, plan, epilogue, band, begin, end, y);
  });
}

// A small map's band whose planes are the input itself and whose output rows are Y's (a 1x1
// convolution, stride 1, no padding), finished in the tiles, with more input channels than
// output channels (a projection: reading the input is most of its traffic): the threads share its
// columns instead of its output channels (multiply_band_split_columns). An expansion keeps the
// channel split: each core then writes whole planes, the ones a depthwise convolution after it
// reads on the same core (MobileNetV2's 64 -> 384 and 96 -> 576 expansions on 14x14 at two
// threads ran 0.85-0.91x, the depthwise nodes after them 0.74-0.97x, 6 alternated rounds).
bool split_columns_fits(const WindowGeometry& g, const ImplicitGemmPlan& plan, bool in_tiles,
                        int64_t in_channels, int64_t out_channels) {
  return in_channels > out_channels && !plan.channels && !plan.padded && plan.stride == 1 &&
         plan.wide_bytes == 0 && !plan.rows_direct && plan.plane_w == g.output[2] && in_tiles;
}

// Band `band` with its columns shared over the threads in whole column tiles, every output
// channel each. Shared by panels, each thread read the whole input (the node before wrote half of
// it on the other core) for half the channels; by columns, each reads half of every plane and all
// of A (the same on both cores). MobileNetV2's 576 -> 96 projections on 14x14 at two threads
// measured 0.93-0.95 of the panel split (10 alternated rounds; the channel-vector nodes of the same
// runs 0.96-0.97). Each element is the same chain over k whatever tile holds it: the same bits.
void multiply_band_split_columns(const WindowGeometry& g, const ImplicitGemmPlan& plan,
                                 SgemmIsa isa, const PackedA& weights, const float* x,
                                 const Band& band, const BandEpilogue& epilogue, float* y,
                                 ThreadPool& threads) {
  const int64_t width = g.output[2];
  const int64_t columns = band.rows * width;
  const int64_t tile = sgemm_tile_cols(isa);
  const int64_t tiles = (columns + tile - 1) / tile;
  const int64_t first = band.first_row * width;
  const float* planes = x + band.first_row * plan.plane_w;
  threads.parallel_for(tiles, 1, [&](int64_t begin, int64_t end) {
    const int64_t c0 = begin * tile;
    const int64_t c1 = std::min(columns, end * tile);
    const GemmEpilogue finish{
        epilogue.bias, epilogue.residual != nullptr ? epilogue.residual + first + c0 : nullptr,
        epilogue.activation};
    sgemm_packed_a_rows(isa, weights, 0, weights.rows, c1 - c0, planes + c0,
                        plan.row_offsets.data(), y + first + c0, g.output_size(), &finish);
  });
}

}  // namespace

// Output rows per band: at most `max_rows`, with the bands shared out evenly over `threads`
// parts (each part a contiguous run of bands: contiguous_share(used, p, parts)).
// 28 rows at up to 25 a band on 2 threads would be bands of 25 and 3, one thread idle most of the
// node; 14 and 14 keep both busy. Tries band counts in multiples of the thread count and keeps
// the one whose busiest part has the fewest rows (the fewest bands on a tie: longer bands run
// longer column tiles). Maps that fit in fewer bands than threads keep their bands.
int64_t balanced_band_rows(int64_t height, int64_t max_rows, int threads) {
  const int64_t parts = std::max(threads, 1);
  const int64_t fewest = (height + max_rows - 1) / max_rows;
  // Fewer bands than threads: the threads share each band's output channels instead (cutting
  // a small map into more bands would make every thread stream all the weights).
  if (fewest < parts) return max_rows;
  int64_t best_rows = max_rows;
  int64_t best_load = std::numeric_limits<int64_t>::max();
  for (int64_t bands = (fewest + parts - 1) / parts * parts; bands <= fewest + 4 * parts;
       bands += parts) {
    const int64_t rows = (height + bands - 1) / bands;
    const int64_t used = (height + rows - 1) / rows;  // bands of `rows` that cover the height
    int64_t load = 0;                                 // the busiest part's rows
    for (int64_t part = 0; part < parts; ++part) {
      const Share bands = contiguous_share(used, part, parts);
      const int64_t first_row = std::min(height, bands.begin * rows);
      const int64_t end_row = std::min(height, bands.end * rows);
      load = std::max(load, end_row - first_row);
    }
    if (load < best_load) {
      best_load = load;
      best_rows = rows;
    }
  }
  return best_rows;
}

bool implicit_threads_share_positions(const WindowGeometry& g, const ImplicitGemmPlan& plan,
                                      int64_t in_channels, int64_t out_channels, bool in_tiles,
                                      int threads) {
  const int64_t bands = (g.output[1] + plan.band_rows - 1) / plan.band_rows;
  return threads <= 1 || bands >= threads ||
         split_columns_fits(g, plan, in_tiles, in_channels, out_channels);
}

bool implicit_epilogue_in_tiles(const ImplicitGemmPlan& plan, const Activation& activation,
                                bool residual) {
  return gemm_epilogue_supports(activation) &&
         (!residual || plan.wide_bytes == 0 || plan.rows_direct || plan.channels);
}

// A strided 1x1 convolution: the channel vectors on its one phase plane, copied in, beat im2col's
// subsampled columns on the column tiles, given the depth implicit_channels_fit asks for. Onto a
// map whose column tiles leave over a fifth of their lanes idle (ResNet-50's 1024 -> 2048
// downsample onto 7x7) 0.82x at one thread, 0.87x at two; onto 28x28 and 14x14 (its 256 -> 512
// and 512 -> 1024 downsamples) 0.94-0.96x at one thread and 0.92-0.94x at two once a k of 256 ran
// as one block (sgemm_channels.cc; before that they ran 1.07-1.11x longer), p50s of 60 runs
// alternated in one process.
bool strided_pointwise(const WindowGeometry& g) {
  return g.input[0] == 1 && g.output[0] == 1 && g.kernel[0] == 1 && g.kernel[1] == 1 &&
         g.kernel[2] == 1 && g.stride[1] == g.stride[2] && g.stride[1] <= kMaxImplicitStride;
}

bool implicit_channels_fit(const WindowGeometry& g, int64_t in_channels, int64_t out_channels) {
  if (!(implicit_gemm_fits(g) || strided_pointwise(g)) || g.output_size() == 0) {
    return false;
  }
  // A single output position (a squeeze-and-excitation block's 1x1 convolutions on a pooled 1x1
  // map) at any depth: the column tiles multiply each input value by every row of every panel,
  // the channel vectors by a broadcast once per 16 channels. Such inputs are often subnormal (the
  // mean of a channel Hardswish has nearly zeroed), and each multiply-add with a subnormal operand
  // takes a microcode assist: PaddleOCR rec's 480 -> 120 and 240 -> 60 ran 0.83 and 0.29 ms on
  // the column tiles, 0.03 and 0.01 with subnormals flushed (which would change the results).
  if (g.output_size() == 1) return true;
  const int64_t depth = in_channels * g.kernel_size();
  const double column_use = column_lane_use(g);
  const int64_t least_depth =
      column_use < kIdleColumnLaneUse ? kMinChannelDepthIdleColumns : kMinChannelDepth;
  if (depth < least_depth) return false;
  if (mean_run_columns(g) < kMinChannelRunColumns) return false;
  return channel_lane_use(out_channels) >= column_use;
}

bool implicit_gemm_fits(const WindowGeometry& g) {
  if (g.input[0] != 1 || g.output[0] != 1 || g.kernel[0] != 1) return false;
  if (g.stride[1] == 1 && g.stride[2] == 1) return true;
  // Strided: only windows larger than 1x1 (a strided 1x1 reads one phase; im2col's subsampled
  // column tiles measured as fast or faster there, 1.2x at 2 threads on ResNet-50's downsample).
  return g.stride[1] == g.stride[2] && g.stride[1] <= kMaxImplicitStride &&
         g.kernel[1] * g.kernel[2] > 1;
}

ImplicitGemmPlan plan_implicit_gemm(const WindowGeometry& g, int64_t in_channels,
                                    int64_t out_channels, int threads, bool channels) {
  ImplicitGemmPlan plan;
  plan.stride = g.stride[1];
  const int64_t s = plan.stride;
  // Rows and columns a tap reaches past its output position, in (phase) plane units.
  const int64_t halo_h = (g.kernel[1] - 1) * g.dilation[1] / s;
  const int64_t halo_w = (g.kernel[2] - 1) * g.dilation[2] / s;
  const int64_t need_w = g.output[2] + halo_w;
  plan.padded = s > 1 || g.pad_begin[1] != 0 || g.pad_begin[2] != 0 ||
                g.output[1] + halo_h > g.input[1] || need_w > g.input[2];
  plan.plane_w = plan.padded ? need_w : g.input[2];
  plan.band_rows = balanced_band_rows(
      g.output[1], std::clamp<int64_t>(kBandColumns / plan.plane_w, 1, g.output[1]), threads);
  plan.plane_h = plan.padded ? plan.band_rows + halo_h : g.input[1];
  // Declared as bounds that grow with the plane width (a band holds at most
  // max(kBandColumns, plane_w) output columns), so that a plan made at the top of a shape range
  // has room at every smaller shape (DynamicSession).
  const int64_t band_columns = std::max(kBandColumns, plan.plane_w);
  plan.wide_bytes = plan.plane_w == g.output[2] ? 0 : out_channels * band_columns * kFloat;
  plan.rows_direct = plan.wide_bytes != 0 && g.output[2] >= kLeastDirectRow &&
                     g.output[2] % kDirectRowMultiple == 0;
  if (channels) {  // each band's runs write Y directly
    // The wide output stays declared though unused: a DynamicSession places every shape of a
    // range in the top shape's workspaces, and a smaller shape may take the column tiles.
    plan.channels = true;
    append_column_runs(plan.band_rows, g.output[2], plan.plane_w, plan.runs);
    const int64_t last_rows = g.output[1] - (g.output[1] - 1) / plan.band_rows * plan.band_rows;
    if (last_rows != plan.band_rows) {
      append_column_runs(last_rows, g.output[2], plan.plane_w, plan.last_runs);
    }
  }
  // The phases some tap reads (a 1x1 kernel at stride 2 reads phase (0, 0) only).
  std::vector<int64_t> row_index(static_cast<size_t>(s), -1), column_index(row_index);
  for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
    row_index[static_cast<size_t>(kh * g.dilation[1] % s)] = 0;
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw)
    column_index[static_cast<size_t>(kw * g.dilation[2] % s)] = 0;
  for (int64_t a = 0; a < s; ++a) {
    if (row_index[static_cast<size_t>(a)] < 0) continue;
    row_index[static_cast<size_t>(a)] = static_cast<int64_t>(plan.phase_rows.size());
    plan.phase_rows.push_back(a);
  }
  for (int64_t b = 0; b < s; ++b) {
    if (column_index[static_cast<size_t>(b)] < 0) continue;
    column_index[static_cast<size_t>(b)] = static_cast<int64_t>(plan.phase_columns.size());
    plan.phase_columns.push_back(b);
  }
  const auto phases_per_channel =
      static_cast<int64_t>(plan.phase_rows.size() * plan.phase_columns.size());
  // Every phase plane a tap reads (at most stride x stride per channel) of a band.
  plan.padded_bytes = plan.padded ? in_channels * phases_per_channel *
                                        (band_columns + halo_h * plan.plane_w) * kFloat
                                  : 0;
  plan.part_bytes = aligned(plan.padded_bytes) + aligned(plan.wide_bytes);
  const int64_t bands = (g.output[1] + plan.band_rows - 1) / plan.band_rows;
  plan.parts = plan.part_bytes == 0 ? 1 : std::clamp<int64_t>(threads, 1, bands);
  for (int64_t c = 0; c < in_channels; ++c) {
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t y = kh * g.dilation[1];
        const int64_t x = kw * g.dilation[2];
        const int64_t phase = c * phases_per_channel +
                              row_index[static_cast<size_t>(y % s)] *
                                  static_cast<int64_t>(plan.phase_columns.size()) +
                              column_index[static_cast<size_t>(x % s)];  // c for stride 1
        plan.row_offsets.push_back((phase * plan.plane_h + y / s) * plan.plane_w + x / s);
      }
    }
  }
  return plan;
}

void run_implicit_gemm(const WindowGeometry& g, const ImplicitGemmPlan& plan, SgemmIsa isa,
                       const float* packed, int64_t out_channels, int64_t in_channels,
                       const float* x, float* y, const BandEpilogue& epilogue, std::byte* workspace,
                       ThreadPool& threads) {
  const int64_t bands = (g.output[1] + plan.band_rows - 1) / plan.band_rows;
  const PackedA weights{packed, out_channels, static_cast<int64_t>(plan.row_offsets.size())};
  const auto band_at = [&](int64_t band) {
    const int64_t first_row = band * plan.band_rows;
    return Band{first_row, std::min(plan.band_rows, g.output[1] - first_row)};
  };
  if (bands < threads.thread_count() &&
      split_columns_fits(
          g, plan,
          implicit_epilogue_in_tiles(plan, epilogue.activation, epilogue.residual != nullptr),
          in_channels, out_channels)) {
    for (int64_t band = 0; band < bands; ++band) {
      multiply_band_split_columns(g, plan, isa, weights, x, band_at(band), epilogue, y, threads);
    }
    return;
  }
  if (bands < threads.thread_count()) {
    // Fewer bands than threads (small maps): each band in turn, its output channels split over
    // the threads in whole panels of A.
    const int64_t panel = plan.channels ? kChannelPanelRows : sgemm_panel_rows(isa);
    const int64_t panels = (out_channels + panel - 1) / panel;
    for (int64_t band = 0; band < bands; ++band) {
      const Band rows = band_at(band);
      const float* planes =
          band_planes_in_parallel(g, plan, x, in_channels, rows, workspace, threads);
      if (plan.channels) {
        share_band_units(g, plan, weights, planes, rows, panels, epilogue, y, threads);
        continue;
      }
      threads.parallel_for(panels, 1, [&](int64_t begin, int64_t end) {
        const int64_t last = std::min(out_channels, end * panel);
        multiply_band(g, plan, isa, weights, planes, rows, begin * panel, last, epilogue, workspace,
                      y);
        finish_band(g, plan, epilogue, rows, begin * panel, last, y);
      });
    }
    return;
  }
  // Parts own workspace; without any (1x1 kernels read in place, write Y), bands run freely.
  const int64_t parts =
      plan.part_bytes == 0 ? bands : std::min<int64_t>(plan.parts, threads.thread_count());
  threads.parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      std::byte* scratch = workspace + part * plan.part_bytes;
      // A contiguous run of bands per part: the rows this core wrote in the previous node (most
      // nodes split their rows the same way) are the ones it reads.
      const Share run = contiguous_share(bands, part, parts);
      for (int64_t band = run.begin; band < run.end; ++band) {
        const Band rows = band_at(band);
        const float* planes = band_planes(g, plan, x, in_channels, rows, scratch);
        multiply_band(g, plan, isa, weights, planes, rows, 0, out_channels, epilogue, scratch, y);
        finish_band(g, plan, epilogue, rows, 0, out_channels, y);
      }
    }
  });
}

}  // namespace onepool::cpu::nn
