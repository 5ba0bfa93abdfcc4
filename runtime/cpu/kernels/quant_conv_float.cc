// The exact float path of 8-bit convolutions (see quant_conv_float.h).
#include "runtime/cpu/kernels/quant_conv_float.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/cpu/kernels/isa_clones.h"

namespace onepool::cpu::quant {
namespace {

constexpr double kExactLimit = 16777216.0;    // 2^24: below it every integer is a float
constexpr double kMaxInputMagnitude = 255.0;  // |x - x_zero| for any 8-bit x and zero point
constexpr int64_t kAlignment = 64;            // the implicit GEMM's parts after the planes

}  // namespace

std::optional<ExactFloatWeights> pack_exact_float_weights(nn::SgemmIsa isa,
                                                          const std::vector<float>& weights,
                                                          int64_t groups, int64_t out_per_group,
                                                          int64_t rows) {
  float largest = 0.0f;
  for (float w : weights) largest = std::max(largest, std::fabs(w));
  if (static_cast<double>(rows) * kMaxInputMagnitude * largest >= kExactLimit) {
    return std::nullopt;
  }
  ExactFloatWeights result;
  result.isa = isa;
  result.rows = rows;
  result.out_per_group = out_per_group;
  result.packed_floats = nn::packed_a_floats(isa, out_per_group, rows);
  auto packed =
      std::make_shared<std::vector<float>>(static_cast<size_t>(groups * result.packed_floats));
  for (int64_t group = 0; group < groups; ++group) {
    nn::pack_a(isa, weights.data() + group * out_per_group * rows, out_per_group, rows, rows,
               packed->data() + group * result.packed_floats);
  }
  result.packed = std::move(packed);
  return result;
}

ONEPOOL_ISA_CLONES void floats_to_int32_in_place(int32_t* values, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    float value;
    std::memcpy(&value, values + i, sizeof(float));
    values[i] = static_cast<int32_t>(value);
  }
}

void multiply_exact_float(const ExactFloatWeights& weights, int64_t group, const float* col,
                          int64_t outputs, float* c, ThreadPool& threads) {
  const nn::PackedA a{weights.packed->data() + group * weights.packed_floats, weights.out_per_group,
                      weights.rows};
  const int64_t panel = nn::sgemm_panel_rows(weights.isa);
  const int64_t panels = (weights.out_per_group + panel - 1) / panel;
  threads.parallel_for(panels, 1, [&](int64_t begin, int64_t end) {
    const int64_t first = begin * panel;
    const int64_t last = std::min(weights.out_per_group, end * panel);
    nn::sgemm_packed_a(weights.isa, a, first, last - first, outputs, col, outputs,
                       c + first * outputs, outputs);
  });
}

int64_t plan_exact_implicit(ExactFloatWeights& weights, const nn::WindowGeometry& g,
                            int64_t in_per_group, int threads, int64_t column_bytes) {
  if (!nn::implicit_gemm_fits(g)) return column_bytes;
  weights.implicit = nn::plan_implicit_gemm(g, in_per_group, weights.out_per_group, threads, false);
  weights.plane_bytes =
      (in_per_group * g.input_size() * static_cast<int64_t>(sizeof(float)) + kAlignment - 1) /
      kAlignment * kAlignment;
  return weights.plane_bytes + weights.implicit->parts * weights.implicit->part_bytes;
}

void multiply_exact_implicit(const ExactFloatWeights& weights, int64_t group,
                             const nn::WindowGeometry& g, const float* planes, float* c,
                             std::byte* workspace, ThreadPool& threads) {
  nn::run_implicit_gemm(g, *weights.implicit, weights.isa,
                        weights.packed->data() + group * weights.packed_floats,
                        weights.out_per_group, weights.rows / g.kernel_size(), planes, c,
                        nn::BandEpilogue{}, workspace, threads);
}

}  // namespace onepool::cpu::quant
