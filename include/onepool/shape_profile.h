// Shape profiles: the ranges of input shapes a DynamicSession (and `--shapes` with ranges)
// accepts, like TensorRT's optimization profiles. Plain data with parsing and checks; used by the
// planner and the runtime alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

/// Inclusive range of one axis; a fixed dim has min == max. `step` > 1 also requires
/// (dim - min) to be a multiple of it.
struct DimRange {
  int64_t min = 1;
  int64_t max = 1;
  int64_t step = 1;
};

/// The declared range of one input, axis by axis.
struct InputShapeRange {
  std::string name;
  std::vector<DimRange> dims;
};

/// The shapes a DynamicSession accepts (TensorRT's optimization profile).
struct ShapeProfile {
  std::vector<InputShapeRange> inputs;

  /// Parses `--shapes` text with ranges: comma-separated `name:1x3x[320..1280]x[320..1280]`
  /// entries; an axis is a number (fixed), `[lo..hi]`, or `[lo..hi:step]`. Errors name the
  /// entry and axis.
  static Expected<ShapeProfile> parse(std::string_view text);
  /// Adds the entries of `other` (a repeated `--shapes`); an input named twice is an error.
  Status merge(const ShapeProfile& other);

  /// The input's range, or nullptr.
  const InputShapeRange* find(std::string_view name) const;
  /// Whether any axis spans more than one value.
  bool has_ranges() const;
  /// Every input at the top (max) / bottom (min) / middle of its ranges (the middle rounded
  /// down onto the step grid).
  std::vector<std::pair<std::string, std::vector<int64_t>>> max_shapes() const;
  std::vector<std::pair<std::string, std::vector<int64_t>>> min_shapes() const;
  std::vector<std::pair<std::string, std::vector<int64_t>>> mid_shapes() const;
  /// Ok when `shape` is inside the range declared for input `name` (inputs without a declared
  /// range are not checked). Error: "input 'x' axis 2: 1300 is outside the declared range
  /// [320..1280] (profile x:1x3x[320..1280]x[320..1280])".
  Status check(std::string_view name, const Shape& shape) const;
  /// Product over inputs of max elements / min elements (how far sizes can spread).
  double element_ratio() const;
  /// Back to `--shapes` text.
  std::string to_string() const;
};

}  // namespace onepool
