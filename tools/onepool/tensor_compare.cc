#include "tools/onepool/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace onepool::cli {

namespace {
bool is_float(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

double value_at(const HostTensor& tensor, int64_t i) {
  if (tensor.dtype == DType::kBFloat16) {  // the high half of a float32
    uint16_t high;
    std::memcpy(&high, tensor.data.data() + i * 2, 2);
    const uint32_t bits = static_cast<uint32_t>(high) << 16;
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  if (tensor.dtype == DType::kFloat16) {
    uint16_t bits;
    std::memcpy(&bits, tensor.data.data() + i * 2, 2);
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    const double sign = (bits & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0) return sign * std::ldexp(mantissa, -24);
    if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
    return sign * std::ldexp(1024 + mantissa, exponent - 25);
  }
  return tensor.float_at(i);
}
}  // namespace

Comparison compare_tensors(const HostTensor& actual, const HostTensor& expected, double atol,
                           double rtol) {
  Comparison result;
  if (actual.dtype != expected.dtype || !(actual.shape == expected.shape)) {
    result.match = false;
    result.problem =
        str_cat("expected ", dtype_name(expected.dtype), " ", expected.shape.to_string(), ", got ",
                dtype_name(actual.dtype), " ", actual.shape.to_string());
    return result;
  }
  const bool exact = !is_float(expected.dtype);
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const double a = value_at(actual, i);
    const double e = value_at(expected, i);
    bool ok;
    if (exact) {
      ok = actual.int_at(i) == expected.int_at(i);
    } else if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = a == e;
    } else {
      const double diff = std::fabs(a - e);
      result.max_abs_diff = std::max(result.max_abs_diff, diff);
      ok = diff <= atol + rtol * std::fabs(e);
    }
    if (ok) continue;
    if (result.mismatches == 0) {
      result.first_mismatch = i;
      result.first_actual = a;
      result.first_expected = e;
    }
    ++result.mismatches;
    result.match = false;
  }
  return result;
}

NonFinite first_non_finite(const HostTensor& tensor) {
  if (!is_float(tensor.dtype)) return {};
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    const double value = value_at(tensor, i);
    if (!std::isfinite(value)) return NonFinite{i, value};
  }
  return {};
}

double max_abs_value(const HostTensor& tensor) {
  if (!is_float(tensor.dtype)) return 0.0;
  double largest = 0.0;
  for (int64_t i = 0; i < tensor.element_count(); ++i) {
    const double value = std::fabs(value_at(tensor, i));
    if (std::isfinite(value)) largest = std::max(largest, value);
  }
  return largest;
}

std::string summarize_tensor(const HostTensor& tensor, int print_values) {
  const int64_t count = tensor.element_count();
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  double sum = 0.0;
  int64_t nans = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double v = value_at(tensor, i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    low = std::min(low, v);
    high = std::max(high, v);
    sum += v;
  }
  char text[160];
  std::snprintf(text, sizeof(text), "min %.6g  max %.6g  mean %.6g", count ? low : 0.0,
                count ? high : 0.0, count > nans ? sum / static_cast<double>(count - nans) : 0.0);
  std::string summary = text;
  if (nans > 0) summary += str_cat("  nan ", nans);
  if (print_values > 0) {
    summary += "  |";
    for (int64_t i = 0; i < std::min<int64_t>(count, print_values); ++i) {
      std::snprintf(text, sizeof(text), " %.6g", value_at(tensor, i));
      summary += text;
    }
    if (count > print_values) summary += " ...";
  }
  return summary;
}

}  // namespace onepool::cli
