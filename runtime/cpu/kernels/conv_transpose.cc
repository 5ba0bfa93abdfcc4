// The ConvTranspose kernel. Kernel == stride with constant weights (2x2 stride-2 upsampling) runs
// as packed GEMMs that write Y directly (conv_transpose_taps.h); the others, per image and group,
// col = W_g^T * X_g (sgemm into the workspace), then col2im adds each column entry into Y; bias and
// the fused activation come last. X_g is taken a tile of whole rows at a time: as many as 2 MiB of
// col holds (see Conv's im2col tiles), so the workspace stays bounded. The tile is fixed by the
// shapes, never by the workspace a plan grants: the GEMM's rounding depends on its width, and
// col2im's order of additions on the tiles' rows, so a plan that granted fewer bytes changed
// U-Net's outputs in the last bit.

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/conv_im2col.h"
#include "runtime/cpu/kernels/conv_kernels.h"
#include "runtime/cpu/kernels/conv_transpose_taps.h"
#include "runtime/cpu/kernels/gemm_blas.h"

namespace onepool::cpu::nn {
namespace {

struct TransposePlan {
  WindowGeometry geometry;  // input = Y spatial, output = X spatial
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  Activation activation;
  int64_t row_bytes = 0;  // col bytes of one X row (one od, oh pair of the geometry's output)
  int64_t tile_rows = 1;  // X rows per tile
};

constexpr int64_t kColTileBytes = int64_t{2} << 20;

// Whole X rows whose col fits `bytes`.
int64_t col_rows_within(const TransposePlan& plan, int64_t bytes) {
  return whole_rows_within(bytes, plan.row_bytes,
                           plan.geometry.output[0] * plan.geometry.output[1]);
}

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const TransposePlan& plan) : plan_(plan) {}

  Status run(const RunContext& context) override {
    const WindowGeometry& g = plan_.geometry;
    const float* x = context.inputs[0].as<const float>();
    const float* w = context.inputs[1].as<const float>();
    const float* bias = context.inputs.size() > 2 ? context.inputs[2].as<const float>() : nullptr;
    float* y = context.outputs[0].as<float>();
    const int64_t in_group = plan_.in_channels / plan_.group;
    const int64_t out_group = plan_.out_channels / plan_.group;
    const int64_t rows = out_group * g.kernel_size();
    const int64_t x_size = g.output_size();
    float* col = reinterpret_cast<float*>(context.workspace);
    const int64_t x_rows = g.output[0] * g.output[1];
    const int64_t tile_rows = plan_.tile_rows;
    std::memset(y, 0, context.outputs[0].bytes());
    for (int64_t n = 0; n < plan_.batch; ++n) {
      for (int64_t group = 0; group < plan_.group; ++group) {
        const float* x_group = x + (n * plan_.in_channels + group * in_group) * x_size;
        float* y_group = y + (n * plan_.out_channels + group * out_group) * g.input_size();
        for (int64_t row = 0; row < x_rows; row += tile_rows) {
          const int64_t count = std::min(tile_rows, x_rows - row);
          const int64_t tile = count * g.output[2];
          const GemmShape shape{true, false, rows, tile, in_group, rows, x_size, tile};
          gemm(shape, 1.0f, w + group * in_group * rows, x_group + row * g.output[2], 0.0f, col,
               context.threads);
          col2im_add_rows(g, col, out_group, row, count, y_group, *context.threads);
        }
      }
    }
    add_bias_activation(y, bias, plan_.batch, plan_.out_channels, g.input_size(), plan_.activation,
                        *context.threads);
    return Status::ok();
  }

 private:
  TransposePlan plan_;
};

// Checks X [N, C, ...], W [C, M/group, k...] and B [M]; fills the channel counts of `plan`.
Status check_channels(const NodeContext& node, TransposePlan& plan) {
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
  if (plan.group < 1 || w[0] != plan.in_channels || plan.in_channels % plan.group != 0) {
    return node.error(StatusCode::kInvalidModel, "group ", plan.group, ": input channels ",
                      plan.in_channels, " and weight shape ", w.to_string(),
                      " do not agree (expected W[0] == C_in, C_in % group == 0)");
  }
  ONEPOOL_ASSIGN_OR_RETURN(plan.out_channels, checked_mul(w[1], plan.group, "output channels"));
  if (node.has_input(2) && node.input(2).shape != Shape{plan.out_channels}) {
    return node.error(StatusCode::kInvalidModel, "bias '", node.input(2).name,
                      "': expected shape [", plan.out_channels, "], got ",
                      node.input(2).shape.to_string());
  }
  return Status::ok();
}

struct WorkspaceBytes {
  size_t needed = 0;
  size_t preferred = 0;
};

// Fills plan.row_bytes and plan.tile_rows; returns the col tile's bytes.
Expected<WorkspaceBytes> workspace_bytes(const NodeContext& node, TransposePlan& plan) {
  const WindowGeometry& g = plan.geometry;
  ONEPOOL_ASSIGN_OR_RETURN(
      int64_t rows, checked_mul(plan.out_channels / plan.group, g.kernel_size(), "col2im rows"));
  if (rows > INT_MAX || g.output_size() > INT_MAX || plan.in_channels > INT_MAX) {
    return node.error(StatusCode::kUnsupported, "GEMM dims ", rows, " x ", g.output_size(), " x ",
                      plan.in_channels, " exceed the BLAS int range");
  }
  ONEPOOL_ASSIGN_OR_RETURN(int64_t col, checked_mul(rows, g.output_size(), "col2im size"));
  ONEPOOL_ASSIGN_OR_RETURN(int64_t bytes, checked_mul(col, sizeof(float), "workspace bytes"));
  (void)bytes;  // computed for its overflow check: every tile is a part of it
  plan.row_bytes = rows * static_cast<int64_t>(sizeof(float)) * g.output[2];
  plan.tile_rows = col_rows_within(plan, kColTileBytes);
  const auto tile_bytes = static_cast<size_t>(plan.tile_rows * plan.row_bytes);
  return WorkspaceBytes{tile_bytes, tile_bytes};
}

// Kernel == stride with constant weights: kH packed GEMMs (conv_transpose_taps.h), nullopt for
// the other transposed convolutions.
class TransposeTapsKernel final : public Kernel {
 public:
  explicit TransposeTapsKernel(TransposeTapsPlan plan) : plan_(std::move(plan)) {}

  Status run(const RunContext& context) override {
    const float* bias = context.inputs.size() > 2 ? context.inputs[2].as<const float>() : nullptr;
    run_transpose_taps(plan_, context.inputs[0].as<const float>(), bias,
                       context.outputs[0].as<float>(), context.workspace, *context.threads);
    return Status::ok();
  }

 private:
  TransposeTapsPlan plan_;
};

std::optional<PreparedKernel> make_taps_kernel(const NodeContext& node, const TransposePlan& plan) {
  const SgemmIsa isa = sgemm_isa_for(node.cpu_isa());
  const HostTensor* weights = node.constant_input(1);
  if (weights == nullptr || !transpose_taps_fit(plan.geometry, plan.group, isa)) {
    return std::nullopt;
  }
  const PackedWeightSharing share = [&](const PackedWeightCache::Factory& pack) {
    return node.packed_weight(1, PackedLayout::kTransposeTapPanels, static_cast<uint8_t>(isa), 0,
                              pack);
  };
  TransposeTapsPlan taps =
      plan_transpose_taps(plan.geometry, isa, plan.batch, plan.in_channels, plan.out_channels,
                          weights->as<float>(), node.threads(), share);
  taps.activation = plan.activation;
  PreparedKernel prepared;
  prepared.workspace_bytes = static_cast<size_t>(taps.workspace_bytes());
  prepared.workspace_preferred_bytes = prepared.workspace_bytes;
  prepared.implementation = std::string("tap gemm ") + sgemm_isa_name(isa);
  prepared.kernel = std::make_unique<TransposeTapsKernel>(std::move(taps));
  return prepared;
}

}  // namespace

Expected<PreparedKernel> make_conv_transpose_kernel(const NodeContext& node) {
  // Step 1. Dtypes, channels and group.
  for (size_t i = 0; i < 3; ++i) {
    if (i < 2 || node.has_input(i)) ONEPOOL_RETURN_IF_ERROR(require_float32(node, i));
  }
  TransposePlan plan;
  ONEPOOL_RETURN_IF_ERROR(check_channels(node, plan));
  // Step 2. Geometry and the expected output shape.
  const Shape& w = node.input(1).shape;
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (node.node().attributes.get_ints("kernel_shape", kernel) != kernel) {
    return node.error(StatusCode::kInvalidModel, "attribute 'kernel_shape' disagrees with weight '",
                      node.input(1).name, "' of shape ", w.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(plan.geometry,
                           make_transpose_geometry(node, node.input(0).shape, kernel));
  Shape expected{plan.batch, plan.out_channels};
  for (int i = 0; i < plan.geometry.spatial_rank; ++i) {
    expected.push_back(plan.geometry.input[normalized_axis(plan.geometry.spatial_rank, i)]);
  }
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 0, expected));
  // Step 3. Workspace and epilogue.
  plan.activation = parse_activation(node.node().attributes);
  std::optional<PreparedKernel> taps = make_taps_kernel(node, plan);
  if (taps) return std::move(*taps);
  PreparedKernel prepared;
  ONEPOOL_ASSIGN_OR_RETURN(const WorkspaceBytes workspace, workspace_bytes(node, plan));
  prepared.workspace_bytes = workspace.needed;
  prepared.workspace_preferred_bytes = workspace.preferred;
  prepared.implementation = "sgemm+col2im";
  prepared.kernel = std::make_unique<ConvTransposeKernel>(plan);
  return prepared;
}

}  // namespace onepool::cpu::nn
