// PointwiseDepthwiseConv (planner/optimize/fuse_pointwise_depthwise.cc): a 1x1 Conv and the
// depthwise Conv reading its output, in one pass that never writes the expanded tensor.
//
// Each thread takes a contiguous run of output rows and walks it in bands. For a band it needs
// the expanded rows its windows read: the ones it shares with the band before stay in the
// thread's buffer (moved to its top), the others are computed there by the 1x1 product (the
// implicit GEMM's packed kernel reading X's rows in place) with its bias and activation; then
// the depthwise window runs over the buffer into Y's rows, with its bias and activation. Only
// the rows at the boundary between two threads are computed twice. The buffer (about
// kBufferBytes a thread) stays in the core's cache: MobileNetV2's first expansion would write
// 4.8 MB to memory and read it back.
//
// Numerics: every expanded element is the same multiply-add chain over the input channels
// (sgemm_packed.h) with the same epilogue as the 1x1 Conv's kernel, and every output the same
// depthwise sum (depthwise_conv_plane), so the fused node gives the bits of the two Conv nodes,
// at every band height and thread count.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_depthwise.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/conv_kernels.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu::nn {
namespace {

// A thread's buffer of expanded rows: with its band's input rows and output rows, well inside
// a core's L2 cache.
constexpr int64_t kBufferBytes = int64_t{384} << 10;
// Columns (expanded positions) the 1x1 product of a band computes at least.
constexpr int64_t kMinBandColumns = 256;
constexpr int64_t kAlignment = 64;
constexpr auto kFloat = static_cast<int64_t>(sizeof(float));

struct Plan {
  WindowGeometry depthwise;  // the depthwise window over the expanded tensor [M, H, W]
  int64_t batch = 0;
  int64_t in_channels = 0;  // C
  int64_t channels = 0;     // M: expanded and output channels
  SgemmIsa isa = SgemmIsa::kPortable;
  std::shared_ptr<const std::vector<float>> packed;  // W1 as packed-A panels
  std::vector<int64_t> row_offsets;                  // input channel c: c * H * W
  Activation pointwise_activation;
  Activation depthwise_activation;
  int64_t row_bytes = 0;  // one expanded row of every channel
  int64_t span = 1;       // expanded rows one output row reads
  int parts = 1;          // threads, each with its own buffer
};

// How a run cuts each thread's rows, from the workspace the plan granted.
struct Bands {
  int64_t band_rows = 1;    // output rows per band
  int64_t buffer_rows = 1;  // expanded rows a band reads at most (a buffer's rows per channel)
  int64_t part_bytes = 0;   // one thread's buffer
};

// Each thread's buffer holds `buffer_rows` expanded rows: at least those of a band whose new
// rows give the 1x1 product kMinBandColumns columns (`least`; narrower products run the GEMM
// micro-kernel mostly on loads and stores: a 56-wide map at one row a band ran 2x slower), about
// kBufferBytes where the map is larger (`preferred`), never more than the map.
struct BufferRows {
  int64_t least = 1;
  int64_t preferred = 1;
};

BufferRows buffer_rows(const Plan& plan) {
  const WindowGeometry& g = plan.depthwise;
  const int64_t new_rows = g.stride[1] * g.input[2];  // expanded columns a band row adds
  const int64_t band_rows = (kMinBandColumns + new_rows - 1) / new_rows;
  const int64_t least = std::min((band_rows - 1) * g.stride[1] + plan.span, g.input[1]);
  const int64_t fitting = std::max<int64_t>(least, kBufferBytes / plan.row_bytes);
  return BufferRows{least, std::min(fitting, g.input[1])};
}

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// Expanded rows [first, end) of the map.
struct Rows {
  int64_t first = 0;
  int64_t end = 0;
};

// The bands of a run with `workspace_bytes` for `parts` threads: the tallest bands whose rows
// fit each thread's share (the plan grants between the least and the preferred buffers; the
// band height never changes a result). A thread's run of output rows is at most ceil(OH /
// parts) rows.
Bands cut_bands(const Plan& plan, int64_t parts, int64_t workspace_bytes) {
  const WindowGeometry& g = plan.depthwise;
  Bands bands;
  const int64_t share = workspace_bytes / std::max<int64_t>(parts, 1) / kAlignment * kAlignment;
  const int64_t fit = std::max(buffer_rows(plan).least, share / plan.row_bytes);
  const int64_t part_rows = (g.output[1] + parts - 1) / parts;
  bands.band_rows = std::clamp<int64_t>((fit - plan.span) / g.stride[1] + 1, 1, part_rows);
  bands.buffer_rows = std::min((bands.band_rows - 1) * g.stride[1] + plan.span, g.input[1]);
  bands.part_bytes = aligned(bands.buffer_rows * plan.row_bytes);
  return bands;
}

// One thread's run of bands over one image.
class BandWalker {
 public:
  BandWalker(const Plan& plan, const Bands& bands, const float* x, const float* w2, const float* b1,
             const float* b2, float* buffer, float* y)
      : plan_(plan), bands_(bands), x_(x), w2_(w2), b1_(b1), b2_(b2), buffer_(buffer), y_(y) {}

  void run(int64_t first, int64_t end) {
    for (int64_t band = first; band < end; band += bands_.band_rows) {
      const int64_t band_end = std::min(end, band + bands_.band_rows);
      const DepthwiseBand rows = depthwise_band(plan_.depthwise, band, band_end);
      expand(Rows{rows.first_input_row, rows.end_input_row});
      convolve(rows.geometry, band);
    }
  }

 private:
  int64_t width() const { return plan_.depthwise.input[2]; }
  int64_t channel_stride() const { return bands_.buffer_rows * width(); }

  // Brings the buffer to expanded rows `need` (buffer row 0 = need.first): keeps the held rows
  // it still reads, computes the rest.
  void expand(const Rows& need) {
    int64_t from = need.first;
    if (need.first >= held_.first && need.first < held_.end) {
      const int64_t shift = need.first - held_.first;
      const int64_t kept = std::min(held_.end, need.end) - need.first;
      if (shift > 0) {
        for (int64_t m = 0; m < plan_.channels; ++m) {
          float* rows = buffer_ + m * channel_stride();
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
    const int64_t columns = (rows.end - rows.first) * width();
    const PackedA weights{plan_.packed->data(), plan_.channels, plan_.in_channels};
    float* out = buffer_ + at * width();
    sgemm_packed_a_rows(plan_.isa, weights, 0, plan_.channels, columns, x_ + rows.first * width(),
                        plan_.row_offsets.data(), out, channel_stride());
    const Activation& activation = plan_.pointwise_activation;
    if (b1_ == nullptr && activation.kind == ActivationKind::kNone) return;
    for (int64_t m = 0; m < plan_.channels; ++m) {
      float* data = out + m * channel_stride();
      if (b1_ != nullptr) {
        const float b = b1_[m];
        map_in_place(data, columns, [b](float v) { return v + b; });
      }
      apply_activation(activation, data, columns);
    }
  }

  // Output rows from `first` on of every channel (`band` their window over the buffer's rows).
  void convolve(const WindowGeometry& band, int64_t first) const {
    const WindowGeometry& g = plan_.depthwise;
    const int64_t count = band.output_size();
    for (int64_t m = 0; m < plan_.channels; ++m) {
      float* y = y_ + m * g.output_size() + first * g.output[2];
      depthwise_conv_plane(band, buffer_ + m * channel_stride(), w2_ + m * g.kernel_size(),
                           b2_ != nullptr ? b2_[m] : 0.0f, y, true);
      apply_activation(plan_.depthwise_activation, y, count);
    }
  }

  const Plan& plan_;
  const Bands& bands_;
  const float* x_;
  const float* w2_;
  const float* b1_;
  const float* b2_;
  float* buffer_;
  float* y_;
  Rows held_;  // the expanded rows the buffer holds (buffer row 0 = held_.first)
};

class PointwiseDepthwiseKernel final : public Kernel {
 public:
  explicit PointwiseDepthwiseKernel(Plan plan) : plan_(std::move(plan)) {}

  Status run(const RunContext& context) override {
    const WindowGeometry& g = plan_.depthwise;
    const float* x = context.inputs[0].as<const float>();
    const float* b1 =
        context.inputs[2].data != nullptr ? context.inputs[2].as<const float>() : nullptr;
    const float* w2 = context.inputs[3].as<const float>();
    const float* b2 = context.inputs.size() > 4 && context.inputs[4].data != nullptr
                          ? context.inputs[4].as<const float>()
                          : nullptr;
    float* y = context.outputs[0].as<float>();
    const int64_t parts = std::min<int64_t>(plan_.parts, context.threads->thread_count());
    const Bands bands = cut_bands(plan_, parts, static_cast<int64_t>(context.workspace_bytes));
    const int64_t rows = g.output[1];
    for (int64_t n = 0; n < plan_.batch; ++n) {
      const float* image = x + n * plan_.in_channels * g.input_size();
      float* out = y + n * plan_.channels * g.output_size();
      context.threads->parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part) {
          auto* buffer = reinterpret_cast<float*>(context.workspace + part * bands.part_bytes);
          BandWalker(plan_, bands, image, w2, b1, b2, buffer, out)
              .run(part * rows / parts, (part + 1) * rows / parts);
        }
      });
    }
    return Status::ok();
  }

 private:
  Plan plan_;
};

// Inputs: X [N, C, H, W], W1 [M, C, 1, 1] (constant), B1 [M] or none, W2 [M, 1, kH, kW], B2 [M]
// or none; the attribute group == M.
Status check_inputs(const NodeContext& node) {
  for (size_t i = 0; i < 5; ++i) {
    if (i == 0 || i == 1 || i == 3 || node.has_input(i)) {
      ONEPOOL_RETURN_IF_ERROR(require_float32(node, i));
    }
  }
  const Shape& x = node.input(0).shape;
  const Shape& w1 = node.input(1).shape;
  const Shape& w2 = node.input(3).shape;
  if (x.rank() != 4 || w1.rank() != 4 || w2.rank() != 4) {
    return node.error(StatusCode::kInvalidModel, "expected 4-D X, W1 and W2, got ", x.to_string(),
                      ", ", w1.to_string(), ", ", w2.to_string());
  }
  const int64_t m = w1[0];
  if (w1 != Shape{m, x[1], 1, 1} || w2[0] != m || w2[1] != 1 ||
      node.node().attributes.get_int("group", 1) != m) {
    return node.error(StatusCode::kInvalidModel, "W1 ", w1.to_string(), " and W2 ", w2.to_string(),
                      ": expected [M, ", x[1], ", 1, 1] and [M, 1, kH, kW] with ", "group == M");
  }
  for (size_t i : {size_t{2}, size_t{4}}) {
    if (node.has_input(i) && node.input(i).shape != Shape{m}) {
      return node.error(StatusCode::kInvalidModel, "bias '", node.input(i).name,
                        "': expected shape [", m, "], got ", node.input(i).shape.to_string());
    }
  }
  if (node.constant_input(1) == nullptr) {
    return node.error(StatusCode::kUnsupported, "W1 '", node.input(1).name,
                      "' must be constant (the optimizer fuses only constant weights)");
  }
  return Status::ok();
}

// The workspace: one buffer per thread, needed (the least rows) and preferred (about
// kBufferBytes each). Both are bounds that grow with the map, so a plan made at the top of a
// shape range has room at every smaller shape.
Status size_workspace(const NodeContext& node, Plan& plan, PreparedKernel& prepared) {
  const WindowGeometry& g = plan.depthwise;
  ONEPOOL_ASSIGN_OR_RETURN(plan.row_bytes,
                           checked_mul(plan.channels, g.input[2] * kFloat, "expanded row bytes"));
  plan.span = (g.kernel[1] - 1) * g.dilation[1] + 1;
  plan.parts = static_cast<int>(std::clamp<int64_t>(node.threads(), 1, g.output[1]));
  const BufferRows rows = buffer_rows(plan);
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t least,
                           checked_mul(rows.least, plan.row_bytes, "fused 1x1 + depthwise buffer"));
  const int64_t preferred = rows.preferred * plan.row_bytes;  // at most the expanded map
  prepared.workspace_bytes = static_cast<size_t>(plan.parts * aligned(least));
  prepared.workspace_preferred_bytes = static_cast<size_t>(plan.parts * aligned(preferred));
  return Status::ok();
}

}  // namespace

Expected<PreparedKernel> make_pointwise_depthwise_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_inputs(node));
  Plan plan;
  const Shape& x = node.input(0).shape;
  plan.batch = x[0];
  plan.in_channels = x[1];
  plan.channels = node.input(1).shape[0];
  const Shape expanded{x[0], plan.channels, x[2], x[3]};
  const Shape& w2 = node.input(3).shape;
  const std::vector<int64_t> kernel{w2[2], w2[3]};
  if (node.node().attributes.get_ints("kernel_shape", kernel) != kernel) {
    return node.error(StatusCode::kInvalidModel, "attribute 'kernel_shape' disagrees with W2 ",
                      w2.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(plan.depthwise, make_forward_geometry(node, expanded, kernel, {}));
  const WindowGeometry& g = plan.depthwise;
  ONEPOOL_RETURN_IF_ERROR(
      check_output_shape(node, 0, Shape{plan.batch, plan.channels, g.output[1], g.output[2]}));
  PreparedKernel prepared;
  ONEPOOL_RETURN_IF_ERROR(size_workspace(node, plan, prepared));
  plan.isa = sgemm_isa_for(node.cpu_isa());
  for (int64_t c = 0; c < plan.in_channels; ++c) plan.row_offsets.push_back(c * g.input_size());
  const HostTensor& w1 = *node.constant_input(1);
  const int64_t m = plan.channels, k = plan.in_channels;
  const SgemmIsa isa = plan.isa;
  plan.packed = node.packed_weight(1, PackedLayout::kConvPanels, static_cast<uint8_t>(isa), 1, [&] {
    auto packed =
        std::make_shared<std::vector<float>>(static_cast<size_t>(packed_a_floats(isa, m, k)));
    pack_a(isa, w1.as<float>(), m, k, k, packed->data());
    return std::shared_ptr<const std::vector<float>>(std::move(packed));
  });
  const AttributeMap& attributes = node.node().attributes;
  plan.pointwise_activation = parse_activation(attributes, "onepool_pointwise_");
  plan.depthwise_activation = parse_activation(attributes);
  prepared.implementation = std::string("1x1 + depthwise fused ") + sgemm_isa_name(isa);
  prepared.kernel = std::make_unique<PointwiseDepthwiseKernel>(std::move(plan));
  return prepared;
}

}  // namespace onepool::cpu::nn
