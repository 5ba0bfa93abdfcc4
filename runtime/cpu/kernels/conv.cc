// The Conv kernel: prepare picks the depthwise, pointwise or im2col path (see conv_kernels.h).

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/conv_depthwise.h"
#include "runtime/cpu/kernels/conv_depthwise_blocked.h"
#include "runtime/cpu/kernels/conv_depthwise_masked.h"
#include "runtime/cpu/kernels/conv_dnnl.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/conv_im2col.h"
#include "runtime/cpu/kernels/conv_implicit.h"
#include "runtime/cpu/kernels/conv_kernels.h"
#include "runtime/cpu/kernels/conv_winograd.h"
#include "runtime/cpu/kernels/gemm_blas.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu::nn {
namespace {

enum class ConvPath : uint8_t { kDepthwise, kPointwise, kIm2col, kImplicit, kWinograd };

struct ConvPlan {
  WindowGeometry geometry;
  ConvPath path = ConvPath::kIm2col;
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  int64_t row_bytes = 0;  // im2col bytes of one output row (one od, oh pair)
  SgemmIsa isa = SgemmIsa::kPortable;
  bool depthwise_blocked = false;  // ConvPath::kDepthwise on blocks of 16 (AVX-512) or 8 channels
  bool depthwise_masked = false;   // ConvPath::kDepthwise as masked flat vectors (AVX-512)
  DepthwiseMasks depthwise_masks;  // their masks, made at prepare time
  int64_t packed_bytes = 0;        // one group's packed weights, at the workspace's start (0 when
                                   // prepacked)
  int64_t packed_floats = 0;       // one group's packed weights
  // Every group's weights packed at Session creation when they are constant (the common case):
  // the Session holds them, the pool does not. Shared by the copies of the plan.
  std::shared_ptr<const std::vector<float>> prepacked;
  int64_t tile_rows = 1;                 // output rows per column tile
  int64_t tile_bytes = 0;                // one tile's column matrix (64-byte aligned)
  int64_t parts = 1;                     // column tiles in the workspace: one per thread
  ImplicitGemmPlan implicit;             // ConvPath::kImplicit
  std::optional<WinogradPlan> winograd;  // ConvPath::kWinograd
  // The same in the least workspace it runs in (winograd_least_plan), when that is smaller: run()
  // takes it where the plan granted less than `winograd` prefers.
  std::optional<WinogradPlan> winograd_least;
  Activation activation;
  // A fused residual Add (planner/optimize/fuse_residual.cc): input 3, the output's shape, added
  // after the bias and before the activation.
  bool residual = false;
  // The im2col or implicit GEMM finishes its tiles in registers (bias, residual, activation:
  // sgemm_epilogue.h), or Winograd's output transform adds the residual before the activation:
  // no pass over Y follows.
  bool epilogue_in_tiles = false;
};

// The GEMM reads the column matrix in place, a tile of whole output rows at a time: about
// kTileColumns columns and at most kTileBytes, so the rows of B the micro-kernel walks stay in
// the core's cache (wider tiles fall off quickly: 94 GFLOP/s at 160-320 columns, 53 at 2,560, 13
// at 6,400 for a 64 x 576 product on one AVX-512 core). Each thread fills and multiplies its own
// tile, so the workspace holds one group's packed weights and one tile per thread; 2 threads on
// PaddleOCR det's 3x3 convs need under 1.1 MiB where the OpenBLAS path preferred 2 MiB.
constexpr int64_t kTileColumns = 256;
constexpr int64_t kTileBytes = int64_t{512} << 10;
constexpr int64_t kWorkspaceAlignment = 64;

int64_t aligned_bytes(int64_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

// Y may take over the fused residual's bytes (input 3) when every output element is written once,
// by the GEMM's tile epilogue, right after that element's residual was read: the im2col and
// implicit GEMMs finishing their tiles in registers, on the channel vectors (whose partial sums
// wait in a buffer of their own) or on column tiles whose k fits one block (deeper products keep
// partial sums in Y between blocks). Winograd's output transform writes Y before adding the
// residual (and its non-finite fallback reads the residual again); the other paths add it in a
// pass of their own.
bool residual_in_place_safe(const ConvPlan& plan) {
  if (!plan.residual || !plan.epilogue_in_tiles) return false;
  if (plan.path == ConvPath::kImplicit && plan.implicit.channels) return true;
  const int64_t depth = plan.in_channels / plan.group * plan.geometry.kernel_size();
  return (plan.path == ConvPath::kImplicit || plan.path == ConvPath::kIm2col) &&
         sgemm_writes_once(plan.isa, depth);
}

// Whether writing over the residual pays: where the threads share the output's positions (each
// its own rows, the ones it read as the residual and wrote in the nodes before). Where they share
// the output channels of a small map, the residual is mostly a block's input that the node before
// read on both cores: writing over it made each core claim lines the other one held, and
// ResNet-50's 14x14 1x1 convolutions onto 1024 channels ran 1.28x longer at two threads (0.95x at
// one) than when writing fresh bytes.
bool residual_in_place_pays(const ConvPlan& plan, int threads) {
  const WindowGeometry& g = plan.geometry;
  if (threads <= 1) return true;
  if (plan.path == ConvPath::kImplicit) {
    return implicit_threads_share_positions(g, plan.implicit, plan.in_channels / plan.group,
                                            plan.out_channels / plan.group, plan.epilogue_in_tiles,
                                            threads);
  }
  const int64_t output_rows = g.output[0] * g.output[1];
  return (output_rows + plan.tile_rows - 1) / plan.tile_rows > 1;  // im2col: tiles per thread
}

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const ConvPlan& plan) : plan_(plan) {}

  Status run(const RunContext& context) override {
    const WindowGeometry& g = plan_.geometry;
    const float* x = context.inputs[0].as<const float>();
    const float* w = context.inputs[1].as<const float>();
    const float* bias = context.inputs.size() > 2 ? context.inputs[2].as<const float>() : nullptr;
    const float* residual = plan_.residual ? context.inputs[3].as<const float>() : nullptr;
    float* y = context.outputs[0].as<float>();
    if (residual == y && residual != nullptr && !residual_in_place_safe(plan_)) {
      return make_status(StatusCode::kInternal,
                         "Conv: the output shares the residual's bytes, which its path does not "
                         "allow (each output must be written once, after its residual was read)");
    }
    if (plan_.path == ConvPath::kIm2col && plan_.epilogue_in_tiles) {
      run_gemm_paths(x, w, y, context, bias, residual);
      return Status::ok();
    }
    if (plan_.path == ConvPath::kIm2col || plan_.path == ConvPath::kPointwise) {
      if (plan_.path == ConvPath::kPointwise) {
        run_pointwise(x, w, y, *context.threads);
      } else {
        run_gemm_paths(x, w, y, context, nullptr, nullptr);
      }
      add_bias_activation(y, bias, plan_.batch, plan_.out_channels, g.output_size(),
                          plan_.activation, *context.threads, residual);
      return Status::ok();
    }
    if (plan_.path == ConvPath::kImplicit && plan_.epilogue_in_tiles) {
      run_implicit_images(x, w, bias, residual, plan_.activation, y, context);
      return Status::ok();
    }
    if (plan_.path == ConvPath::kWinograd && plan_.epilogue_in_tiles) {
      run_winograd_images(x, w, WinogradEpilogue{bias, nullptr, plan_.activation}, residual, y,
                          context);
      return Status::ok();
    }
    // The other paths (depthwise, dilated Winograd, a GEMM whose activation the micro-kernels do
    // not compute) finish their output tile by tile. With a residual, their activation waits for
    // one last pass that adds it, streamed over the whole output as the Add node read it.
    const Activation tile_activation = plan_.residual ? Activation{} : plan_.activation;
    if (plan_.path == ConvPath::kDepthwise) {
      const DepthwiseConv conv{x,
                               w,
                               bias,
                               y,
                               plan_.batch,
                               plan_.in_channels,
                               plan_.out_channels / plan_.in_channels,
                               plan_.isa == SgemmIsa::kAvx512};
      if (plan_.depthwise_masked) {
        depthwise_conv_masked(g, plan_.depthwise_masks, conv, tile_activation, *context.threads);
      } else if (plan_.depthwise_blocked) {
        depthwise_conv_blocked(g, conv, tile_activation, *context.threads, plan_.isa);
      } else {
        depthwise_conv(g, conv, tile_activation, *context.threads);
      }
    } else if (plan_.path == ConvPath::kWinograd) {
      run_winograd_images(x, w, WinogradEpilogue{bias, nullptr, tile_activation}, nullptr, y,
                          context);
    } else {
      run_implicit_images(x, w, bias, nullptr, tile_activation, y, context);
    }
    if (residual != nullptr) {
      add_bias_activation(y, nullptr, plan_.batch, plan_.out_channels, g.output_size(),
                          plan_.activation, *context.threads, residual);
    }
    return Status::ok();
  }

 private:
  // Each image; `residual` (the whole output's, or nullptr) is offset per image.
  void run_winograd_images(const float* x, const float* w, WinogradEpilogue epilogue,
                           const float* residual, float* y, const RunContext& context) const {
    const WindowGeometry& g = plan_.geometry;
    // Blocks of the size the granted workspace holds (the bits do not depend on it).
    const bool least =
        plan_.winograd_least &&
        context.workspace_bytes < static_cast<size_t>(plan_.winograd->workspace_bytes());
    const WinogradPlan& winograd = least ? *plan_.winograd_least : *plan_.winograd;
    for (int64_t n = 0; n < plan_.batch; ++n) {
      const int64_t y_offset = n * plan_.out_channels * g.output_size();
      epilogue.residual = residual == nullptr ? nullptr : residual + y_offset;
      run_winograd(g, winograd, x + n * plan_.in_channels * g.input_size(), w, epilogue,
                   y + y_offset, context.workspace, *context.threads);
    }
  }

  // 1x1 / stride 1 / no padding: Y = W * X per image and group, on OpenBLAS (only machines
  // without AVX2 + FMA come here, see choose_path).
  void run_pointwise(const float* x, const float* w, float* y, ThreadPool& threads) const {
    const int64_t in_group = plan_.in_channels / plan_.group;
    const int64_t out_group = plan_.out_channels / plan_.group;
    const int64_t columns = plan_.geometry.output_size();
    for (int64_t n = 0; n < plan_.batch; ++n) {
      for (int64_t group = 0; group < plan_.group; ++group) {
        const GemmShape shape{false,    false,    out_group, columns,
                              in_group, in_group, columns,   columns};
        gemm(shape, 1.0f, w + group * out_group * in_group,
             x + (n * plan_.in_channels + group * in_group) * columns, 0.0f,
             y + (n * plan_.out_channels + group * out_group) * columns, &threads);
      }
    }
  }

  // The implicit GEMM per group and image, its epilogue (bias, residual when given, activation)
  // applied in the tiles or band by band.
  void run_implicit_images(const float* x, const float* w, const float* bias, const float* residual,
                           const Activation& activation, float* y,
                           const RunContext& context) const {
    const WindowGeometry& g = plan_.geometry;
    const int64_t in_group = plan_.in_channels / plan_.group;
    const int64_t out_group = plan_.out_channels / plan_.group;
    for (int64_t group = 0; group < plan_.group; ++group) {
      const float* packed = group_weights(w, group, context.workspace);
      for (int64_t n = 0; n < plan_.batch; ++n) {
        const int64_t y_offset = (n * plan_.out_channels + group * out_group) * g.output_size();
        const BandEpilogue epilogue{bias == nullptr ? nullptr : bias + group * out_group,
                                    residual == nullptr ? nullptr : residual + y_offset,
                                    activation};
        run_implicit_gemm(g, plan_.implicit, plan_.isa, packed, out_group, in_group,
                          x + (n * plan_.in_channels + group * in_group) * g.input_size(),
                          y + y_offset, epilogue, context.workspace + plan_.packed_bytes,
                          *context.threads);
      }
    }
  }

  // The im2col path on OnePool's GEMM; with epilogue_in_tiles, its tiles finished in registers
  // (bias and residual may be nullptr), else left for add_bias_activation.
  void run_gemm_paths(const float* x, const float* w, float* y, const RunContext& context,
                      const float* bias, const float* residual) const {
    const WindowGeometry& g = plan_.geometry;
    const int64_t in_group = plan_.in_channels / plan_.group;
    const int64_t out_group = plan_.out_channels / plan_.group;
    for (int64_t group = 0; group < plan_.group; ++group) {
      const float* packed = group_weights(w, group, context.workspace);
      for (int64_t n = 0; n < plan_.batch; ++n) {
        const int64_t y_offset = (n * plan_.out_channels + group * out_group) * g.output_size();
        const GroupImage image{x + (n * plan_.in_channels + group * in_group) * g.input_size(),
                               packed, y + y_offset,
                               bias == nullptr ? nullptr : bias + group * out_group,
                               residual == nullptr ? nullptr : residual + y_offset};
        run_group(image, context, *context.threads);
      }
    }
  }

  // The packed weights of `group`: prepacked, or packed now at the workspace's start.
  const float* group_weights(const float* w, int64_t group, std::byte* workspace) const {
    if (plan_.prepacked) {
      return line_aligned(plan_.prepacked->data()) + group * plan_.packed_floats;
    }
    const int64_t out_group = plan_.out_channels / plan_.group;
    const int64_t depth = plan_.in_channels / plan_.group * plan_.geometry.kernel_size();
    auto* packed = reinterpret_cast<float*>(workspace);
    pack_a(plan_.isa, w + group * out_group * depth, out_group, depth, depth, packed);
    return packed;
  }

  // One group of one image: its input planes, the group's packed weights, its output planes and,
  // when the tiles finish it, the group's biases and the output's residual (or nullptr).
  struct GroupImage {
    const float* x;
    const float* packed;
    float* y;
    const float* bias;
    const float* residual;
  };

  // The column tiles of one group of one image: tile t is output rows [t * tile_rows, ...).
  // With at least as many tiles as threads, each thread fills and multiplies a contiguous run of
  // whole tiles in its own part of the workspace (the rows it wrote in the previous node); with
  // fewer (small maps), each tile is filled by all the threads and its product split over the
  // panels of A.
  void run_group(const GroupImage& image, const RunContext& context, ThreadPool& threads) const {
    const WindowGeometry& g = plan_.geometry;
    const int64_t output_rows = g.output[0] * g.output[1];
    const int64_t tiles = (output_rows + plan_.tile_rows - 1) / plan_.tile_rows;
    std::byte* columns = context.workspace + plan_.packed_bytes;
    const int64_t parts = std::min<int64_t>({plan_.parts, threads.thread_count(), tiles});
    if (parts > 1 || threads.thread_count() == 1) {
      threads.parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part) {
          auto* col = reinterpret_cast<float*>(columns + part * plan_.tile_bytes);
          const Share run = contiguous_share(tiles, part, parts);  // a contiguous run of tiles
          for (int64_t tile = run.begin; tile < run.end; ++tile) {
            run_tile(image, tile, col, 0, plan_.out_channels / plan_.group);
          }
        }
      });
      return;
    }
    auto* col = reinterpret_cast<float*>(columns);
    for (int64_t tile = 0; tile < tiles; ++tile) run_tile_on_all_threads(image, tile, col, threads);
  }

  // Output rows of tile `tile`, output channels [first_channel, end_channel) of the group.
  void run_tile(const GroupImage& image, int64_t tile, float* col, int64_t first_channel,
                int64_t end_channel, bool fill = true) const {
    const WindowGeometry& g = plan_.geometry;
    const int64_t depth = plan_.in_channels / plan_.group * g.kernel_size();
    const int64_t first_row = tile * plan_.tile_rows;
    const int64_t rows = std::min(plan_.tile_rows, g.output[0] * g.output[1] - first_row);
    const int64_t width = rows * g.output[2];
    if (fill) im2col_matrix_rows(g, image.x, first_row, rows, 0, depth, col);
    const PackedA weights{image.packed, plan_.out_channels / plan_.group, depth};
    const int64_t y_offset = first_channel * g.output_size() + first_row * g.output[2];
    const GemmEpilogue epilogue{image.bias == nullptr ? nullptr : image.bias + first_channel,
                                image.residual == nullptr ? nullptr : image.residual + y_offset,
                                plan_.activation};
    sgemm_packed_a(plan_.isa, weights, first_channel, end_channel - first_channel, width, col,
                   width, image.y + y_offset, g.output_size(),
                   plan_.epilogue_in_tiles ? &epilogue : nullptr);
  }

  void run_tile_on_all_threads(const GroupImage& image, int64_t tile, float* col,
                               ThreadPool& threads) const {
    const WindowGeometry& g = plan_.geometry;
    const int64_t first_row = tile * plan_.tile_rows;
    const int64_t rows = std::min(plan_.tile_rows, g.output[0] * g.output[1] - first_row);
    im2col_rows(g, image.x, plan_.in_channels / plan_.group, first_row, rows, col, threads);
    // Whole panels of A per part: a panel's rows start at a multiple of the panel height.
    const int64_t channels = plan_.out_channels / plan_.group;
    const int64_t panel = sgemm_panel_rows(plan_.isa);
    const int64_t panels = (channels + panel - 1) / panel;
    threads.parallel_for(panels, 1, [&](int64_t begin, int64_t end) {
      run_tile(image, tile, col, begin * panel, std::min(channels, end * panel), false);
    });
  }

  ConvPlan plan_;
};

// Kernel spatial dims from W [M, C/group, k...], checked against a kernel_shape attribute.
Expected<std::vector<int64_t>> kernel_dims(const NodeContext& node, const Shape& w) {
  std::vector<int64_t> dims(w.begin() + std::min(2, w.rank()), w.end());
  const std::vector<int64_t> attr = node.node().attributes.get_ints("kernel_shape", dims);
  if (attr != dims) {
    return node.error(StatusCode::kInvalidModel, "attribute 'kernel_shape' disagrees with weight '",
                      node.input(1).name, "' of shape ", w.to_string());
  }
  return dims;
}

// Checks X, W and B agree on channels and group; fills the channel counts of `plan`.
Status check_channels(const NodeContext& node, ConvPlan& plan) {
  const Shape& x = node.input(0).shape;
  const Shape& w = node.input(1).shape;
  plan.group = node.node().attributes.get_int("group", 1);
  if (w.rank() != x.rank() || x.rank() < 3) {
    return node.error(StatusCode::kInvalidModel, "weight '", node.input(1).name, "' shape ",
                      w.to_string(), " and input '", node.input(0).name, "' shape ", x.to_string(),
                      ": expected the same rank, at least 3");
  }
  plan.batch = x[0];
  plan.in_channels = x[1];
  plan.out_channels = w[0];
  if (plan.group < 1 || plan.in_channels % plan.group != 0 || plan.out_channels % plan.group != 0 ||
      w[1] * plan.group != plan.in_channels) {
    return node.error(StatusCode::kInvalidModel, "group ", plan.group, ": input channels ",
                      plan.in_channels, " and weight shape ", w.to_string(),
                      " do not agree (expected W[1] * group == C_in, C_out % group == 0)");
  }
  if (node.has_input(2) && node.input(2).shape != Shape{plan.out_channels}) {
    return node.error(StatusCode::kInvalidModel, "bias '", node.input(2).name,
                      "': expected shape [", plan.out_channels, "], got ",
                      node.input(2).shape.to_string());
  }
  return Status::ok();
}

// The fused residual input (index 3), when there is one: float32 and the output's exact shape.
Status check_residual(const NodeContext& node, ConvPlan& plan) {
  plan.residual = node.has_input(3);
  if (!plan.residual) return Status::ok();
  ONEPOOL_RETURN_IF_ERROR(require_float32(node, 3));
  if (node.input(3).shape != node.output(0).shape) {
    return node.error(StatusCode::kInvalidModel, "residual input '", node.input(3).name,
                      "': expected the output's shape ", node.output(0).shape.to_string(), ", got ",
                      node.input(3).shape.to_string());
  }
  return Status::ok();
}

// Packs every group's weights (W is [C_out, C_in / group, k...], so group g's rows follow
// group g - 1's) into plan.prepacked, or takes the copy another Session of the Model packed:
// for the channel-vector GEMM (sgemm_channels.h; one group) or for sgemm_packed's panels.
void prepack_weights(const NodeContext& node, const HostTensor& weights, int64_t depth,
                     bool channels, ConvPlan& plan) {
  const int64_t out_group = plan.out_channels / plan.group;
  const PackedLayout layout =
      channels ? PackedLayout::kConvChannelPanels : PackedLayout::kConvPanels;
  plan.prepacked = node.packed_weight(1, layout, static_cast<uint8_t>(plan.isa), plan.group, [&] {
    auto packed = std::make_shared<std::vector<float>>(
        static_cast<size_t>(plan.group * plan.packed_floats + kLineFloats));
    for (int64_t group = 0; group < plan.group; ++group) {
      const float* filters = weights.as<float>() + group * out_group * depth;
      float* out = line_aligned(packed->data()) + group * plan.packed_floats;
      if (channels) {
        pack_a_channels(filters, out_group, depth, depth, out);
      } else {
        pack_a(plan.isa, filters, out_group, depth, depth, out);
      }
    }
    return std::shared_ptr<const std::vector<float>>(std::move(packed));
  });
}

const char* path_name(ConvPath path) {
  switch (path) {
    case ConvPath::kDepthwise:
      return "depthwise direct";
    case ConvPath::kPointwise:
      return "pointwise sgemm";
    case ConvPath::kIm2col:
      return "im2col+gemm";
    case ConvPath::kImplicit:
      return "implicit gemm";
    case ConvPath::kWinograd:
      return "winograd f(2x2,3x3) gemm";
  }
  return "";
}

// "winograd f(4x4,3x3) gemm avx512", "winograd f(2x2,3x3) channels avx512" (its products on the
// channel vectors), ...
std::string winograd_name(const WinogradPlan& plan) {
  return std::string(plan.tile == 4 ? "winograd f(4x4,3x3) " : "winograd f(2x2,3x3) ") +
         (plan.channel_vectors ? "channels " : "gemm ") + sgemm_isa_name(plan.isa);
}

struct WorkspaceBytes {
  size_t needed = 0;
  size_t preferred = 0;
};

// Chooses the path and returns the workspace it needs and prefers (im2col tiles of one group
// of one image).
Expected<WorkspaceBytes> choose_path(const NodeContext& node, ConvPlan& plan) {
  const WindowGeometry& g = plan.geometry;
  if (plan.group == plan.in_channels && plan.group > 1) {
    plan.path = ConvPath::kDepthwise;
    plan.isa = sgemm_isa_for(node.cpu_isa());
    const int64_t multiplier = plan.out_channels / plan.in_channels;
    plan.depthwise_masked = depthwise_masked_fits(g, multiplier, plan.isa);
    if (plan.depthwise_masked) plan.depthwise_masks = depthwise_masks(g);
    plan.depthwise_blocked =
        !plan.depthwise_masked && depthwise_blocked_fits(g, multiplier, plan.isa);
    return WorkspaceBytes{};
  }
  plan.path = g.is_pointwise() ? ConvPath::kPointwise : ConvPath::kIm2col;
  ONEPOOL_ASSIGN_OR_RETURN(int64_t depth, checked_mul(plan.in_channels / plan.group,
                                                      g.kernel_size(), "conv im2col rows"));
  ONEPOOL_ASSIGN_OR_RETURN(int64_t col, checked_mul(depth, g.output_size(), "conv im2col size"));
  if (depth > INT_MAX || g.output_size() > INT_MAX || plan.out_channels > INT_MAX) {
    return node.error(StatusCode::kUnsupported, "GEMM dims ", plan.out_channels, " x ",
                      g.output_size(), " x ", depth, " exceed the BLAS int range");
  }
  // 1x1 convs (stride 1, no padding) run as an implicit GEMM on X as it is, with the weights
  // packed once; measured faster than OpenBLAS's sgemm on every bench model (ResNet-50,
  // PaddleOCR det/rec, M-LSD, BlazeFace; MobileNetV2 even). Only without AVX2 + FMA, where the
  // portable micro-kernel is slow, do they stay one OpenBLAS GEMM.
  const SgemmIsa isa = sgemm_isa_for(node.cpu_isa());
  if (plan.path == ConvPath::kPointwise && isa == SgemmIsa::kPortable) {
    return WorkspaceBytes{};
  }
  if (plan.path == ConvPath::kPointwise) plan.path = ConvPath::kIm2col;
  plan.isa = isa;
  // 3x3 stride 1 with constant weights: Winograd F(2x2, 3x3) or F(4x4, 3x3), 2.25x or 4x fewer
  // multiply-adds.
  const HostTensor* constant_weights = node.constant_input(1);
  if (constant_weights != nullptr &&
      winograd_fits(g, plan.group, plan.in_channels, plan.out_channels)) {
    const WinogradWeightSharing share = [&](PackedLayout layout,
                                            const PackedWeightCache::Factory& pack) {
      return node.packed_weight(1, layout, static_cast<uint8_t>(isa), winograd_tile(g), pack);
    };
    plan.winograd = plan_winograd(g, isa, constant_weights->as<float>(), plan.in_channels,
                                  plan.out_channels, node.threads(), share);
    if (plan.winograd) {
      plan.path = ConvPath::kWinograd;
      plan.winograd_least = winograd_least_plan(*plan.winograd);
      const auto preferred = static_cast<size_t>(plan.winograd->workspace_bytes());
      const auto needed = plan.winograd_least
                              ? static_cast<size_t>(plan.winograd_least->workspace_bytes())
                              : preferred;
      return WorkspaceBytes{needed, preferred};
    }
  }
  // The channel-vector GEMM where implicit_channels_fit (AVX-512, constant weights, one group).
  const bool channels = isa == SgemmIsa::kAvx512 && constant_weights != nullptr &&
                        plan.group == 1 &&
                        implicit_channels_fit(g, plan.in_channels, plan.out_channels);
  // One group's packed weights, then one column tile per thread.
  const int64_t panel_floats = channels
                                   ? channel_packed_floats(plan.out_channels, 1)
                                   : packed_a_floats(plan.isa, plan.out_channels / plan.group, 1);
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t packed_floats,
                           checked_mul(panel_floats, depth, "conv packed weights"));
  plan.packed_floats = packed_floats;
  plan.packed_bytes = aligned_bytes(packed_floats * static_cast<int64_t>(sizeof(float)));
  if (constant_weights != nullptr) {
    prepack_weights(node, *constant_weights, depth, channels, plan);
    plan.packed_bytes = 0;
  }
  (void)col;  // computed for its overflow check: every tile is a part of it
  // Stride 1 with wide enough output rows: no column matrix at all (conv_implicit.h); and any
  // convolution the channel vectors take.
  if (channels || implicit_gemm_fits(g)) {
    plan.path = ConvPath::kImplicit;
    plan.implicit = plan_implicit_gemm(g, plan.in_channels / plan.group,
                                       plan.out_channels / plan.group, node.threads(), channels);
    const auto bytes =
        static_cast<size_t>(plan.packed_bytes + plan.implicit.parts * plan.implicit.part_bytes);
    return WorkspaceBytes{bytes, bytes};
  }
  ONEPOOL_ASSIGN_OR_RETURN(plan.row_bytes, checked_mul(depth * static_cast<int64_t>(sizeof(float)),
                                                       g.output[2], "conv im2col row bytes"));
  // Each thread takes a contiguous run of tiles: shared out evenly (ResNet-50's stride-2 1x1 on
  // 28 rows took tiles of 9, 9, 9 and 1 rows, 18 rows for one thread and 10 for the other).
  const int64_t output_rows = std::max<int64_t>(1, g.output[0] * g.output[1]);
  plan.tile_rows = balanced_band_rows(
      output_rows,
      std::clamp<int64_t>(
          std::min(kTileColumns / std::max<int64_t>(1, g.output[2]), kTileBytes / plan.row_bytes),
          1, output_rows),
      node.threads());
  // Declared as a bound that grows with the output width (a tile of whole rows holds at most
  // max(kTileColumns, OW) columns and max(kTileBytes, one row) bytes), so that a plan made at
  // the top of a shape range has room at every smaller shape (DynamicSession).
  const int64_t column_bytes = plan.row_bytes / std::max<int64_t>(1, g.output[2]);
  plan.tile_bytes = aligned_bytes(std::min(column_bytes * std::max(kTileColumns, g.output[2]),
                                           std::max(kTileBytes, plan.row_bytes)));
  plan.parts = node.threads();
  const auto bytes = static_cast<size_t>(plan.packed_bytes + plan.parts * plan.tile_bytes);
  return WorkspaceBytes{bytes, bytes};
}

}  // namespace

Expected<PreparedKernel> make_conv_kernel(const NodeContext& node) {
  // Step 1. Dtypes, channels and group.
  for (size_t i = 0; i < 3; ++i) {
    if (i < 2 || node.has_input(i)) ONEPOOL_RETURN_IF_ERROR(require_float32(node, i));
  }
  ConvPlan plan;
  ONEPOOL_RETURN_IF_ERROR(check_channels(node, plan));
  // Step 2. Geometry and the expected output shape.
  const Shape& x = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(auto kernel, kernel_dims(node, node.input(1).shape));
  ONEPOOL_ASSIGN_OR_RETURN(plan.geometry, make_forward_geometry(node, x, kernel, {}));
  Shape expected{plan.batch, plan.out_channels};
  for (int i = 0; i < plan.geometry.spatial_rank; ++i) {
    expected.push_back(plan.geometry.output[normalized_axis(plan.geometry.spatial_rank, i)]);
  }
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 0, expected));
  ONEPOOL_RETURN_IF_ERROR(check_residual(node, plan));
  // Step 3. Path, workspace and epilogue.
  plan.activation = parse_activation(node.node().attributes);
  PreparedKernel prepared;
  ONEPOOL_ASSIGN_OR_RETURN(const WorkspaceBytes workspace, choose_path(node, plan));
  plan.epilogue_in_tiles =
      (plan.path == ConvPath::kIm2col && gemm_epilogue_supports(plan.activation)) ||
      (plan.path == ConvPath::kImplicit &&
       implicit_epilogue_in_tiles(plan.implicit, plan.activation, plan.residual)) ||
      (plan.path == ConvPath::kWinograd && winograd_takes_residual(plan.geometry));
  // oneDNN, when built in, takes the convolutions im2col would run (measured faster there; the
  // depthwise and pointwise paths stay ours, see conv_dnnl.h).
  if (plan.path == ConvPath::kIm2col && !plan.residual) {
    const DnnlConvCase conv{plan.geometry,     plan.batch, plan.in_channels,
                            plan.out_channels, plan.group, plan.activation};
    std::optional<PreparedKernel> dnnl = make_dnnl_conv_kernel(node, conv);
    if (dnnl) return std::move(*dnnl);
  }
  if (residual_in_place_safe(plan) && residual_in_place_pays(plan, node.threads())) {
    prepared.in_place_inputs = kInPlaceInput3;
  }
  prepared.workspace_bytes = workspace.needed;
  prepared.workspace_preferred_bytes = workspace.preferred;
  prepared.implementation =
      plan.path == ConvPath::kWinograd ? winograd_name(*plan.winograd)
      : plan.path == ConvPath::kDepthwise && plan.depthwise_masked
          ? std::string("depthwise masked ") + sgemm_isa_name(plan.isa)
      : plan.path == ConvPath::kDepthwise && plan.depthwise_blocked
          ? std::string("depthwise blocked ") + sgemm_isa_name(plan.isa)
      : plan.path == ConvPath::kDepthwise &&
              depthwise_stride_two_direct(plan.geometry, plan.out_channels / plan.in_channels,
                                          plan.isa == SgemmIsa::kAvx512)
          ? std::string("depthwise stride-2 avx512")
      : plan.path == ConvPath::kDepthwise ? std::string(path_name(plan.path))
      : plan.path == ConvPath::kPointwise ? std::string(path_name(plan.path)) + " openblas"
      : plan.path == ConvPath::kImplicit && plan.implicit.channels
          ? std::string(path_name(plan.path)) + " channels " + sgemm_isa_name(plan.isa)
          : std::string(path_name(plan.path)) + " " + sgemm_isa_name(plan.isa);
  prepared.kernel = std::make_unique<ConvKernel>(plan);
  return prepared;
}

}  // namespace onepool::cpu::nn
