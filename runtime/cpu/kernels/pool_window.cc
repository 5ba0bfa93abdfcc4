// MaxPool and AveragePool: one window per output position, parallel over (image, channel)
// planes. Window taps in the padding are skipped; AveragePool divides by the taps inside the
// input, or with count_include_pad by the window clipped to the padded input (as ONNX Runtime
// and PyTorch do when ceil_mode lets the last window hang past the end padding).
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/nan_order.h"
#include "runtime/cpu/kernels/pool_kernels.h"
#include "runtime/cpu/kernels/pool_max_padded.h"
#include "runtime/cpu/kernels/pool_max_same.h"
#include "runtime/cpu/kernels/pool_max_strided.h"
#include "runtime/cpu/kernels/pool_window_2d.h"

namespace onepool::cpu::nn {
namespace {

enum class PoolKind : uint8_t { kMax, kAverage };

struct PoolPlan {
  WindowGeometry geometry;
  PoolKind kind = PoolKind::kMax;
  int64_t planes = 0;  // N * C
  bool count_include_pad = false;
  bool column_major_indices = false;  // storage_order = 1
  bool windows_inside = false;        // no window reaches into padding or past the input
  bool fast_2d = false;               // 1-D / 2-D windows: pool_window_2d's row sweeps
  PoolColumns columns;                // fast_2d: each output column's window
  // MaxPool without Indices over 1-D / 2-D windows: the separable passes through a padded
  // plane, `parts` threads each with its own scratch in the workspace.
  std::optional<PaddedMaxPlan> padded;
  int64_t parts = 1;
  // MaxPool without Indices, 3 x 3 at stride 2 on AVX-512 (pool_max_strided.h): its rows' masks.
  bool stride_two = false;
  std::vector<uint16_t> stride_two_spans;
  // MaxPool without Indices, 3 x 3 at stride 1, padded by one all round, on AVX-512
  // (pool_max_same.h): its vectors' masks.
  bool same = false;
  std::vector<uint16_t> same_masks;
};

// True when every window of every axis lies inside the input (no padding taps to skip).
bool all_windows_inside(const WindowGeometry& g) {
  for (int axis = 0; axis < kMaxSpatialRank; ++axis) {
    const int64_t last_tap = (g.output[axis] - 1) * g.stride[axis] - g.pad_begin[axis] +
                             (g.kernel[axis] - 1) * g.dilation[axis];
    if (g.pad_begin[axis] != 0 || last_tap >= g.input[axis]) return false;
  }
  return true;
}

// Divisor with padding counted: the window clipped to [-pad_begin, input + pad_end).
int64_t padded_count(const WindowGeometry& g, int axis, const AxisTaps& w) {
  return std::min(w.start + g.kernel[axis], g.input[axis] + g.pad_end[axis]) - w.start;
}

bool is_2x2_stride_2(const WindowGeometry& g) {
  return g.input[0] == 1 && g.kernel[0] == 1 && g.kernel[1] == 2 && g.kernel[2] == 2 &&
         g.stride[1] == 2 && g.stride[2] == 2 && g.dilation[1] == 1 && g.dilation[2] == 1;
}

// Stride 1 over rows of 64 outputs or more: pool_window_2d's flat sweep reads the plane in
// place at about the cost of the padded path's copy and two passes, and wins (M-LSD's 3x3 pool
// on a 160 x 160 plane: 0.031 ms against 0.05); on narrower rows (Inception's 28 x 28 and
// smaller) the padded path is about 3x faster.
bool prefers_flat_sweep(const PoolPlan& plan) {
  const WindowGeometry& g = plan.geometry;
  return plan.fast_2d && plan.columns.flat_rows_begin < plan.columns.flat_rows_end &&
         g.output[2] >= 64;
}

// The 2x2 / stride 2 pool with no padding, which max_plane_2x2 runs without scratch.
bool is_2x2_inside(const PoolPlan& plan) {
  return plan.windows_inside && is_2x2_stride_2(plan.geometry);
}

class PoolKernel final : public Kernel {
 public:
  /// Windows up to this many input rows (kD * kH) take the row-pointer loop of max_plane_inside.
  static constexpr int64_t kMaxWindowRows = 64;

  explicit PoolKernel(const PoolPlan& plan) : plan_(plan) {}

  Status run(const RunContext& context) override {
    const float* x = context.inputs[0].as<const float>();
    float* y = context.outputs[0].as<float>();
    int64_t* indices = context.outputs.size() > 1 ? context.outputs[1].as<int64_t>() : nullptr;
    const WindowGeometry& g = plan_.geometry;
    if (plan_.same && indices == nullptr) {
      max_pool_same(g, plan_.same_masks, x, y, plan_.planes, *context.threads);
      return Status::ok();
    }
    if (plan_.stride_two && indices == nullptr) {
      max_pool_stride_two(g, plan_.stride_two_spans, x, y, plan_.planes, *context.threads);
      return Status::ok();
    }
    if (plan_.padded && indices == nullptr) {
      run_padded_max(x, y, reinterpret_cast<float*>(context.workspace), *context.threads);
      return Status::ok();
    }
    context.threads->parallel_for(plan_.planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const float* x_plane = x + plane * g.input_size();
        float* y_plane = y + plane * g.output_size();
        if (plan_.kind == PoolKind::kAverage) {
          if (plan_.fast_2d) {
            average_plane_2d(g, plan_.columns, plan_.count_include_pad, x_plane, y_plane);
          } else {
            average_plane(x_plane, y_plane);
          }
          continue;
        }
        max_plane(x_plane, y_plane, indices ? indices + plane * g.output_size() : nullptr,
                  plane * g.input_size());
      }
    });
    return Status::ok();
  }

 private:
  // Each part takes a contiguous run of planes through its own scratch.
  void run_padded_max(const float* x, float* y, float* workspace, ThreadPool& threads) const {
    const PaddedMaxPlan& padded = *plan_.padded;
    const int64_t in_size = plan_.geometry.input_size();
    const int64_t out_size = plan_.geometry.output_size();
    threads.parallel_for(plan_.parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        float* scratch = workspace + part * padded.scratch_floats();
        prepare_padded_max_scratch(padded, scratch);
        const int64_t first = part * plan_.planes / plan_.parts;
        const int64_t last = (part + 1) * plan_.planes / plan_.parts;
        for (int64_t plane = first; plane < last; ++plane) {
          max_plane_padded(padded, x + plane * in_size, y + plane * out_size, scratch);
        }
      }
    });
  }

  // Index of input (d, h, w) in Indices' convention (flattened, storage_order aware).
  int64_t index_of(int64_t d, int64_t h, int64_t w) const {
    const SpatialDims& in = plan_.geometry.input;
    if (plan_.column_major_indices) return (w * in[1] + h) * in[0] + d;
    return (d * in[1] + h) * in[2] + w;
  }

  void max_plane(const float* x, float* y, int64_t* indices, int64_t plane_offset) const {
    const WindowGeometry& g = plan_.geometry;
    if (indices == nullptr && plan_.windows_inside && is_2x2_stride_2(g)) {
      max_plane_2x2(x, y);
      return;
    }
    if (indices == nullptr && plan_.fast_2d) {
      max_plane_2d(g, plan_.columns, x, y);
      return;
    }
    if (indices == nullptr && plan_.windows_inside) {
      max_plane_inside(x, y);
      return;
    }
    for (int64_t od = 0; od < g.output[0]; ++od) {
      const AxisTaps wd = axis_taps(g, 0, od);
      for (int64_t oh = 0; oh < g.output[1]; ++oh) {
        const AxisTaps wh = axis_taps(g, 1, oh);
        for (int64_t ow = 0; ow < g.output[2]; ++ow) {
          const AxisTaps ww = axis_taps(g, 2, ow);
          float best = std::numeric_limits<float>::lowest();
          int64_t best_index = 0;
          for (int64_t kd = wd.first; kd < wd.last; ++kd) {
            const int64_t d = wd.start + kd * g.dilation[0];
            for (int64_t kh = wh.first; kh < wh.last; ++kh) {
              const int64_t h = wh.start + kh * g.dilation[1];
              const float* row = x + (d * g.input[1] + h) * g.input[2];
              for (int64_t kw = ww.first; kw < ww.last; ++kw) {
                const int64_t w = ww.start + kw * g.dilation[2];
                const bool first_tap = kd == wd.first && kh == wh.first && kw == ww.first;
                // The first NaN wins and stays (its index too), as in the other paths.
                if (first_tap || (best == best && (row[w] > best || row[w] != row[w]))) {
                  best = row[w];
                  best_index = indices ? index_of(d, h, w) : 0;
                }
              }
            }
          }
          const int64_t out = (od * g.output[1] + oh) * g.output[2] + ow;
          y[out] = best;
          if (indices) indices[out] = plane_offset + best_index;
        }
      }
    }
  }

  // Every window lies inside the input (no padding taps): no per-position clipping. The first
  // tap seeds the max; nan_max propagates NaN as the generic path does.
  void max_plane_inside(const float* x, float* y) const {
    const WindowGeometry& g = plan_.geometry;
    const int64_t window_rows = g.kernel[0] * g.kernel[1];
    std::array<const float*, kMaxWindowRows> rows{};
    for (int64_t oh = 0; oh < g.output[0] * g.output[1]; ++oh) {
      const int64_t od = oh / g.output[1];
      const int64_t ih = (oh % g.output[1]) * g.stride[1];
      float* y_row = y + oh * g.output[2];
      if (window_rows > kMaxWindowRows) {
        max_row_inside_any(x, od, ih, y_row);
        continue;
      }
      // The input rows this output row's windows cover, in tap order (kd, kh).
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          rows[static_cast<size_t>(kd * g.kernel[1] + kh)] =
              x + ((od * g.stride[0] + kd * g.dilation[0]) * g.input[1] + ih + kh * g.dilation[1]) *
                      g.input[2];
        }
      }
      for (int64_t ow = 0; ow < g.output[2]; ++ow) {
        const int64_t iw = ow * g.stride[2];
        float best = rows[0][iw];
        for (int64_t r = 0; r < window_rows; ++r) {
          const float* row = rows[static_cast<size_t>(r)] + iw;
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw)
            best = nan_max(best, row[kw * g.dilation[2]]);
        }
        y_row[ow] = best;
      }
    }
  }

  // max_plane_inside's row for windows of more than kMaxWindowRows input rows.
  void max_row_inside_any(const float* x, int64_t od, int64_t ih, float* y_row) const {
    const WindowGeometry& g = plan_.geometry;
    for (int64_t ow = 0; ow < g.output[2]; ++ow) {
      const int64_t iw = ow * g.stride[2];
      float best = x[(od * g.stride[0] * g.input[1] + ih) * g.input[2] + iw];
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const float* row =
              x +
              ((od * g.stride[0] + kd * g.dilation[0]) * g.input[1] + ih + kh * g.dilation[1]) *
                  g.input[2] +
              iw;
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
            best = nan_max(best, row[kw * g.dilation[2]]);
          }
        }
      }
      y_row[ow] = best;
    }
  }

  // The common 2x2 / stride 2 pool, taps in the same order and nan_max as max_plane_inside.
  void max_plane_2x2(const float* x, float* __restrict y) const {
    const WindowGeometry& g = plan_.geometry;
    for (int64_t oh = 0; oh < g.output[1]; ++oh) {
      const float* r0 = x + 2 * oh * g.input[2];
      const float* r1 = r0 + g.input[2];
      float* y_row = y + oh * g.output[2];
      for (int64_t ow = 0; ow < g.output[2]; ++ow) {
        float best = nan_max(r0[2 * ow], r0[2 * ow + 1]);
        best = nan_max(best, r1[2 * ow]);
        y_row[ow] = nan_max(best, r1[2 * ow + 1]);
      }
    }
  }

  void average_plane(const float* x, float* y) const {
    const WindowGeometry& g = plan_.geometry;
    for (int64_t od = 0; od < g.output[0]; ++od) {
      const AxisTaps wd = axis_taps(g, 0, od);
      for (int64_t oh = 0; oh < g.output[1]; ++oh) {
        const AxisTaps wh = axis_taps(g, 1, oh);
        for (int64_t ow = 0; ow < g.output[2]; ++ow) {
          const AxisTaps ww = axis_taps(g, 2, ow);
          float sum = 0.0f;
          for (int64_t kd = wd.first; kd < wd.last; ++kd) {
            for (int64_t kh = wh.first; kh < wh.last; ++kh) {
              const float* row = x + ((wd.start + kd) * g.input[1] + wh.start + kh) * g.input[2];
              for (int64_t kw = ww.first; kw < ww.last; ++kw) sum += row[ww.start + kw];
            }
          }
          const int64_t count =
              plan_.count_include_pad
                  ? padded_count(g, 0, wd) * padded_count(g, 1, wh) * padded_count(g, 2, ww)
                  : (wd.last - wd.first) * (wh.last - wh.first) * (ww.last - ww.first);
          y[(od * g.output[1] + oh) * g.output[2] + ow] =
              count > 0 ? sum / static_cast<float>(count) : 0.0f;
        }
      }
    }
  }

  PoolPlan plan_;
};

// The output shape for `g`, [N, C, spatial...].
Shape pooled_shape(const Shape& x, const WindowGeometry& g) {
  Shape shape{x[0], x[1]};
  for (int i = 0; i < g.spatial_rank; ++i)
    shape.push_back(g.output[normalized_axis(g.spatial_rank, i)]);
  return shape;
}

// With ceil_mode, newer ONNX shape inference (and PyTorch) drop a last window that would start
// in the end padding; ONNX 1.12 keeps it. Accepts either and adopts the graph's choice.
Status resolve_output(const NodeContext& node, const Shape& x, bool ceil_mode, WindowGeometry& g) {
  if (!ceil_mode || check_output_shape(node, 0, pooled_shape(x, g)).is_ok()) {
    return check_output_shape(node, 0, pooled_shape(x, g));
  }
  WindowGeometry trimmed = g;
  for (int axis = 0; axis < kMaxSpatialRank; ++axis) {
    if ((trimmed.output[axis] - 1) * g.stride[axis] >= g.input[axis] + g.pad_begin[axis]) {
      --trimmed.output[axis];
    }
  }
  if (check_output_shape(node, 0, pooled_shape(x, trimmed)).is_ok()) {
    g = trimmed;
    return Status::ok();
  }
  return check_output_shape(node, 0, pooled_shape(x, g));
}

Expected<PreparedKernel> make_pool_kernel(const NodeContext& node, PoolKind kind) {
  // Step 1. Dtype, kernel and geometry.
  ONEPOOL_RETURN_IF_ERROR(require_float32(node, 0));
  const AttributeMap& attributes = node.node().attributes;
  if (!attributes.has("kernel_shape")) {
    return node.error(StatusCode::kInvalidModel, "attribute 'kernel_shape' is required");
  }
  const Shape& x = node.input(0).shape;
  PoolPlan plan;
  plan.kind = kind;
  WindowOptions options;
  options.ceil_mode = attributes.get_int("ceil_mode", 0) != 0;
  options.allow_dilations = kind == PoolKind::kMax;
  ONEPOOL_ASSIGN_OR_RETURN(
      plan.geometry, make_forward_geometry(node, x, attributes.get_ints("kernel_shape"), options));
  ONEPOOL_RETURN_IF_ERROR(resolve_output(node, x, options.ceil_mode, plan.geometry));
  plan.planes = x[0] * x[1];  // import guarantees the element count fits in int64
  plan.windows_inside = all_windows_inside(plan.geometry);
  plan.fast_2d = is_pool_2d(plan.geometry);
  if (plan.fast_2d) plan.columns = make_pool_columns(plan.geometry);
  const bool with_indices = node.has_output(1);
  const bool avx512 = sgemm_isa_for(node.cpu_isa()) == SgemmIsa::kAvx512;
  if (kind == PoolKind::kMax && !with_indices && max_pool_same_fits(plan.geometry, avx512)) {
    plan.same = true;
    plan.same_masks = max_pool_same_masks(plan.geometry);
  } else if (kind == PoolKind::kMax && !with_indices &&
             max_pool_stride_two_fits(plan.geometry,
                                      make_padded_max_plan(plan.geometry).has_value(), avx512)) {
    plan.stride_two = true;
    plan.stride_two_spans = max_pool_stride_two_spans(plan.geometry);
  } else if (kind == PoolKind::kMax && !with_indices && !is_2x2_inside(plan) &&
             !prefers_flat_sweep(plan)) {
    plan.padded = make_padded_max_plan(plan.geometry);
    plan.parts = std::clamp<int64_t>(node.threads(), 1, plan.planes);
  }
  plan.count_include_pad = attributes.get_int("count_include_pad", 0) != 0;
  plan.column_major_indices = attributes.get_int("storage_order", 0) != 0;
  // Step 2. The optional Indices output must match Y's shape and be int64.
  if (node.has_output(1)) {
    if (kind != PoolKind::kMax || node.output(1).dtype != DType::kInt64) {
      return node.error(StatusCode::kInvalidModel, "output 1 '", node.output(1).name,
                        "': expected an int64 Indices output of MaxPool, got ",
                        dtype_name(node.output(1).dtype));
    }
    ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, 1, node.output(0).shape));
  }
  PreparedKernel prepared;
  if (plan.stride_two) prepared.implementation = "stride-2 max avx512";
  if (plan.same) prepared.implementation = "3x3 same max avx512";
  if (plan.padded) {
    prepared.workspace_bytes =
        static_cast<size_t>(plan.parts * plan.padded->scratch_floats()) * sizeof(float);
    prepared.implementation = "separable padded max";
  }
  prepared.kernel = std::make_unique<PoolKernel>(plan);
  return prepared;
}

}  // namespace

Expected<PreparedKernel> make_max_pool_kernel(const NodeContext& node) {
  return make_pool_kernel(node, PoolKind::kMax);
}

Expected<PreparedKernel> make_average_pool_kernel(const NodeContext& node) {
  return make_pool_kernel(node, PoolKind::kAverage);
}

}  // namespace onepool::cpu::nn
