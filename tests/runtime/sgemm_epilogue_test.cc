// The GEMM's in-register epilogue (runtime/cpu/kernels/sgemm_epilogue.h): on every micro-kernel
// this CPU runs, a product with an epilogue gives the bits of the same product followed by the
// passes it replaces (add_bias_activation: bias, residual, activation), NaN, Inf and -0 included,
// on partial panels and tiles, several blocks of k and k = 0, and writes nothing past each row.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "runtime/cpu/kernels/conv_kernels.h"
#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/kernel_test_util.h"
#include "runtime/sgemm_test_util.h"

namespace onepool::testing {
namespace {

using cpu::Activation;
using cpu::ActivationKind;
using cpu::nn::SgemmIsa;

struct Case {
  int64_t m, n, k;
  bool bias, residual;
  Activation activation;
};

// Runs the product with the epilogue, and the product then the passes; compares bits.
void check_case(SgemmIsa isa, const Case& c, cpu::ThreadPool& threads) {
  const int64_t ldc = c.n + 3;
  const ProductOperands operands = special_operands(c.m, c.k, c.n, ldc);
  const std::vector<float>& a = operands.a;
  const std::vector<float>& b = operands.b;
  const std::vector<float>& bias = operands.bias;
  const std::vector<float>& residual = operands.residual;
  std::vector<float> packed(static_cast<size_t>(cpu::nn::packed_a_floats(isa, c.m, c.k)));
  cpu::nn::pack_a(isa, a.data(), c.m, c.k, c.k, packed.data());
  const cpu::nn::PackedA pa{packed.data(), c.m, c.k};
  const cpu::nn::GemmEpilogue epilogue{c.bias ? bias.data() : nullptr,
                                       c.residual ? residual.data() : nullptr, c.activation};
  std::vector<float> fused(static_cast<size_t>(c.m * ldc), -3.0f);
  cpu::nn::sgemm_packed_a(isa, pa, 0, c.m, c.n, b.data(), c.n, fused.data(), ldc, &epilogue);
  // The passes run over dense planes: the product n wide, then copied into C's rows.
  std::vector<float> plain(static_cast<size_t>(c.m * c.n));
  cpu::nn::sgemm_packed_a(isa, pa, 0, c.m, c.n, b.data(), c.n, plain.data(), c.n);
  std::vector<float> dense_residual(static_cast<size_t>(c.m * c.n));
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      dense_residual[static_cast<size_t>(i * c.n + j)] = residual[static_cast<size_t>(i * ldc + j)];
    }
  }
  cpu::nn::add_bias_activation(plain.data(), c.bias ? bias.data() : nullptr, 1, c.m, c.n,
                               c.activation, threads, c.residual ? dense_residual.data() : nullptr);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = fused[static_cast<size_t>(i * ldc + j)];
      if (j >= c.n) {
        REQUIRE(got == -3.0f);
        continue;
      }
      const float want = plain[static_cast<size_t>(i * c.n + j)];
      if (!same_bits(got, want)) {
        FAIL_CHECK("row ", i, " column ", j, ": epilogue gave ", got, ", the passes ", want);
        return;
      }
    }
  }
}

TEST_CASE("the GEMM's in-register epilogue gives the bits of the passes it replaces") {
  cpu::ThreadPool threads(1);
  const std::vector<Activation> activations = {
      Activation{ActivationKind::kNone, 0.0f, 0.0f},
      Activation{ActivationKind::kRelu, 0.0f, 0.0f},
      Activation{ActivationKind::kLeakyRelu, 0.1f, 0.0f},
      Activation{ActivationKind::kClip, -0.5f, 0.25f},
      Activation{ActivationKind::kClip, 0.0f, 6.0f},
      Activation{ActivationKind::kClip, 1.0f, -1.0f},  // min > max: every element is max
  };
  int cases = 0;
  for (const SgemmIsa isa : runnable_sgemm_isas()) {
    CAPTURE(cpu::nn::sgemm_isa_name(isa));
    for (const int64_t m : {1, 7, 12, 25}) {
      for (const int64_t n : {1, 9, 16, 33, 70}) {
        for (const int64_t k : {0, 5, 200}) {
          for (const Activation& activation : activations) {
            for (const int flags : {0, 1, 2, 3}) {
              const Case c{m, n, k, (flags & 1) != 0, (flags & 2) != 0, activation};
              CAPTURE(m);
              CAPTURE(n);
              CAPTURE(k);
              CAPTURE(flags);
              CAPTURE(static_cast<int>(activation.kind));
              check_case(isa, c, threads);
              ++cases;
            }
          }
        }
      }
    }
  }
  MESSAGE(cases, " products compared");
}

TEST_CASE("the epilogue supports the activations it computes in registers, and no others") {
  using cpu::nn::gemm_epilogue_supports;
  CHECK(gemm_epilogue_supports(Activation{ActivationKind::kNone, 0, 0}));
  CHECK(gemm_epilogue_supports(Activation{ActivationKind::kRelu, 0, 0}));
  CHECK(gemm_epilogue_supports(Activation{ActivationKind::kLeakyRelu, 0.2f, 0}));
  CHECK(gemm_epilogue_supports(Activation{ActivationKind::kClip, 0, 6}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(gemm_epilogue_supports(Activation{ActivationKind::kClip, nan, 6}));
  CHECK_FALSE(gemm_epilogue_supports(Activation{ActivationKind::kClip, 0, nan}));
  CHECK_FALSE(gemm_epilogue_supports(Activation{ActivationKind::kSigmoid, 0, 0}));
  CHECK_FALSE(gemm_epilogue_supports(Activation{ActivationKind::kHardSwish, 0, 0}));
  CHECK_FALSE(gemm_epilogue_supports(Activation{ActivationKind::kHardSigmoid, 0.2f, 0.5f}));
}

}  // namespace
}  // namespace onepool::testing
