// The convolution GEMM (runtime/cpu/kernels/sgemm_packed.h): every micro-kernel this CPU can
// run (AVX-512, AVX2 + FMA, portable) gives the same bits as the portable one (one fused
// multiply-add chain per element, k in order), on sizes that leave partial panels and partial
// column tiles, with a row stride wider than the product, and the result is A * B (a float64
// loop, within 1e-5 relative). A machine without AVX-512 runs the AVX2 and portable kernels
// here; CI machines with and without AVX-512 each check the paths they have.
#include "runtime/cpu/kernels/sgemm_packed.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/kernel_test_util.h"
#include "runtime/sgemm_test_util.h"

namespace onepool::testing {
namespace {

using cpu::nn::SgemmIsa;

// C = A * B through pack_a and sgemm_packed_a; B's rows are `ldb` apart (ldb >= n), and C's
// padding columns must stay untouched.
std::vector<float> product(SgemmIsa isa, const std::vector<float>& a, const std::vector<float>& b,
                           int64_t m, int64_t n, int64_t k, int64_t ldb) {
  std::vector<float> packed(static_cast<size_t>(cpu::nn::packed_a_floats(isa, m, k)));
  cpu::nn::pack_a(isa, a.data(), m, k, k, packed.data());
  const int64_t ldc = n + 3;
  std::vector<float> c(static_cast<size_t>(m * ldc), -5.0f);
  cpu::nn::sgemm_packed_a(isa, cpu::nn::PackedA{packed.data(), m, k}, 0, m, n, b.data(), ldb,
                          c.data(), ldc);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = n; j < ldc; ++j) REQUIRE(c[static_cast<size_t>(i * ldc + j)] == -5.0f);
  }
  return c;
}

TEST_CASE("every GEMM micro-kernel gives the portable kernel's bits, and A * B") {
  const std::vector<SgemmIsa> isas = runnable_sgemm_isas();
  MESSAGE("micro-kernels on this CPU: ", isas.size(),
          " (best: ", cpu::nn::sgemm_isa_name(cpu::nn::best_sgemm_isa()), ")");
  for (const int64_t m : {1, 5, 12, 13, 20, 40, 64}) {
    for (const int64_t n : {1, 7, 16, 31, 33, 100}) {
      for (const int64_t k : {0, 1, 3, 64, 150, 193, 256, 257, 577}) {
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

// A packed in parts (pack_a_panels over panel ranges, as threads do) equals pack_a's layout, and
// a run over rows [first_row, ...) (first_row a panel boundary, as a thread's share of the
// output channels) gives exactly those rows of the whole product; k spans several blocks.
TEST_CASE("packing in parts and products over a range of panels match the whole") {
  for (const SgemmIsa isa : runnable_sgemm_isas()) {
    CAPTURE(cpu::nn::sgemm_isa_name(isa));
    const int64_t panel = cpu::nn::sgemm_panel_rows(isa);
    const int64_t m = 3 * panel + 5, n = 45, k = 300;
    const std::vector<float> a = random_values(m * k, 21);
    const std::vector<float> b = random_values(k * n, 22);
    std::vector<float> whole(static_cast<size_t>(cpu::nn::packed_a_floats(isa, m, k)));
    cpu::nn::pack_a(isa, a.data(), m, k, k, whole.data());
    std::vector<float> parts(whole.size(), -1.0f);
    const int64_t panels = (m + panel - 1) / panel;
    cpu::nn::pack_a_panels(isa, a.data(), m, k, k, 2, panels, parts.data());
    cpu::nn::pack_a_panels(isa, a.data(), m, k, k, 0, 2, parts.data());
    CHECK(parts == whole);
    const cpu::nn::PackedA packed{whole.data(), m, k};
    std::vector<float> all(static_cast<size_t>(m * n));
    cpu::nn::sgemm_packed_a(isa, packed, 0, m, n, b.data(), n, all.data(), n);
    const int64_t first_row = 2 * panel;
    std::vector<float> tail(static_cast<size_t>((m - first_row) * n));
    cpu::nn::sgemm_packed_a(isa, packed, first_row, m - first_row, n, b.data(), n, tail.data(), n);
    CHECK(std::equal(tail.begin(), tail.end(), all.begin() + first_row * n));
  }
}

// Packing reads A through its row stride (a MatMul's rows inside a wider tensor): the layout is
// that of the same rows stored compactly, each of A's values sits where PackedA says (checked for
// one block of k), and the rest is padding zeros, over partial panels and several blocks of k.
TEST_CASE("A packs the same through any row stride, whole 4-row groups or not") {
  for (const SgemmIsa isa : runnable_sgemm_isas()) {
    CAPTURE(cpu::nn::sgemm_isa_name(isa));
    for (const int64_t m : {1, 3, 6, 7, 12, 17, 30}) {
      for (const int64_t k : {1, 5, 130, 257}) {
        CAPTURE(m);
        CAPTURE(k);
        const int64_t lda = k + 9;
        std::vector<float> wide(static_cast<size_t>(m * lda), -9.0f), compact;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t p = 0; p < k; ++p) {
            const auto value = static_cast<float>(i * 1000 + p + 1);
            wide[static_cast<size_t>(i * lda + p)] = value;
            compact.push_back(value);
          }
        }
        const auto floats = static_cast<size_t>(cpu::nn::packed_a_floats(isa, m, k));
        std::vector<float> from_wide(floats, -1.0f), from_compact(floats, -2.0f);
        cpu::nn::pack_a(isa, wide.data(), m, k, lda, from_wide.data());
        cpu::nn::pack_a(isa, compact.data(), m, k, k, from_compact.data());
        CHECK(from_wide == from_compact);
        if (k <= 192) {  // one block of k: panel after panel, each k steps of `rows` floats
          const int64_t rows = cpu::nn::sgemm_panel_rows(isa);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t p = 0; p < k; ++p) {
              const int64_t at = (i / rows) * rows * k + p * rows + i % rows;
              REQUIRE(from_wide[static_cast<size_t>(at)] == wide[static_cast<size_t>(i * lda + p)]);
            }
          }
        }
        std::vector<float> values(from_wide);
        std::sort(values.begin(), values.end());
        const auto zeros = static_cast<int64_t>(std::count(values.begin(), values.end(), 0.0f));
        CHECK(zeros == static_cast<int64_t>(floats) - m * k);
        values.erase(values.begin(), values.begin() + zeros);
        std::sort(compact.begin(), compact.end());
        CHECK(values == compact);
      }
    }
  }
}

// A B packed once (pack_b, a MatMul's constant weights) gives the bits of the same B read in
// place, for the whole width and for column ranges starting at a tile boundary (how threads
// split the columns), with C's padding columns untouched.
TEST_CASE("a packed B gives the bits of B read in place, over any tile-aligned column range") {
  for (const SgemmIsa isa : runnable_sgemm_isas()) {
    CAPTURE(cpu::nn::sgemm_isa_name(isa));
    const int64_t width = cpu::nn::sgemm_tile_cols(isa);
    for (const int64_t m : {1, 12, 13, 40}) {
      for (const int64_t n : {1, 31, 33, 100}) {
        for (const int64_t k : {1, 129, 300}) {
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(k);
          const std::vector<float> a = random_values(m * k, static_cast<uint32_t>(m + 5 * k));
          const std::vector<float> b = random_values(k * n, static_cast<uint32_t>(n + 11 * k));
          const std::vector<float> in_place = product(isa, a, b, m, n, k, n);
          std::vector<float> packed_a(static_cast<size_t>(cpu::nn::packed_a_floats(isa, m, k)));
          cpu::nn::pack_a(isa, a.data(), m, k, k, packed_a.data());
          std::vector<float> packed_b(static_cast<size_t>(cpu::nn::packed_b_floats(isa, k, n)),
                                      -7.0f);
          cpu::nn::pack_b(isa, b.data(), k, n, n, packed_b.data());
          const int64_t ldc = n + 3;
          std::vector<float> c(static_cast<size_t>(m * ldc), -5.0f);
          const cpu::nn::PackedA pa{packed_a.data(), m, k};
          const cpu::nn::PackedB pb{packed_b.data(), k, n};
          const int64_t split = std::min(n, width);  // one range per side of a tile boundary
          cpu::nn::sgemm_packed_ab(isa, pa, m, pb, 0, split, c.data(), ldc);
          cpu::nn::sgemm_packed_ab(isa, pa, m, pb, split, n - split, c.data() + split, ldc);
          CHECK(c == in_place);
        }
      }
    }
  }
}

}  // namespace
}  // namespace onepool::testing
