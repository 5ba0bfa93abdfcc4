// Elementwise comparison of an actual tensor against a reference, ONNX-backend-test style:
// |actual - expected| <= atol + rtol * |expected|; NaN matches NaN; integers and bools exact.
#pragma once

#include <cstdint>
#include <string>

#include "planner/core/graph.h"

namespace onepool::cli {

struct Comparison {
  bool match = true;
  double max_abs_diff = 0.0;
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;
  double first_actual = 0.0;
  double first_expected = 0.0;
  std::string problem;  // dtype or shape disagreement, when any
};

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, double atol,
                           double rtol);

/// The first NaN or Inf of a float tensor: its index (-1 when every element is finite, and for
/// integer and bool tensors) and value.
struct NonFinite {
  int64_t index = -1;
  double value = 0.0;
};
NonFinite first_non_finite(const HostTensor& tensor);

/// The largest |value| among the finite elements (0 for an integer, bool or empty tensor).
double max_abs_value(const HostTensor& tensor);

/// "min -0.51 max 3.2 mean 0.12 | first: 0.1 0.2 ..." for a run summary.
std::string summarize_tensor(const HostTensor& tensor, int print_values);

}  // namespace onepool::cli
