// The GEMM micro-kernels this CPU can run, for the tests that compare them.
#pragma once

#include <vector>

#include "runtime/cpu/kernels/sgemm_packed.h"

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

}  // namespace onepool::testing
