// The GEMM micro-kernels this CPU can run, for the tests that compare them.
#pragma once

#include <cstring>
#include <limits>
#include <vector>

#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/kernel_test_util.h"

namespace onepool::testing {

/// Portable always; AVX2 + FMA and AVX-512 where the CPU has them.
inline std::vector<cpu::nn::SgemmIsa> runnable_sgemm_isas() {
  std::vector<cpu::nn::SgemmIsa> isas = {cpu::nn::SgemmIsa::kPortable};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    isas.push_back(cpu::nn::SgemmIsa::kAvx2);
  }
  if (__builtin_cpu_supports("avx512f")) isas.push_back(cpu::nn::SgemmIsa::kAvx512);
  return isas;
}

/// Plants NaN, infinities, signed zeros and ordinary values every 13th element (from seed % 11 on),
/// so that a product or an epilogue meets each comparison.
inline void plant_specials(std::vector<float>& values, uint32_t seed) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            -0.0f,
                            0.0f,
                            5.5f,
                            -7.25f};
  for (size_t i = seed % 11; i < values.size(); i += 13) values[i] = specials[(i / 13) % 7];
}

/// A product's operands (A m x k, B k x its columns, a bias per row, a residual of m rows ldc
/// apart), random with specials planted in each.
struct ProductOperands {
  std::vector<float> a, b, bias, residual;
};

inline ProductOperands special_operands(int64_t m, int64_t k, int64_t b_columns, int64_t ldc) {
  ProductOperands operands{random_values(m * k, static_cast<uint32_t>(m * 5 + k)),
                           random_values(k * b_columns, static_cast<uint32_t>(b_columns * 9 + k)),
                           random_values(m, 17), random_values(m * ldc, 23)};
  plant_specials(operands.a, 1);
  plant_specials(operands.b, 2);
  plant_specials(operands.bias, 3);
  plant_specials(operands.residual, 4);
  return operands;
}

inline bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

}  // namespace onepool::testing
