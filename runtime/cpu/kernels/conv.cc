// The Conv kernel: prepare picks the depthwise, pointwise or im2col path (see conv_kernels.h).

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "runtime/cpu/kernels/conv_depthwise.h"
#include "runtime/cpu/kernels/conv_dnnl.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/conv_im2col.h"
#include "runtime/cpu/kernels/conv_kernels.h"
#include "runtime/cpu/kernels/gemm_blas.h"

namespace onepool::cpu::nn {
namespace {

enum class ConvPath : uint8_t { kDepthwise, kPointwise, kIm2col };

struct ConvPlan {
  WindowGeometry geometry;
  ConvPath path = ConvPath::kIm2col;
  int64_t batch = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t group = 1;
  int64_t row_bytes = 0;  // im2col bytes of one output row (one od, oh pair)
  Activation activation;
};

// The im2col workspace is bounded by tiling the output rows: a 3x3 conv on a 320x320 map would
// otherwise need a column matrix (C * 9 * 320 * 320 floats) several times the activations
// (PaddleOCR det's pool: 101.6 MB untiled, 39.3 MB tiled). The kernel needs whole rows up to
// 64 KiB (at least one row) and prefers up to 2 MiB, which keeps the GEMMs wide; the planner
// sizes the pool with the minimum and grants more wherever the pool has room at that step
// (planner/workspace_growth.h), so only the convs at the peak run with narrow tiles.
constexpr int64_t kMinIm2colBytes = int64_t{64} << 10;
constexpr int64_t kPreferredIm2colBytes = int64_t{2} << 20;

// Whole output rows whose im2col fits `bytes`.
int64_t im2col_rows_within(const ConvPlan& plan, int64_t bytes) {
  return whole_rows_within(bytes, plan.row_bytes, plan.geometry.output[0] * plan.geometry.output[1]);
}

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const ConvPlan& plan) : plan_(plan) {}

  Status run(const RunContext& context) override {
    const WindowGeometry& g = plan_.geometry;
    const float* x = context.inputs[0].as<const float>();
    const float* w = context.inputs[1].as<const float>();
    const float* bias = context.inputs.size() > 2 ? context.inputs[2].as<const float>() : nullptr;
    float* y = context.outputs[0].as<float>();
    if (plan_.path == ConvPath::kDepthwise) {
      const DepthwiseConv conv{
          x, w, bias, y, plan_.batch, plan_.in_channels, plan_.out_channels / plan_.in_channels};
      depthwise_conv(g, conv, plan_.activation, *context.threads);
      return Status::ok();
    }
    const int64_t in_group = plan_.in_channels / plan_.group;
    const int64_t out_group = plan_.out_channels / plan_.group;
    const int64_t depth = in_group * g.kernel_size();
    const int64_t columns = g.output_size();
    float* col = reinterpret_cast<float*>(context.workspace);
    const int64_t output_rows = g.output[0] * g.output[1];
    const int64_t tile_rows =
        im2col_rows_within(plan_, static_cast<int64_t>(context.workspace_bytes));
    for (int64_t n = 0; n < plan_.batch; ++n) {
      for (int64_t group = 0; group < plan_.group; ++group) {
        const float* x_group = x + (n * plan_.in_channels + group * in_group) * g.input_size();
        const float* w_group = w + group * out_group * depth;
        float* y_group = y + (n * plan_.out_channels + group * out_group) * columns;
        if (plan_.path != ConvPath::kIm2col) {
          const GemmShape shape{false, false, out_group, columns, depth, depth, columns, columns};
          gemm(shape, 1.0f, w_group, x_group, 0.0f, y_group, context.threads);
          continue;
        }
        for (int64_t row = 0; row < output_rows; row += tile_rows) {
          const int64_t rows = std::min(tile_rows, output_rows - row);
          const int64_t tile = rows * g.output[2];
          im2col_rows(g, x_group, in_group, row, rows, col, *context.threads);
          const GemmShape shape{false, false, out_group, tile, depth, depth, tile, columns};
          gemm(shape, 1.0f, w_group, col, 0.0f, y_group + row * g.output[2], context.threads);
        }
      }
    }
    add_bias_activation(y, bias, plan_.batch, plan_.out_channels, columns, plan_.activation,
                        *context.threads);
    return Status::ok();
  }

 private:
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

const char* path_name(ConvPath path) {
  switch (path) {
    case ConvPath::kDepthwise:
      return "depthwise direct";
    case ConvPath::kPointwise:
      return "pointwise sgemm";
    case ConvPath::kIm2col:
      return "im2col+sgemm";
  }
  return "";
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
  if (plan.path == ConvPath::kPointwise) return WorkspaceBytes{};
  // Whole output rows per tile (the column matrix `col` bounds any number of them).
  ONEPOOL_ASSIGN_OR_RETURN(plan.row_bytes,
                           checked_mul(depth * static_cast<int64_t>(sizeof(float)), g.output[2],
                                       "conv im2col row bytes"));
  (void)col;  // computed for its overflow check: every tile is a part of it
  const auto tile_bytes = [&](int64_t limit) {
    return static_cast<size_t>(im2col_rows_within(plan, limit) * plan.row_bytes);
  };
  return WorkspaceBytes{tile_bytes(kMinIm2colBytes), tile_bytes(kPreferredIm2colBytes)};
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
  // Step 3. Path, workspace and epilogue.
  plan.activation = parse_activation(node.node().attributes);
  PreparedKernel prepared;
  ONEPOOL_ASSIGN_OR_RETURN(const WorkspaceBytes workspace, choose_path(node, plan));
  // oneDNN, when built in, takes the convolutions im2col would run (measured faster there; the
  // depthwise and pointwise paths stay ours, see conv_dnnl.h).
  if (plan.path == ConvPath::kIm2col) {
    const DnnlConvCase conv{plan.geometry,     plan.batch, plan.in_channels,
                            plan.out_channels, plan.group, plan.activation};
    std::optional<PreparedKernel> dnnl = make_dnnl_conv_kernel(node, conv);
    if (dnnl) return std::move(*dnnl);
  }
  prepared.workspace_bytes = workspace.needed;
  prepared.workspace_preferred_bytes = workspace.preferred;
  prepared.implementation = path_name(plan.path);
  prepared.kernel = std::make_unique<ConvKernel>(plan);
  return prepared;
}

}  // namespace onepool::cpu::nn
