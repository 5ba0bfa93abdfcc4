// PointwiseDepthwiseConv's kernel (conv_pointwise_depthwise.h): inputs, plan and threads.
#include "runtime/cpu/kernels/conv_pointwise_depthwise.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/conv_kernels.h"

namespace onepool::cpu::nn {
namespace {

// Input indices: X, W1, B1, W2, B2, then (a projection) W3, B3 and the residual.
constexpr size_t kW1 = 1, kB1 = 2, kW2 = 3, kB2 = 4, kW3 = 5, kB3 = 6, kResidual = 7;

class PointwiseDepthwiseKernel final : public Kernel {
 public:
  explicit PointwiseDepthwiseKernel(PointwiseDepthwisePlan plan) : plan_(std::move(plan)) {}

  // The bands follow from the workspace the plan granted, fixed for the Session's life.
  Status bind(std::byte* workspace, size_t workspace_bytes) override {
    (void)workspace;
    bands_ = cut_pointwise_depthwise_bands(plan_, static_cast<int64_t>(workspace_bytes));
    if (plan_.parts * bands_.part_bytes > static_cast<int64_t>(workspace_bytes)) {
      return make_status(StatusCode::kInternal, "PointwiseDepthwiseConv: workspace of ",
                         workspace_bytes, " bytes, below the least of ",
                         pointwise_depthwise_workspace(plan_).least);
    }
    return Status::ok();
  }

  Status run(const RunContext& context) override {
    const WindowGeometry& g = plan_.depthwise;
    const int64_t out_channels = plan_.project ? plan_.projection.out_channels : plan_.channels;
    const int64_t parts = std::min<int64_t>(plan_.parts, context.threads->thread_count());
    const int64_t rows = g.output[1];
    for (int64_t n = 0; n < plan_.batch; ++n) {
      const int64_t out_offset = n * out_channels * g.output_size();
      PointwiseDepthwiseTensors t;
      t.x = context.inputs[0].as<const float>() + n * plan_.in_channels * g.input_size();
      t.b1 = optional_input(context, kB1);
      t.w2 = context.inputs[kW2].as<const float>();
      t.b2 = optional_input(context, kB2);
      t.b3 = optional_input(context, kB3);
      t.residual =
          plan_.residual ? context.inputs[kResidual].as<const float>() + out_offset : nullptr;
      t.y = context.outputs[0].as<float>() + out_offset;
      context.threads->parallel_for(parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part) {
          const Share share = contiguous_share(rows, part, parts);
          run_pointwise_depthwise_rows(plan_, bands_, t,
                                       context.workspace + part * bands_.part_bytes, share.begin,
                                       share.end);
        }
      });
    }
    return Status::ok();
  }

 private:
  static const float* optional_input(const RunContext& context, size_t i) {
    return i < context.inputs.size() && context.inputs[i].data != nullptr
               ? context.inputs[i].as<const float>()
               : nullptr;
  }

  PointwiseDepthwisePlan plan_;
  PointwiseDepthwiseBands bands_;
};

Status check_bias(const NodeContext& node, size_t i, int64_t channels) {
  if (!node.has_input(i) || node.input(i).shape == Shape{channels}) return Status::ok();
  return node.error(StatusCode::kInvalidModel, "bias '", node.input(i).name, "': expected shape [",
                    channels, "], got ", node.input(i).shape.to_string());
}

// A 1x1 weight (input `i`): constant, [out, in, 1, 1].
Status check_pointwise_weight(const NodeContext& node, size_t i, int64_t in_channels) {
  const Shape& w = node.input(i).shape;
  if (w.rank() != 4 || w[1] != in_channels || w[2] != 1 || w[3] != 1) {
    return node.error(StatusCode::kInvalidModel, "weight '", node.input(i).name, "' ",
                      w.to_string(), ": expected [M, ", in_channels, ", 1, 1]");
  }
  if (node.constant_input(i) == nullptr) {
    return node.error(StatusCode::kUnsupported, "weight '", node.input(i).name,
                      "' must be constant (the optimizer fuses only constant weights)");
  }
  return Status::ok();
}

// X [N, C, H, W], W1 [M, C, 1, 1] (constant), B1 [M], W2 [M, 1, kH, kW], B2 [M]; with a
// projection W3 [P, M, 1, 1] (constant), B3 [P] and the residual (Y's shape, checked later).
// Without W1 (and B1), X has the M channels. Biases and the residual may be omitted; the
// attribute group == M. Needs W1 or W3.
Status check_inputs(const NodeContext& node) {
  for (size_t i = 0; i <= kResidual; ++i) {
    if (i == 0 || i == kW2 || node.has_input(i)) {
      ONEPOOL_RETURN_IF_ERROR(require_float32(node, i));
    }
  }
  const Shape& x = node.input(0).shape;
  const Shape& w2 = node.input(kW2).shape;
  if (x.rank() != 4) {
    return node.error(StatusCode::kInvalidModel, "expected a 4-D X, got ", x.to_string());
  }
  if (!node.has_input(kW1) && (node.has_input(kB1) || !node.has_input(kW3))) {
    return node.error(StatusCode::kInvalidModel, "expected W1, or W3 without B1");
  }
  if (node.has_input(kW1)) ONEPOOL_RETURN_IF_ERROR(check_pointwise_weight(node, kW1, x[1]));
  const int64_t m = node.has_input(kW1) ? node.input(kW1).shape[0] : x[1];
  if (w2.rank() != 4 || w2[0] != m || w2[1] != 1 ||
      node.node().attributes.get_int("group", 1) != m) {
    return node.error(StatusCode::kInvalidModel, "W2 ", w2.to_string(), ": expected [", m,
                      ", 1, kH, kW] with group == ", m);
  }
  ONEPOOL_RETURN_IF_ERROR(check_bias(node, kB1, m));
  ONEPOOL_RETURN_IF_ERROR(check_bias(node, kB2, m));
  if (!node.has_input(kW3)) {
    if (node.has_input(kB3) || node.has_input(kResidual)) {
      return node.error(StatusCode::kInvalidModel, "B3 or a residual without W3");
    }
    return Status::ok();
  }
  ONEPOOL_RETURN_IF_ERROR(check_pointwise_weight(node, kW3, m));
  return check_bias(node, kB3, node.input(kW3).shape[0]);
}

// W (input i) packed once per Model and instruction set.
std::shared_ptr<const std::vector<float>> packed_weights(const NodeContext& node, size_t i,
                                                         SgemmIsa isa) {
  const HostTensor& w = *node.constant_input(i);
  const int64_t m = w.shape[0], k = w.shape[1];
  return node.packed_weight(i, PackedLayout::kConvPanels, static_cast<uint8_t>(isa), 1, [&] {
    auto packed =
        std::make_shared<std::vector<float>>(static_cast<size_t>(packed_a_floats(isa, m, k)));
    pack_a(isa, w.as<float>(), m, k, k, packed->data());
    return std::shared_ptr<const std::vector<float>>(std::move(packed));
  });
}

PointwiseStep make_step(const NodeContext& node, size_t i, SgemmIsa isa, const char* prefix) {
  const Shape& w = node.input(i).shape;
  return PointwiseStep{packed_weights(node, i, isa), w[0], w[1],
                       parse_activation(node.node().attributes, prefix)};
}

// The depthwise window over the expanded tensor [N, M, H, W], and Y's shape.
Status plan_window(const NodeContext& node, PointwiseDepthwisePlan& plan) {
  const Shape& x = node.input(0).shape;
  const int64_t m = plan.channels;
  const Shape& w2 = node.input(kW2).shape;
  const std::vector<int64_t> kernel{w2[2], w2[3]};
  if (node.node().attributes.get_ints("kernel_shape", kernel) != kernel) {
    return node.error(StatusCode::kInvalidModel, "attribute 'kernel_shape' disagrees with W2 ",
                      w2.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(plan.depthwise,
                           make_forward_geometry(node, Shape{x[0], m, x[2], x[3]}, kernel, {}));
  const WindowGeometry& g = plan.depthwise;
  const int64_t out_channels = plan.project ? node.input(kW3).shape[0] : m;
  const Shape y{x[0], out_channels, g.output[1], g.output[2]};
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 0, y));
  if (plan.residual && node.input(kResidual).shape != y) {
    return node.error(StatusCode::kInvalidModel, "residual input '", node.input(kResidual).name,
                      "': expected the output's shape ", y.to_string(), ", got ",
                      node.input(kResidual).shape.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(
      plan.row_bytes,
      checked_mul(m, g.input[2] * static_cast<int64_t>(sizeof(float)), "expanded row bytes"));
  plan.span = (g.kernel[1] - 1) * g.dilation[1] + 1;
  return Status::ok();
}

}  // namespace

Expected<PreparedKernel> make_pointwise_depthwise_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_inputs(node));
  PointwiseDepthwisePlan plan;
  plan.batch = node.input(0).shape[0];
  plan.has_expand = node.has_input(kW1);
  plan.project = node.has_input(kW3);
  plan.residual = node.has_input(kResidual);
  plan.in_channels = node.input(0).shape[1];
  plan.channels = plan.has_expand ? node.input(kW1).shape[0] : plan.in_channels;
  ONEPOOL_RETURN_IF_ERROR(plan_window(node, plan));
  const WindowGeometry& g = plan.depthwise;
  plan.parts = static_cast<int>(std::clamp<int64_t>(node.threads(), 1, g.output[1]));
  plan.isa = sgemm_isa_for(node.cpu_isa());
  if (plan.has_expand) plan.expand = make_step(node, kW1, plan.isa, "onepool_pointwise_");
  plan.depthwise_activation = parse_activation(node.node().attributes);
  if (plan.project) plan.projection = make_step(node, kW3, plan.isa, "onepool_project_");
  for (int64_t c = 0; c < plan.in_channels; ++c) plan.x_offsets.push_back(c * g.input_size());
  // Each thread's buffers hold at most the expanded map and the depthwise output.
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t map_bytes,
                           checked_mul(plan.row_bytes, g.input[1], "expanded map bytes"));
  ONEPOOL_ASSIGN_OR_RETURN(
      const int64_t output_bytes,
      checked_mul(plan.channels, g.output_size() * 4, "depthwise output bytes"));
  ONEPOOL_RETURN_IF_ERROR(
      checked_mul(plan.parts, map_bytes + output_bytes + 256, "fused buffers").status());
  const PointwiseDepthwiseWorkspace workspace = pointwise_depthwise_workspace(plan);
  PreparedKernel prepared;
  prepared.workspace_bytes = static_cast<size_t>(workspace.least);
  prepared.workspace_preferred_bytes = static_cast<size_t>(workspace.preferred);
  prepared.implementation = std::string(plan.has_expand ? "1x1 + " : "") + "depthwise" +
                            (plan.project ? " + 1x1" : "") + " fused " + sgemm_isa_name(plan.isa);
  prepared.kernel = std::make_unique<PointwiseDepthwiseKernel>(std::move(plan));
  return prepared;
}

}  // namespace onepool::cpu::nn
