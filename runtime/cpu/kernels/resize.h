// Resize (opset 10-18) and Upsample (opset 7-9) on the CPU: parameters, the per-axis coordinate
// mapping, and the taps every output index reads.
//
// The coordinate mapping follows the ONNX reference implementation (onnx/backend/test/case/node/
// resize.py) exactly, including its use of output_width = scale * input_width (a real number)
// for align_corners and tf_crop_and_resize. Each output index o along an axis becomes a short
// list of taps (input index clamped to the edge, weight): 1 for nearest, 2 for linear, 4 for
// cubic; taps at the same index are merged and zero-weight taps dropped, so an axis with scale 1
// reduces to the identity. The kernel then needs no coordinate math at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace onepool::cpu::data {

enum class ResizeMode : uint8_t { kNearest, kLinear, kCubic };
enum class CoordinateMode : uint8_t {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
// kSimple: Resize-10 / Upsample, floor when upsampling and ceil when downsampling.
enum class NearestMode : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  CoordinateMode coordinates = CoordinateMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.0f;
  std::vector<double> scales;  // one per axis (given, or output / input)
  std::vector<double> roi;     // 2 * rank (starts then ends), tf_crop_and_resize only
};

/// Reads the attributes and the constant roi / scales / sizes inputs (or the opset 7 scales
/// attribute) for a Resize or Upsample node; scales default to output / input dims.
Expected<ResizeParams> read_resize_params(const NodeContext& node);

/// The taps of one axis: output index o reads input indices index[o*taps + t] with weights
/// weight[o*taps + t] (unused slots have weight 0); outside[o] marks tf_crop_and_resize
/// extrapolation.
struct AxisTaps {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
  std::vector<uint8_t> outside;

  /// True when output index o reads exactly input index o with weight 1.
  bool is_identity() const;
};

/// Taps of axis `axis` (input dim `in_dim`, output dim `out_dim`) under `params`.
AxisTaps compute_axis_taps(const ResizeParams& params, int axis, int64_t in_dim, int64_t out_dim);

/// The Resize / Upsample kernel without its fast paths (every linear and cubic node on the
/// generic tap loop): the reference tests hold the fast paths to, bit for bit. The registered
/// factory is make_resize_kernel (shape_ops.h).
Expected<PreparedKernel> make_resize_kernel_generic(const NodeContext& node);

}  // namespace onepool::cpu::data
