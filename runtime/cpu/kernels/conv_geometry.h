// Window geometry shared by Conv, ConvTranspose and the pooling kernels: kernel, strides,
// dilations and pads parsed from a node's attributes (auto_pad resolved), and the spatial sizes.
//
// Every geometry is normalized to three spatial axes (D, H, W): a 1-D op has D = H = 1 and a 2-D
// op D = 1, with kernel 1, stride 1, dilation 1 and no pad on the added axes, so that one loop
// nest serves 1-D, 2-D and 3-D. Attribute values are bounded (kMaxWindowValue) at parse time so
// that products of two of them never overflow int64.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "runtime/cpu/kernel.h"

namespace onepool::cpu::nn {

constexpr int kMaxSpatialRank = 3;
/// Largest kernel, stride, dilation, pad or spatial size accepted from a model.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;

// Everything of the conv / pool / norm kernel family lives in onepool::cpu::nn so that its
// helpers (checked_mul, check_output_shape, ...) never collide with other families' ones.
using SpatialDims = std::array<int64_t, kMaxSpatialRank>;

/// One window sliding over an "input" image to produce an "output" grid: the output position o
/// on an axis reads input positions o * stride - pad_begin + k * dilation for k in [0, kernel).
/// For ConvTranspose the roles swap: `input` is the (large) result Y, `output` the grid of X.
struct WindowGeometry {
  int spatial_rank = 0;  // as in the model: 1, 2 or 3
  SpatialDims input{1, 1, 1};
  SpatialDims output{1, 1, 1};
  SpatialDims kernel{1, 1, 1};
  SpatialDims stride{1, 1, 1};
  SpatialDims dilation{1, 1, 1};
  SpatialDims pad_begin{0, 0, 0};
  SpatialDims pad_end{0, 0, 0};

  int64_t input_size() const { return input[0] * input[1] * input[2]; }
  int64_t output_size() const { return output[0] * output[1] * output[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// Kernel of ones, stride one, no pad: each output position reads exactly its own input.
  bool is_pointwise() const;
};

/// Where the model's spatial axis i (0-based, of spatial_rank) lives in the normalized arrays.
inline int normalized_axis(int spatial_rank, int axis) {
  return kMaxSpatialRank - spatial_rank + axis;
}

/// Options that differ between the forward window ops.
struct WindowOptions {
  bool ceil_mode = false;       // pooling: round the output size up
  bool allow_dilations = true;  // AveragePool (opsets <= 18) has no dilations attribute
};

/// Builds the geometry of Conv / MaxPool / AveragePool from `node`'s attributes (strides,
/// dilations, pads, auto_pad), the input shape [N, C, spatial...] and the kernel's spatial dims.
/// Fails (kInvalidModel / kUnsupported / kOutOfRange) naming the attribute and the values.
Expected<WindowGeometry> make_forward_geometry(const NodeContext& node, const Shape& input,
                                               const std::vector<int64_t>& kernel,
                                               const WindowOptions& options);

/// Builds the geometry of ConvTranspose: input = Y's spatial dims, output = X's spatial dims.
/// Resolves output_shape, output_padding and auto_pad as the ONNX spec does; the result's
/// `input` is the expected Y spatial shape.
Expected<WindowGeometry> make_transpose_geometry(const NodeContext& node, const Shape& x,
                                                 const std::vector<int64_t>& kernel);

/// Checks that the graph's output `index` has shape `expected`; the error names the node, the
/// output, both shapes and the first axis that differs.
Status check_output_shape(const NodeContext& node, size_t index, const Shape& expected);

/// [first, last) output positions o in [0, out_size) whose input position o * stride + offset
/// lies in [0, in_size).
struct ValidRange {
  int64_t first = 0;
  int64_t last = 0;
};
ValidRange valid_output_range(int64_t offset, int64_t stride, int64_t in_size, int64_t out_size);

/// a * b with an overflow check; kOutOfRange names `what`.
Expected<int64_t> checked_mul(int64_t a, int64_t b, const char* what);

/// Checks that `node` input `index` is float32 (kUnsupported otherwise, naming the dtype).
Status require_float32(const NodeContext& node, size_t index);

}  // namespace onepool::cpu::nn
