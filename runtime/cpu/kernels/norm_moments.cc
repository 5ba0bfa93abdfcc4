// The row statistics of the normalization kernels (see norm_kernels.h).
#include <cmath>

#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/norm_kernels.h"

namespace onepool::cpu::nn {
namespace {

constexpr int64_t kMomentLanes = 8;

// The sum of f(x[i]) over the row: lanes, then the lanes in order, then the tail.
template <class Term>
inline double lane_sum(const float* x, int64_t count, Term term) {
  double lanes[kMomentLanes] = {};
  const int64_t whole = count / kMomentLanes * kMomentLanes;
  for (int64_t i = 0; i < whole; i += kMomentLanes) {
    for (int64_t j = 0; j < kMomentLanes; ++j) lanes[j] += term(x[i + j]);
  }
  double sum = 0.0;
  for (int64_t j = 0; j < kMomentLanes; ++j) sum += lanes[j];
  for (int64_t i = whole; i < count; ++i) sum += term(x[i]);
  return sum;
}

}  // namespace

ONEPOOL_ISA_CLONES RowMoments row_moments(const float* x, int64_t count, float epsilon) {
  const double sum = lane_sum(x, count, [](float v) { return static_cast<double>(v); });
  const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  const double squares = lane_sum(x, count, [mean](float v) {
    const double d = v - mean;
    return d * d;
  });
  const double variance = count > 0 ? squares / static_cast<double>(count) : 0.0;
  return {static_cast<float>(mean), static_cast<float>(1.0 / std::sqrt(variance + epsilon))};
}

}  // namespace onepool::cpu::nn
