// ConvInteger and QLinearConv over 8-bit x and w, accumulated in int32 (quant_common.h). Per image
// and group, x - x_zero goes into an int16 column matrix in the workspace (0 for padding taps: the
// spec pads with the x zero point, contributing (x_zero - x_zero) * w = 0); each output channel
// is then a row of (w - w_zero) times that matrix, over contiguous output positions so the loop
// vectorizes, with the group's output channels split over the threads. QLinearConv adds the
// int32 bias and requantizes each channel's plane, also held in the workspace.
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/quant_common.h"
#include "runtime/cpu/kernels/quant_conv_float.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::quant {
namespace {

using nn::valid_output_range;
using nn::ValidRange;
using nn::WindowGeometry;

struct ConvShape {
  WindowGeometry geometry;
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t group = 1;
};

// The column matrix of one image and group: col[k * P + p] = x(tap k of output p) - x_zero for
// k over (channel, kernel taps) in w's element order and p over the P output positions; 0 where
// the tap falls in the padding (the spec pads with x_zero). |x - x_zero| <= 255 fits int16, and
// float holds it exactly.
template <class X, class Column>
ONEPOOL_ISA_CLONES void fill_columns(const WindowGeometry& g, const X* x, int64_t channels,
                                     int32_t x_zero, Column* col) {
  const int64_t outputs = g.output_size();
  std::fill(col, col + channels * g.kernel_size() * outputs, Column{0});
  for (int64_t c = 0; c < channels; ++c) {
    const X* plane = x + c * g.input_size();
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      const int64_t offset_d = kd * g.dilation[0] - g.pad_begin[0];
      const ValidRange rd = valid_output_range(offset_d, g.stride[0], g.input[0], g.output[0]);
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        const int64_t offset_h = kh * g.dilation[1] - g.pad_begin[1];
        const ValidRange rh = valid_output_range(offset_h, g.stride[1], g.input[1], g.output[1]);
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const int64_t offset_w = kw * g.dilation[2] - g.pad_begin[2];
          const ValidRange rw = valid_output_range(offset_w, g.stride[2], g.input[2], g.output[2]);
          const int64_t tap = ((c * g.kernel[0] + kd) * g.kernel[1] + kh) * g.kernel[2] + kw;
          Column* row = col + tap * outputs;
          for (int64_t od = rd.first; od < rd.last; ++od) {
            const int64_t id = od * g.stride[0] + offset_d;
            for (int64_t oh = rh.first; oh < rh.last; ++oh) {
              const int64_t ih = oh * g.stride[1] + offset_h;
              const X* in_row = plane + (id * g.input[1] + ih) * g.input[2];
              Column* out_row = row + (od * g.output[1] + oh) * g.output[2];
              if (g.stride[2] == 1) {  // contiguous: the loop vectorizes
                const X* source = in_row + offset_w;
                for (int64_t ow = rw.first; ow < rw.last; ++ow) {
                  out_row[ow] = static_cast<Column>(static_cast<int32_t>(source[ow]) - x_zero);
                }
                continue;
              }
              for (int64_t ow = rw.first; ow < rw.last; ++ow) {
                out_row[ow] = static_cast<Column>(
                    static_cast<int32_t>(in_row[ow * g.stride[2] + offset_w]) - x_zero);
              }
            }
          }
        }
      }
    }
  }
}

// planes[c][i] = x[c][i] - x_zero as floats for channels [begin, end) (exact: |x - x_zero| <=
// 255), the input of the exact float path's implicit GEMM.
template <class X>
ONEPOOL_ISA_CLONES void fill_float_planes(const X* x, int64_t plane_size, int64_t channels,
                                          int64_t begin, int64_t end, int32_t x_zero,
                                          float* planes) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = c * plane_size + begin; i < c * plane_size + end; ++i) {
      planes[i] = static_cast<float>(static_cast<int32_t>(x[i]) - x_zero);
    }
  }
}

// acc[p] = sum_k (w[k] - w_zero) * col[k * P + p], wrapping in int32. The inner loop runs over
// contiguous output positions, so it vectorizes.
template <class W>
ONEPOOL_ISA_CLONES void multiply_columns(int64_t rows, int64_t outputs, const W* w, int32_t w_zero,
                                         const int16_t* col, int32_t* acc) {
  std::fill(acc, acc + outputs, 0);
  for (int64_t k = 0; k < rows; ++k) {
    const int32_t wv = static_cast<int32_t>(w[k]) - w_zero;
    if (wv == 0) continue;
    const int16_t* row = col + k * outputs;
    for (int64_t p = 0; p < outputs; ++p) {
      acc[p] = wrapping_add(acc[p], wv * static_cast<int32_t>(row[p]));
    }
  }
}

// The workspace of both kernels: one int32 plane per output channel of a group, then the
// group's column matrix (int16, or float on the exact float path).
struct ConvWorkspace {
  int64_t plane_bytes = 0;   // out_channels / group * P * 4
  int64_t column_bytes = 0;  // in_channels / group * kernel_size * P * 2
};

Expected<ConvWorkspace> plan_workspace(const ConvShape& s, bool needs_planes,
                                       int64_t column_cell_bytes) {
  const int64_t outputs = s.geometry.output_size();
  ConvWorkspace result;
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t rows,
                           checked_mul(s.in_channels / s.group, s.geometry.kernel_size(), "rows"));
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t cells, checked_mul(rows, outputs, "column matrix"));
  ONEPOOL_ASSIGN_OR_RETURN(result.column_bytes,
                           checked_mul(cells, column_cell_bytes, "column bytes"));
  if (!needs_planes) return result;
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t planes,
                           checked_mul(s.out_channels / s.group, outputs, "accumulator planes"));
  ONEPOOL_ASSIGN_OR_RETURN(result.plane_bytes, checked_mul(planes, int64_t{4}, "plane bytes"));
  return result;
}

// Positions per thread at least when the exact path's passes split a plane.
constexpr int64_t kMinPositionsPerPart = 256;

// For every image and group: fills the columns, then, in parallel over the group's output
// channels, computes the int32 plane of channel oc into plane_of(n, oc) and calls
// finish(n, oc, plane, begin, end) for its positions [begin, end). With `exact` (constant
// weights within the bound of quant_conv_float.h) the columns are floats and one float GEMM
// computes the group's planes, which then hold the exact int32 sums; the passes before and after
// it split the positions, not the channels, so that each core converts the input rows its bands
// read and finishes the outputs its bands wrote (split by channels, every pass moved half the
// planes between the cores, and two threads ran longer than one). plane_of(n, oc) of a group's
// channels must be consecutive planes.
template <class X, class W, class PlaneOf, class Finish>
void convolve(const ConvShape& s, const RunContext& context, ThreadPool& threads, const X* x,
              int32_t x_zero, const W* w, const QuantParam& w_zero, const ExactFloatWeights* exact,
              std::byte* col, PlaneOf&& plane_of, Finish&& finish) {
  const WindowGeometry& g = s.geometry;
  const int64_t in_per_group = s.in_channels / s.group;
  const int64_t out_per_group = s.out_channels / s.group;
  const int64_t rows = in_per_group * g.kernel_size();
  const int64_t outputs = g.output_size();
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t group = 0; group < s.group; ++group) {
      const X* image = x + (n * s.in_channels + group * in_per_group) * g.input_size();
      if (exact != nullptr && exact->implicit) {
        auto* planes = reinterpret_cast<float*>(col);
        threads.parallel_for(g.input_size(), kMinPositionsPerPart, [&](int64_t begin, int64_t end) {
          fill_float_planes(image, g.input_size(), in_per_group, begin, end, x_zero, planes);
        });
        int32_t* first_plane = plane_of(n, group * out_per_group);
        multiply_exact_implicit(*exact, group, g, planes, reinterpret_cast<float*>(first_plane),
                                col + exact->plane_bytes, threads);
      } else if (exact != nullptr) {
        auto* columns = reinterpret_cast<float*>(col);
        fill_columns(g, image, in_per_group, x_zero, columns);
        int32_t* first_plane = plane_of(n, group * out_per_group);
        multiply_exact_float(*exact, group, columns, outputs, reinterpret_cast<float*>(first_plane),
                             threads);
      } else {
        fill_columns(g, image, in_per_group, x_zero, reinterpret_cast<int16_t*>(col));
      }
      if (exact != nullptr) {
        threads.parallel_for(outputs, kMinPositionsPerPart, [&](int64_t begin, int64_t end) {
          for (int64_t i = 0; i < out_per_group; ++i) {
            const int64_t oc = group * out_per_group + i;
            int32_t* plane = plane_of(n, oc);
            floats_to_int32_in_place(plane + begin, end - begin);
            finish(n, oc, plane, begin, end);
          }
        });
        continue;
      }
      threads.parallel_for(out_per_group, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t oc = group * out_per_group + i;
          int32_t* plane = plane_of(n, oc);
          multiply_columns(rows, outputs, w + oc * rows, zero_point_at<W>(w_zero, context, oc),
                           reinterpret_cast<const int16_t*>(col), plane);
          finish(n, oc, plane, int64_t{0}, outputs);
        }
      });
    }
  }
}

// A convolution of fewer multiply-adds than this per image and group runs on the calling thread:
// the hand-offs and the lines its passes move between the cores cost more than a second core
// saves (cnn_qdq_int8's 3x3 16 -> 32 channel conv on 32 x 32, 4.7M multiply-adds, ran 1.2x
// longer on two threads than on one before its passes split positions; its 0.4M and 0.6M
// neighbours gain nothing from two).
constexpr int64_t kMinParallelMacs = int64_t{1} << 21;

// A pool without workers (its parallel_for runs inline) for a convolution below
// kMinParallelMacs, made at prepare time; null for the others.
std::unique_ptr<ThreadPool> serial_pool_for(const ConvShape& s) {
  const WindowGeometry& g = s.geometry;
  const double macs = static_cast<double>(s.out_channels / s.group) *
                      static_cast<double>(s.in_channels / s.group) *
                      static_cast<double>(g.kernel_size()) * static_cast<double>(g.output_size());
  return macs < static_cast<double>(kMinParallelMacs) ? std::make_unique<ThreadPool>(1) : nullptr;
}

template <class X, class W>
class ConvIntegerKernel final : public Kernel {
 public:
  ConvIntegerKernel(ConvShape shape, QuantParam x_zero, QuantParam w_zero,
                    std::optional<ExactFloatWeights> exact)
      : shape_(shape),
        x_zero_(x_zero),
        w_zero_(w_zero),
        exact_(std::move(exact)),
        serial_(serial_pool_for(shape)) {}

  Status run(const RunContext& context) override {
    int32_t* y = context.outputs[0].as<int32_t>();
    const int64_t outputs = shape_.geometry.output_size();
    convolve(
        shape_, context, serial_ ? *serial_ : *context.threads, context.inputs[0].as<const X>(),
        zero_point_at<X>(x_zero_, context, 0), context.inputs[1].as<const W>(), w_zero_,
        exact_ ? &*exact_ : nullptr, context.workspace,
        [&](int64_t n, int64_t oc) { return y + (n * shape_.out_channels + oc) * outputs; },
        [](int64_t, int64_t, const int32_t*, int64_t, int64_t) {});
    return Status::ok();
  }

 private:
  ConvShape shape_;
  QuantParam x_zero_;
  QuantParam w_zero_;
  std::optional<ExactFloatWeights> exact_;
  std::unique_ptr<ThreadPool> serial_;  // small convolutions: the calling thread alone
};

struct QLinearConvParams {
  QuantParam x_scale, x_zero, w_scale, w_zero, y_scale, y_zero;
  bool has_bias = false;
};

template <class X, class W, class Q>
class QLinearConvKernel final : public Kernel {
 public:
  QLinearConvKernel(ConvShape shape, QLinearConvParams params, int64_t plane_bytes,
                    std::optional<ExactFloatWeights> exact)
      : shape_(shape),
        params_(params),
        plane_bytes_(plane_bytes),
        exact_(std::move(exact)),
        serial_(serial_pool_for(shape)) {}

  Status run(const RunContext& context) override {
    const int32_t* bias = params_.has_bias ? context.inputs[8].as<const int32_t>() : nullptr;
    Q* y = context.outputs[0].as<Q>();
    const int64_t outputs = shape_.geometry.output_size();
    const int64_t out_per_group = shape_.out_channels / shape_.group;
    auto* planes = reinterpret_cast<int32_t*>(context.workspace);
    std::byte* col = context.workspace + plane_bytes_;
    const float x_scale = scale_at(params_.x_scale, context, 0);
    const float y_scale = scale_at(params_.y_scale, context, 0);
    const int32_t y_zero = zero_point_at<Q>(params_.y_zero, context, 0);
    auto requantize_plane = [&](int64_t n, int64_t oc, const int32_t* acc, int64_t begin,
                                int64_t end) {
      const int32_t b = bias ? bias[oc] : 0;
      // (x_scale * w_scale) / y_scale in this order, as ONNX Runtime computes it.
      const float multiplier = x_scale * scale_at(params_.w_scale, context, oc) / y_scale;
      Q* out = y + (n * shape_.out_channels + oc) * outputs;
      requantize_row<Q>(acc + begin, b, multiplier, y_zero, out + begin, end - begin);
    };
    convolve(
        shape_, context, serial_ ? *serial_ : *context.threads, context.inputs[0].as<const X>(),
        zero_point_at<X>(params_.x_zero, context, 0), context.inputs[3].as<const W>(),
        params_.w_zero, exact_ ? &*exact_ : nullptr, col,
        [&](int64_t, int64_t oc) { return planes + (oc % out_per_group) * outputs; },
        requantize_plane);
    return Status::ok();
  }

 private:
  ConvShape shape_;
  QLinearConvParams params_;
  int64_t plane_bytes_ = 0;  // the column matrix starts after the planes
  std::optional<ExactFloatWeights> exact_;
  std::unique_ptr<ThreadPool> serial_;  // small convolutions: the calling thread alone
};

// The exact float path's packed weights, when w and its zero points are constant and the sums
// stay exact (quant_conv_float.h); nullopt keeps the int16 x int32 rows.
template <class W>
std::optional<ExactFloatWeights> exact_float_weights(const NodeContext& node, const ConvShape& s,
                                                     size_t w_index, const QuantParam& w_zero) {
  const HostTensor* w = node.constant_input(w_index);
  const HostTensor* zero = w_zero.present ? node.constant_input(w_zero.input) : nullptr;
  if (w == nullptr || (w_zero.present && zero == nullptr)) return std::nullopt;
  const int64_t rows = s.in_channels / s.group * s.geometry.kernel_size();
  const W* values = w->as<W>();
  std::vector<float> centered(static_cast<size_t>(s.out_channels * rows));
  for (int64_t oc = 0; oc < s.out_channels; ++oc) {
    const int32_t z = zero == nullptr ? 0 : static_cast<int32_t>(zero->as<W>()[w_zero.index(oc)]);
    for (int64_t k = 0; k < rows; ++k) {
      centered[static_cast<size_t>(oc * rows + k)] =
          static_cast<float>(static_cast<int32_t>(values[oc * rows + k]) - z);
    }
  }
  return pack_exact_float_weights(sgemm_isa_for(node.cpu_isa()), centered, s.group,
                                  s.out_channels / s.group, rows);
}

// Shapes of x (input x_index) and w (w_index): channels, group, geometry, output shape.
Expected<ConvShape> plan_conv(const NodeContext& node, size_t x_index, size_t w_index) {
  // Step 1. Ranks, channels and group.
  const Shape& x = node.input(x_index).shape;
  const Shape& w = node.input(w_index).shape;
  if (x.rank() < 3 || x.rank() > 2 + nn::kMaxSpatialRank || w.rank() != x.rank()) {
    return node.error(StatusCode::kUnsupported, describe_input(node, x_index), " ", x.to_string(),
                      " and ", describe_input(node, w_index), " ", w.to_string(),
                      ": expected [N,C,spatial...] and [M,C/group,kernel...] with 1 to 3 "
                      "spatial axes");
  }
  ConvShape s;
  s.batch = x[0];
  s.in_channels = x[1];
  s.out_channels = w[0];
  s.group = node.node().attributes.get_int("group", 1);
  if (s.group < 1 || s.in_channels % s.group != 0 || s.out_channels % s.group != 0 ||
      w[1] * s.group != s.in_channels) {
    return node.error(StatusCode::kInvalidModel, "group ", s.group, ", ",
                      describe_input(node, x_index), " ", x.to_string(), " and ",
                      describe_input(node, w_index), " ", w.to_string(),
                      ": expected C and M divisible by group and w dim 1 = C / group");
  }
  // Step 2. Geometry (kernel from w, checked against kernel_shape when given).
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const std::vector<int64_t> attribute = node.node().attributes.get_ints("kernel_shape", kernel);
  if (attribute != kernel) {
    return node.error(StatusCode::kInvalidModel, "attribute 'kernel_shape' disagrees with ",
                      describe_input(node, w_index), " ", w.to_string());
  }
  ONEPOOL_ASSIGN_OR_RETURN(s.geometry, nn::make_forward_geometry(node, x, kernel, {}));
  Shape expected{s.batch, s.out_channels};
  for (int i = 0; i < s.geometry.spatial_rank; ++i) {
    expected.push_back(s.geometry.output[nn::normalized_axis(s.geometry.spatial_rank, i)]);
  }
  ONEPOOL_RETURN_IF_ERROR(nn::check_output_shape(node, 0, expected));
  ONEPOOL_RETURN_IF_ERROR(expected.element_count_checked().status());
  ONEPOOL_RETURN_IF_ERROR(w.element_count_checked().status());
  return s;
}

}  // namespace

// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32 y.
Expected<PreparedKernel> make_conv_integer(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 0));
  ONEPOOL_RETURN_IF_ERROR(require_input(node, 1));
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, DType::kInt32));
  ONEPOOL_ASSIGN_OR_RETURN(const ConvShape shape, plan_conv(node, 0, 1));
  const DType x_type = node.input(0).dtype;
  const DType w_type = node.input(1).dtype;
  ONEPOOL_ASSIGN_OR_RETURN(const QuantParam x_zero,
                           read_quant_param(node, 2, x_type, 1, true, "x_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(
      const QuantParam w_zero,
      read_quant_param(node, 3, w_type, shape.out_channels, true, "w_zero_point"));
  return visit_8bit(node, describe_input(node, 0), x_type, [&](auto x_tag) {
    return visit_8bit(
        node, describe_input(node, 1), w_type, [&](auto w_tag) -> Expected<PreparedKernel> {
          using X = typename decltype(x_tag)::type;
          using W = typename decltype(w_tag)::type;
          std::optional<ExactFloatWeights> exact = exact_float_weights<W>(node, shape, 1, w_zero);
          ONEPOOL_ASSIGN_OR_RETURN(ConvWorkspace workspace,
                                   plan_workspace(shape, false, exact ? 4 : 2));
          if (exact) {
            workspace.column_bytes =
                plan_exact_implicit(*exact, shape.geometry, shape.in_channels / shape.group,
                                    node.threads(), workspace.column_bytes);
          }
          PreparedKernel result;
          result.implementation = exact ? std::string(exact->implicit ? "exact float implicit gemm "
                                                                      : "exact float gemm ") +
                                              nn::sgemm_isa_name(exact->isa)
                                        : "int16 columns x int32 rows";
          result.kernel =
              std::make_unique<ConvIntegerKernel<X, W>>(shape, x_zero, w_zero, std::move(exact));
          result.workspace_bytes = static_cast<size_t>(workspace.column_bytes);
          return result;
        });
  });
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?).
Expected<PreparedKernel> make_qlinear_conv(const NodeContext& node) {
  for (size_t i : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{6}}) {
    ONEPOOL_RETURN_IF_ERROR(require_input(node, i));
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is missing");
  ONEPOOL_ASSIGN_OR_RETURN(const ConvShape shape, plan_conv(node, 0, 3));
  const DType x_type = node.input(0).dtype;
  const DType w_type = node.input(3).dtype;
  const DType y_type = node.output(0).dtype;
  const int64_t m = shape.out_channels;
  QLinearConvParams params;
  ONEPOOL_ASSIGN_OR_RETURN(params.x_scale,
                           read_quant_param(node, 1, DType::kFloat32, 1, false, "x_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.x_zero,
                           read_quant_param(node, 2, x_type, 1, true, "x_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(params.w_scale,
                           read_quant_param(node, 4, DType::kFloat32, m, false, "w_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.w_zero,
                           read_quant_param(node, 5, w_type, m, true, "w_zero_point"));
  ONEPOOL_ASSIGN_OR_RETURN(params.y_scale,
                           read_quant_param(node, 6, DType::kFloat32, 1, false, "y_scale"));
  ONEPOOL_ASSIGN_OR_RETURN(params.y_zero,
                           read_quant_param(node, 7, y_type, 1, true, "y_zero_point"));
  if (node.has_input(8)) {
    ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, 8, DType::kInt32));
    if (!(node.input(8).shape == Shape{m})) {
      return node.error(StatusCode::kInvalidModel, describe_input(node, 8), ": expected shape [", m,
                        "], got ", node.input(8).shape.to_string());
    }
    params.has_bias = true;
  }
  return visit_8bit(node, describe_input(node, 0), x_type, [&](auto x_tag) {
    return visit_8bit(node, describe_input(node, 3), w_type, [&](auto w_tag) {
      return visit_8bit(
          node, describe_output(node, 0), y_type, [&](auto y_tag) -> Expected<PreparedKernel> {
            using X = typename decltype(x_tag)::type;
            using W = typename decltype(w_tag)::type;
            using Q = typename decltype(y_tag)::type;
            std::optional<ExactFloatWeights> exact =
                exact_float_weights<W>(node, shape, 3, params.w_zero);
            ONEPOOL_ASSIGN_OR_RETURN(ConvWorkspace workspace,
                                     plan_workspace(shape, true, exact ? 4 : 2));
            if (exact) {
              workspace.column_bytes =
                  plan_exact_implicit(*exact, shape.geometry, shape.in_channels / shape.group,
                                      node.threads(), workspace.column_bytes);
            }
            PreparedKernel result;
            result.implementation = exact
                                        ? std::string(exact->implicit ? "exact float implicit gemm "
                                                                      : "exact float gemm ") +
                                              nn::sgemm_isa_name(exact->isa) + " + requantize"
                                        : "int16 columns x int32 rows + requantize";
            result.kernel = std::make_unique<QLinearConvKernel<X, W, Q>>(
                shape, params, workspace.plane_bytes, std::move(exact));
            result.workspace_bytes =
                static_cast<size_t>(workspace.plane_bytes + workspace.column_bytes);
            return result;
          });
    });
  });
}

}  // namespace onepool::cpu::quant
