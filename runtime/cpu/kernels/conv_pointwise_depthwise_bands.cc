// The band walk of PointwiseDepthwiseConv (conv_pointwise_depthwise.h): buffer sizes, and one
// thread's run of bands.
#include <algorithm>
#include <cstring>

#include "runtime/cpu/kernels/conv_depthwise.h"
#include "runtime/cpu/kernels/conv_depthwise_stride_two_avx512.h"
#include "runtime/cpu/kernels/conv_pointwise_depthwise.h"

namespace onepool::cpu::nn {
namespace {

// A thread's buffers: with its band's input rows and output rows, well inside a core's L2.
constexpr int64_t kBufferBytes = int64_t{384} << 10;
// Columns (expanded positions) the 1x1 product of a band computes at least: narrower products
// run the GEMM micro-kernel mostly on loads and stores (a 56-wide map at one row a band ran 2x
// slower).
constexpr int64_t kMinBandColumns = 256;
constexpr int64_t kAlignment = 64;
constexpr auto kFloat = static_cast<int64_t>(sizeof(float));

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// Where a 1x1 product reads and writes: B's rows at b + offsets[k], C's (and the residual's)
// rows `stride` apart.
struct ProductPlace {
  const float* b;
  const int64_t* offsets;
  float* c;
  int64_t stride;
};

// The 1x1 product of `step` over `columns`, finished with its bias, the residual (nullptr: none)
// and its activation: in the micro-kernels' registers when they apply that activation, else by
// passes afterwards (the Conv kernel's operations in its order either way, so the same bits).
void pointwise_product(SgemmIsa isa, const PointwiseStep& step, int64_t columns,
                       const ProductPlace& at, const float* bias, const float* residual) {
  const PackedA weights{step.packed->data(), step.out_channels, step.in_channels};
  const GemmEpilogue epilogue{bias, residual, step.activation};
  const bool in_tiles = gemm_epilogue_supports(step.activation);
  sgemm_packed_a_rows(isa, weights, 0, step.out_channels, columns, at.b, at.offsets, at.c,
                      at.stride, in_tiles ? &epilogue : nullptr);
  if (in_tiles) return;
  for (int64_t m = 0; m < step.out_channels; ++m) {
    float* data = at.c + m * at.stride;
    if (bias != nullptr) {
      const float b = bias[m];
      map_in_place(data, columns, [b](float v) { return v + b; });
    }
    if (residual != nullptr) add_residual(data, residual + m * at.stride, columns);
    apply_activation(step.activation, data, columns);
  }
}

// Expanded rows a band of `band_rows` output rows reads at most.
int64_t expanded_rows(const PointwiseDepthwisePlan& plan, int64_t band_rows) {
  return std::min((band_rows - 1) * plan.depthwise.stride[1] + plan.span, plan.depthwise.input[1]);
}

// One thread's buffers for bands of `band_rows`: the expanded rows, then (with a projection) the
// band's depthwise output.
int64_t part_bytes(const PointwiseDepthwisePlan& plan, int64_t band_rows) {
  const int64_t expanded =
      plan.has_expand ? aligned(expanded_rows(plan, band_rows) * plan.row_bytes) : 0;
  if (!plan.project) return expanded;
  return expanded + aligned(plan.channels * band_rows * plan.depthwise.output[2] * kFloat);
}

// The tallest bands (at most `most` rows) whose buffers fit `bytes`; 0 when none does.
int64_t tallest_fitting(const PointwiseDepthwisePlan& plan, int64_t most, int64_t bytes) {
  for (int64_t rows = most; rows >= 1; --rows) {
    if (part_bytes(plan, rows) <= bytes) return rows;
  }
  return 0;
}

// Expanded rows [first, end) of the map.
struct Rows {
  int64_t first = 0;
  int64_t end = 0;
};

// One thread's run of bands over one image.
class BandWalker {
 public:
  BandWalker(const PointwiseDepthwisePlan& plan, const PointwiseDepthwiseBands& bands,
             const PointwiseDepthwiseTensors& tensors, std::byte* part)
      : plan_(plan),
        bands_(bands),
        t_(tensors),
        expanded_(reinterpret_cast<float*>(part)),
        depthwise_(reinterpret_cast<float*>(part + bands.expanded_bytes)) {}

  void run(int64_t first, int64_t end) {
    const int64_t out_width = plan_.depthwise.output[2];
    const int64_t plane = plan_.depthwise.output_size();
    for (int64_t band = first; band < end; band += bands_.band_rows) {
      const int64_t band_end = std::min(end, band + bands_.band_rows);
      const DepthwiseBand rows = depthwise_band(plan_.depthwise, band, band_end);
      // The depthwise input: the expanded buffer, or X's rows where they lie.
      const float* source = expanded_;
      int64_t source_stride = channel_stride();
      if (plan_.has_expand) {
        expand(Rows{rows.first_input_row, rows.end_input_row});
      } else {
        source = t_.x + rows.first_input_row * width();
        source_stride = plan_.depthwise.input_size();
      }
      if (!plan_.project) {
        convolve(rows.geometry, source, source_stride, t_.y + band * out_width, plane);
        continue;
      }
      convolve(rows.geometry, source, source_stride, depthwise_, bands_.band_rows * out_width);
      project(band, band_end);
    }
  }

 private:
  int64_t width() const { return plan_.depthwise.input[2]; }
  int64_t channel_stride() const { return bands_.buffer_rows * width(); }

  // Brings the expanded buffer to rows `need` (buffer row 0 = need.first): keeps the held rows
  // it still reads, computes the rest.
  void expand(const Rows& need) {
    int64_t from = need.first;
    if (need.first >= held_.first && need.first < held_.end) {
      const int64_t shift = need.first - held_.first;
      const int64_t kept = std::min(held_.end, need.end) - need.first;
      if (shift > 0) {
        for (int64_t m = 0; m < plan_.channels; ++m) {
          float* rows = expanded_ + m * channel_stride();
          std::memmove(rows, rows + shift * width(),
                       static_cast<size_t>(kept * width()) * sizeof(float));
        }
      }
      from = need.first + kept;
    }
    if (from < need.end) compute_rows(Rows{from, need.end}, from - need.first);
    held_ = need;
  }

  // Expanded rows `rows` into the buffer from row `at`: the 1x1 product, then its epilogue.
  void compute_rows(const Rows& rows, int64_t at) {
    const ProductPlace place{t_.x + rows.first * width(), plan_.x_offsets.data(),
                             expanded_ + at * width(), channel_stride()};
    pointwise_product(plan_.isa, plan_.expand, (rows.end - rows.first) * width(), place, t_.b1,
                      nullptr);
  }

  // The depthwise window `band` over channel m at source + m * source_stride, into
  // out + m * stride.
  void convolve(const WindowGeometry& band, const float* source, int64_t source_stride, float* out,
                int64_t stride) const {
    const WindowGeometry& g = plan_.depthwise;
    const int64_t count = band.output_size();
    const bool avx512 = plan_.isa == SgemmIsa::kAvx512;
    if (avx512 && depthwise_stride_two_3x3_fits(band) && clamp_fits(plan_.depthwise_activation)) {
      const DepthwiseChannels channels{source, source_stride, t_.w2,         t_.b2,
                                       out,    stride,        plan_.channels};
      depthwise_stride_two_3x3_avx512(band, channels, clamp_bounds(plan_.depthwise_activation),
                                      false);
      return;
    }
    for (int64_t m = 0; m < plan_.channels; ++m) {
      float* y = out + m * stride;
      depthwise_conv_plane(band, source + m * source_stride, t_.w2 + m * g.kernel_size(),
                           t_.b2 != nullptr ? t_.b2[m] : 0.0f, y, true, avx512);
      apply_activation(plan_.depthwise_activation, y, count);
    }
  }

  // Output rows [first, end) of Y: the projection of the depthwise buffer, then its bias,
  // residual and activation (the Conv kernel's order).
  void project(int64_t first, int64_t end) {
    const int64_t offset = first * plan_.depthwise.output[2];
    const ProductPlace place{depthwise_, bands_.dw_offsets.data(), t_.y + offset,
                             plan_.depthwise.output_size()};
    pointwise_product(plan_.isa, plan_.projection, (end - first) * plan_.depthwise.output[2], place,
                      t_.b3, t_.residual != nullptr ? t_.residual + offset : nullptr);
  }

  const PointwiseDepthwisePlan& plan_;
  const PointwiseDepthwiseBands& bands_;
  const PointwiseDepthwiseTensors& t_;
  float* expanded_;
  float* depthwise_;  // (projection) the band's depthwise output, channel m at dw_offsets[m]
  Rows held_;         // the expanded rows the buffer holds (buffer row 0 = held_.first)
};

// Output rows per band that give each 1x1 product kMinBandColumns new columns.
int64_t least_band_rows(const PointwiseDepthwisePlan& plan) {
  const WindowGeometry& g = plan.depthwise;
  // Expanded columns a band row adds, or (projection only) projected ones.
  const int64_t new_columns =
      std::max<int64_t>(1, plan.has_expand ? g.stride[1] * g.input[2] : g.output[2]);
  return std::clamp<int64_t>((kMinBandColumns + new_columns - 1) / new_columns, 1, g.output[1]);
}

}  // namespace

PointwiseDepthwiseWorkspace pointwise_depthwise_workspace(const PointwiseDepthwisePlan& plan) {
  const int64_t part_rows = (plan.depthwise.output[1] + plan.parts - 1) / plan.parts;
  const int64_t least_rows = std::min(least_band_rows(plan), part_rows);
  const int64_t least = part_bytes(plan, least_rows);  // one thread's
  const int64_t preferred_rows =
      std::max(least_rows, tallest_fitting(plan, part_rows, std::max(kBufferBytes, least)));
  return PointwiseDepthwiseWorkspace{plan.parts * least,
                                     plan.parts * part_bytes(plan, preferred_rows)};
}

PointwiseDepthwiseBands cut_pointwise_depthwise_bands(const PointwiseDepthwisePlan& plan,
                                                      int64_t workspace_bytes) {
  const WindowGeometry& g = plan.depthwise;
  PointwiseDepthwiseBands bands;
  const int64_t share = workspace_bytes / plan.parts / kAlignment * kAlignment;
  const int64_t part_rows = (g.output[1] + plan.parts - 1) / plan.parts;
  bands.band_rows = std::max<int64_t>(1, tallest_fitting(plan, part_rows, share));
  bands.buffer_rows = expanded_rows(plan, bands.band_rows);
  bands.expanded_bytes = plan.has_expand ? aligned(bands.buffer_rows * plan.row_bytes) : 0;
  bands.part_bytes = part_bytes(plan, bands.band_rows);
  if (plan.project) {
    for (int64_t m = 0; m < plan.channels; ++m) {
      bands.dw_offsets.push_back(m * bands.band_rows * g.output[2]);
    }
  }
  return bands;
}

void run_pointwise_depthwise_rows(const PointwiseDepthwisePlan& plan,
                                  const PointwiseDepthwiseBands& bands,
                                  const PointwiseDepthwiseTensors& tensors, std::byte* part,
                                  int64_t first, int64_t end) {
  BandWalker(plan, bands, tensors, part).run(first, end);
}

}  // namespace onepool::cpu::nn
