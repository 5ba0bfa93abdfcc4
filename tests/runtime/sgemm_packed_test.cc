// The convolution GEMM (runtime/cpu/kernels/sgemm_packed.h): every micro-kernel this CPU can
// run (AVX-512, AVX2 + FMA, portable) gives the same bits as the portable one (one fused
// multiply-add chain per element, k in order), on sizes that leave partial panels and partial
// column tiles, with a row stride wider than the product, and the result is A * B (a float64
// loop, within 1e-5 relative). A machine without AVX-512 runs the AVX2 and portable kernels
// here; CI machines with and without AVX-512 each check the paths they have.
#include "runtime/cpu/kernels/sgemm_packed.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

using cpu::nn::SgemmIsa;

std::vector<SgemmIsa> runnable_isas() {
  std::vector<SgemmIsa> isas = {SgemmIsa::kPortable};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    isas.push_back(SgemmIsa::kAvx2);
  }
  if (__builtin_cpu_supports("avx512f")) isas.push_back(SgemmIsa::kAvx512);
  return isas;
}

// C = A * B through pack_a and sgemm_packed_a; B's rows are `ldb` apart (ldb >= n), and C's
// padding columns must stay untouched.
std::vector<float> product(SgemmIsa isa, const std::vector<float>& a, const std::vector<float>& b,
                           int64_t m, int64_t n, int64_t k, int64_t ldb) {
  std::vector<float> packed(static_cast<size_t>(cpu::nn::packed_a_floats(isa, m, k)));
  cpu::nn::pack_a(isa, a.data(), m, k, k, packed.data());
  const int64_t ldc = n + 3;
  std::vector<float> c(static_cast<size_t>(m * ldc), -5.0f);
  cpu::nn::sgemm_packed_a(isa, packed.data(), m, n, k, b.data(), ldb, c.data(), ldc);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = n; j < ldc; ++j) REQUIRE(c[static_cast<size_t>(i * ldc + j)] == -5.0f);
  }
  return c;
}

TEST_CASE("every GEMM micro-kernel gives the portable kernel's bits, and A * B") {
  const std::vector<SgemmIsa> isas = runnable_isas();
  MESSAGE("micro-kernels on this CPU: ", isas.size(),
          " (best: ", cpu::nn::sgemm_isa_name(cpu::nn::best_sgemm_isa()), ")");
  for (const int64_t m : {1, 5, 12, 13, 40}) {
    for (const int64_t n : {1, 7, 16, 31, 33, 100}) {
      for (const int64_t k : {0, 1, 3, 64, 577}) {
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(k);
        const int64_t ldb = n + 5;
        const std::vector<float> a = random_values(m * k, static_cast<uint32_t>(m * 7 + k));
        const std::vector<float> b = random_values(k * ldb, static_cast<uint32_t>(n * 3 + k));
        const std::vector<float> portable = product(SgemmIsa::kPortable, a, b, m, n, k, ldb);
        for (const SgemmIsa isa : isas) {
          CAPTURE(cpu::nn::sgemm_isa_name(isa));
          CHECK(product(isa, a, b, m, n, k, ldb) == portable);
        }
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0.0;
            for (int64_t p = 0; p < k; ++p) {
              sum += static_cast<double>(a[static_cast<size_t>(i * k + p)]) *
                     b[static_cast<size_t>(p * ldb + j)];
            }
            const float got = portable[static_cast<size_t>(i * (n + 3) + j)];
            REQUIRE(std::fabs(got - sum) <= 1e-5 * (1.0 + std::fabs(sum)) * std::sqrt(k + 1.0));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace onepool::testing
