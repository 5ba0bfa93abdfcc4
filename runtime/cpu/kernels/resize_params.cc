// Reads Resize / Upsample parameters. Input layout by version:
//   Upsample-7: X; scales attribute.          Upsample-9, Resize-10: X, scales.
//   Resize-11+: X, roi, scales, sizes (scales or sizes given; the other empty or omitted).
// Resize-10 and Upsample use asymmetric coordinates and the "simple" nearest rounding.
#include <cmath>

#include "runtime/cpu/kernels/resize.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

Expected<ResizeMode> parse_mode(const NodeContext& node, const std::string& mode) {
  if (mode == "nearest") return ResizeMode::kNearest;
  if (mode == "linear" || mode == "bilinear") return ResizeMode::kLinear;
  if (mode == "cubic") return ResizeMode::kCubic;
  return node.error(StatusCode::kUnsupported, "mode '", mode,
                    "' (expected nearest, linear or cubic)");
}

Expected<CoordinateMode> parse_coordinates(const NodeContext& node, const std::string& mode) {
  if (mode == "half_pixel") return CoordinateMode::kHalfPixel;
  if (mode == "pytorch_half_pixel") return CoordinateMode::kPytorchHalfPixel;
  if (mode == "align_corners") return CoordinateMode::kAlignCorners;
  if (mode == "asymmetric") return CoordinateMode::kAsymmetric;
  if (mode == "tf_half_pixel_for_nn") return CoordinateMode::kTfHalfPixelForNn;
  if (mode == "tf_crop_and_resize") return CoordinateMode::kTfCropAndResize;
  return node.error(StatusCode::kUnsupported, "coordinate_transformation_mode '", mode, "'");
}

Expected<NearestMode> parse_nearest(const NodeContext& node, const std::string& mode) {
  if (mode == "round_prefer_floor") return NearestMode::kRoundPreferFloor;
  if (mode == "round_prefer_ceil") return NearestMode::kRoundPreferCeil;
  if (mode == "floor") return NearestMode::kFloor;
  if (mode == "ceil") return NearestMode::kCeil;
  return node.error(StatusCode::kUnsupported, "nearest_mode '", mode, "'");
}

// A constant float list from input `index`; empty when the input is omitted or has no elements.
Expected<std::vector<double>> constant_floats(const NodeContext& node, size_t index,
                                              const char* name) {
  if (!node.has_input(index) || node.input(index).shape.element_count() == 0) {
    return std::vector<double>();
  }
  const HostTensor* tensor = node.constant_input(index);
  if (tensor == nullptr) {
    // Scales and sizes can be recovered from the static output shape; roi cannot.
    if (std::string(name) != "roi") return std::vector<double>();
    return node.error(StatusCode::kUnsupported, "input ", index, " (", name,
                      ") must be a constant for the CPU kernel");
  }
  std::vector<double> values;
  for (int64_t i = 0; i < tensor->element_count(); ++i) values.push_back(tensor->float_at(i));
  return values;
}

Status read_scales(const NodeContext& node, bool legacy, ResizeParams& params) {
  const Shape& in = node.input(0).shape;
  const Shape& out = node.output(0).shape;
  std::vector<double> scales;
  if (node.node().attributes.has("scales")) {
    for (float s : node.node().attributes.get_floats("scales")) scales.push_back(s);
  } else {
    ONEPOOL_ASSIGN_OR_RETURN(scales, constant_floats(node, legacy ? 1 : 2, "scales"));
  }
  if (scales.empty()) {
    // sizes (or a runtime scales/sizes input): the scale is output / input, as the reference.
    for (int k = 0; k < in.rank(); ++k) {
      scales.push_back(in[k] == 0 ? 1.0 : static_cast<double>(out[k]) / static_cast<double>(in[k]));
    }
  }
  if (static_cast<int>(scales.size()) != in.rank()) {
    return node.error(StatusCode::kInvalidModel, "scales has ", scales.size(),
                      " entries, expected rank ", in.rank());
  }
  for (int k = 0; k < in.rank(); ++k) {
    const auto expected = static_cast<int64_t>(
        std::floor(static_cast<double>(in[k]) * scales[static_cast<size_t>(k)]));
    const bool cropped = params.coordinates == CoordinateMode::kTfCropAndResize;
    if (scales[static_cast<size_t>(k)] <= 0.0 || (!cropped && std::abs(expected - out[k]) > 1)) {
      return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "' ",
                        out.to_string(), " does not match input ", in.to_string(), " scaled by ",
                        scales[static_cast<size_t>(k)], " on axis ", k);
    }
  }
  params.scales = std::move(scales);
  return Status::ok();
}

}  // namespace

Expected<ResizeParams> read_resize_params(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input 0 and output 0");
  }
  if (node.input(0).shape.rank() != node.output(0).shape.rank()) {
    return node.error(StatusCode::kInvalidModel, "input ", node.input(0).shape.to_string(),
                      " and output ", node.output(0).shape.to_string(), " differ in rank");
  }
  const AttributeMap& attributes = node.node().attributes;
  if (attributes.has("axes") || attributes.has("keep_aspect_ratio_policy")) {
    return node.error(StatusCode::kUnsupported,
                      "the opset-18 'axes' / "
                      "'keep_aspect_ratio_policy' attributes are not supported");
  }
  const bool legacy = node.node().op_type == "Upsample" || node.graph().opset < 11;
  ResizeParams params;
  ONEPOOL_ASSIGN_OR_RETURN(params.mode, parse_mode(node, attributes.get_string("mode", "nearest")));
  params.cubic_a = attributes.get_float("cubic_coeff_a", -0.75f);
  params.exclude_outside = attributes.get_int("exclude_outside", 0) != 0;
  params.extrapolation_value = attributes.get_float("extrapolation_value", 0.0f);
  if (legacy) {
    params.coordinates = CoordinateMode::kAsymmetric;
    params.nearest = NearestMode::kSimple;
  } else {
    ONEPOOL_ASSIGN_OR_RETURN(
        params.coordinates,
        parse_coordinates(node,
                          attributes.get_string("coordinate_transformation_mode", "half_pixel")));
    ONEPOOL_ASSIGN_OR_RETURN(
        params.nearest,
        parse_nearest(node, attributes.get_string("nearest_mode", "round_prefer_floor")));
  }
  ONEPOOL_RETURN_IF_ERROR(read_scales(node, legacy, params));
  if (params.coordinates == CoordinateMode::kTfCropAndResize) {
    ONEPOOL_ASSIGN_OR_RETURN(params.roi, constant_floats(node, 1, "roi"));
    if (params.roi.size() != 2 * params.scales.size()) {
      return node.error(StatusCode::kInvalidModel, "roi has ", params.roi.size(),
                        " entries, expected 2 * rank = ", 2 * params.scales.size());
    }
  }
  return params;
}

}  // namespace onepool::cpu::data
