// The channel-vector GEMM (runtime/cpu/kernels/sgemm_channels.h): on AVX-512, every element it
// writes has the bits of the packed GEMM's portable micro-kernel (one fused multiply-add chain over
// k in order, then the epilogue), NaN, Inf and -0 included, over padded and flat runs, partial
// panels, several blocks of k and several passes, and it writes only its panels' rows and its
// runs' columns. The runs cover each row exactly, at most kChannelRunColumns each.
#include "runtime/cpu/kernels/sgemm_channels.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/kernel_test_util.h"
#include "runtime/sgemm_test_util.h"

namespace onepool::testing {
namespace {

using cpu::Activation;
using cpu::ActivationKind;
using cpu::nn::ColumnRun;
using cpu::nn::kChannelPanelRows;
using cpu::nn::kChannelRunColumns;

constexpr float kUntouched = -3.0f;

// A band of `rows` output rows `width` wide whose B rows are `plane_w` wide (plane_w == width:
// one flat run of positions), m rows of C from panel first_panel to end_panel.
struct Case {
  int64_t m, k, rows, width, plane_w;
  int64_t first_panel, end_panel;
  bool bias, residual;
  Activation activation;
};

// C's rows: the band's positions, then 5 columns nothing may write.
int64_t c_stride(const Case& c) { return c.rows * c.width + 5; }

// The reference: B's valid columns gathered densely, the portable packed GEMM with the epilogue.
std::vector<float> reference(const Case& c, const std::vector<float>& a,
                             const std::vector<float>& b, const cpu::nn::GemmEpilogue* epilogue) {
  const int64_t n = c.rows * c.width;
  const int64_t wide = c.rows * c.plane_w;
  std::vector<float> dense(static_cast<size_t>(c.k * n));
  for (int64_t p = 0; p < c.k; ++p) {
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t q = 0; q < c.width; ++q) {
        dense[static_cast<size_t>(p * n + r * c.width + q)] =
            b[static_cast<size_t>(p * wide + r * c.plane_w + q)];
      }
    }
  }
  const auto isa = cpu::nn::SgemmIsa::kPortable;
  std::vector<float> packed(static_cast<size_t>(cpu::nn::packed_a_floats(isa, c.m, c.k)));
  cpu::nn::pack_a(isa, a.data(), c.m, c.k, c.k, packed.data());
  std::vector<float> out(static_cast<size_t>(c.m * c_stride(c)), kUntouched);
  cpu::nn::sgemm_packed_a(isa, cpu::nn::PackedA{packed.data(), c.m, c.k}, 0, c.m, n, dense.data(),
                          n, out.data(), c_stride(c), epilogue);
  return out;
}

void check_case(const Case& c) {
  const int64_t ldc = c_stride(c);
  const int64_t wide = c.rows * c.plane_w;
  const ProductOperands operands = special_operands(c.m, c.k, wide, ldc);
  const std::vector<float>& a = operands.a;
  const std::vector<float>& b = operands.b;
  const std::vector<float>& bias = operands.bias;
  const std::vector<float>& residual = operands.residual;
  const cpu::nn::GemmEpilogue epilogue{c.bias ? bias.data() : nullptr,
                                       c.residual ? residual.data() : nullptr, c.activation};
  const bool finish = c.bias || c.residual || c.activation.kind != ActivationKind::kNone;
  const std::vector<float> want = reference(c, a, b, finish ? &epilogue : nullptr);

  std::vector<float> packed(static_cast<size_t>(cpu::nn::channel_packed_floats(c.m, c.k)));
  cpu::nn::pack_a_channels(a.data(), c.m, c.k, c.k, packed.data());
  std::vector<int64_t> offsets(static_cast<size_t>(c.k));
  for (int64_t p = 0; p < c.k; ++p) offsets[static_cast<size_t>(p)] = p * wide;
  std::vector<ColumnRun> runs;
  cpu::nn::append_column_runs(c.rows, c.width, c.plane_w, runs);
  std::vector<float> got(static_cast<size_t>(c.m * ldc), kUntouched);
  const cpu::nn::ChannelProduct product{packed.data(),
                                        c.m,
                                        c.k,
                                        b.data(),
                                        offsets.data(),
                                        runs.data(),
                                        static_cast<int64_t>(runs.size()),
                                        got.data(),
                                        ldc,
                                        finish ? &epilogue : nullptr};
  cpu::nn::sgemm_channels(product, c.first_panel, c.end_panel);

  const int64_t first_row = c.first_panel * kChannelPanelRows;
  const int64_t end_row = std::min(c.m, c.end_panel * kChannelPanelRows);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float value = got[static_cast<size_t>(i * ldc + j)];
      const bool written = i >= first_row && i < end_row && j < c.rows * c.width;
      const float expected = written ? want[static_cast<size_t>(i * ldc + j)] : kUntouched;
      if (!same_bits(value, expected)) {
        FAIL_CHECK("row ", i, " column ", j, ": channel GEMM gave ", value, ", expected ",
                   expected);
        return;
      }
    }
  }
}

TEST_CASE("the channel-vector GEMM gives the packed GEMM's bits and writes only its panels' rows") {
  if (!__builtin_cpu_supports("avx512f")) {
    MESSAGE("no AVX-512 on this CPU: the channel-vector GEMM does not run here");
    return;
  }
  struct Band {
    int64_t rows, width, plane_w;
  };
  // Flat and padded bands, a run of one column, and 400 positions (two passes).
  const Band bands[] = {{1, 49, 49}, {7, 7, 9}, {3, 14, 16}, {2, 200, 200}, {1, 1, 1}};
  const Activation activations[] = {
      Activation{ActivationKind::kNone, 0.0f, 0.0f},
      Activation{ActivationKind::kRelu, 0.0f, 0.0f},
      Activation{ActivationKind::kLeakyRelu, 0.1f, 0.0f},
      Activation{ActivationKind::kClip, -0.5f, 0.25f},
  };
  int cases = 0;
  for (const int64_t m : {1, 17, 64, 70, 112, 130, 191}) {  // last panels of 1-4 vectors
    const int64_t panels = (m + kChannelPanelRows - 1) / kChannelPanelRows;
    for (const int64_t k : {0, 1, 129, 300}) {
      for (const Band& band : bands) {
        for (const Activation& activation : activations) {
          for (const int flags : {0, 1, 2, 3}) {
            // All panels, and (with several) only the last.
            for (const int64_t first_panel : {int64_t{0}, panels - 1}) {
              if (first_panel > 0 && flags != 3) continue;
              const Case c{m,           k,      band.rows,        band.width,       band.plane_w,
                           first_panel, panels, (flags & 1) != 0, (flags & 2) != 0, activation};
              CAPTURE(m);
              CAPTURE(k);
              CAPTURE(band.rows);
              CAPTURE(band.width);
              CAPTURE(band.plane_w);
              CAPTURE(first_panel);
              CAPTURE(flags);
              CAPTURE(static_cast<int>(activation.kind));
              check_case(c);
              ++cases;
              if (panels == 1) break;
            }
          }
        }
      }
    }
  }
  MESSAGE(cases, " products compared");
}

TEST_CASE("column runs cover each row once, near-equal, at most kChannelRunColumns long") {
  struct Band {
    int64_t rows, width, plane_w;
  };
  for (const Band band : {Band{7, 7, 9}, Band{1, 49, 49}, Band{4, 112, 115}, Band{3, 13, 15},
                          Band{2, 6, 6}, Band{5, 1, 3}}) {
    CAPTURE(band.rows);
    CAPTURE(band.width);
    CAPTURE(band.plane_w);
    std::vector<ColumnRun> runs;
    cpu::nn::append_column_runs(band.rows, band.width, band.plane_w, runs);
    const bool flat = band.plane_w == band.width;
    const int64_t line = flat ? band.rows * band.width : band.width;
    std::vector<int64_t> covered;
    int64_t shortest = line;
    int64_t longest = 0;
    for (const ColumnRun& run : runs) {
      REQUIRE(run.count >= 1);
      REQUIRE(run.count <= kChannelRunColumns);
      shortest = std::min(shortest, run.count);
      longest = std::max(longest, run.count);
      for (int64_t j = 0; j < run.count; ++j) covered.push_back(run.b_column + j);
    }
    CHECK(longest - shortest <= 1);
    std::vector<int64_t> expected;
    for (int64_t r = 0; r < band.rows; ++r) {
      for (int64_t q = 0; q < band.width; ++q) expected.push_back(r * band.plane_w + q);
    }
    CHECK(covered == expected);
  }
  // A 7x7 map's row is one run; a row of 8 is two of 4, a row of 15 three of 5.
  struct RowCut {
    int64_t width, runs, length;
  };
  for (const RowCut cut : {RowCut{7, 1, 7}, RowCut{8, 2, 4}, RowCut{15, 3, 5}}) {
    CAPTURE(cut.width);
    std::vector<ColumnRun> row;
    cpu::nn::append_column_runs(1, cut.width, cut.width + 2, row);
    REQUIRE(row.size() == static_cast<size_t>(cut.runs));
    for (const ColumnRun& run : row) CHECK(run.count == cut.length);
  }
}

}  // namespace
}  // namespace onepool::testing
