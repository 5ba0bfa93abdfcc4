// pointwise_layouts: how much a blocked activation layout (nChw16c, issue item "blocked
// activation layouts") would gain on the 1x1 convolutions where OnePool trails ONNX Runtime's
// NCHWc kernels, measured before building it.
//
// Per shape (M output channels, K input channels, an H x W map), four products of the same
// C[m, n] = sum over k of W[m, k] * X[k, n], alternated round by round, each after a "producer"
// pass that writes X as the node before would (so X is where a network leaves it, partly in L2):
//   packed    the runtime's column-tile GEMM (sgemm_packed.h), X and C in NCHW: what a 1x1
//             convolution with k < 256 runs;
//   channels  the runtime's channel-vector GEMM (sgemm_channels.h), X and C in NCHW: k >= 256;
//   simple    a reference micro-kernel (64 channels x 6 positions, all of k in registers) reading
//             X in NCHW: the same kernel structure as `blocked`, the same layout as `channels`;
//   blocked   the same micro-kernel reading X in nChw16c (16 channels of a position together).
// `simple` and `blocked` write C in nChw16c; all four sum every element as one fused
// multiply-add chain over k in order from 0, so their bits agree (checked before timing).
// The runtime's pick for the shape is marked with *.
// AVX-512 only (the kernels are); elsewhere it says so and exits 0.
//
//   pointwise_layouts [--rounds R]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/sgemm_channels.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace {

using onepool::cpu::nn::ChannelProduct;
using onepool::cpu::nn::ColumnRun;
using onepool::cpu::nn::SgemmIsa;

constexpr int64_t kPanel = 64;     // output channels per panel (four vectors)
constexpr int64_t kPositions = 6;  // positions per micro-tile
constexpr int64_t kBlock = 16;     // channels per block of nChw16c

struct Shape {
  const char* name;
  int64_t m, k, side;
};

// ResNet-50's and MobileNetV2's 1x1 convolutions on large maps (M a multiple of 64).
const Shape kShapes[] = {
    {"ResNet-50 layer1 conv1", 64, 256, 56},       {"ResNet-50 layer1 conv3", 256, 64, 56},
    {"ResNet-50 layer2.0 conv1", 128, 256, 56},    {"ResNet-50 layer2 conv1", 128, 512, 28},
    {"ResNet-50 layer2 conv3", 512, 128, 28},      {"ResNet-50 layer3 conv1", 256, 1024, 14},
    {"MobileNetV2 features.4.expand", 192, 32, 56}};

// Where element (channel c, position p) of an nChw16c tensor of n positions lives.
int64_t blocked_index(int64_t c, int64_t p, int64_t n) {
  return (c / kBlock) * n * kBlock + p * kBlock + c % kBlock;
}

// One micro-tile: 64 output channels (panel `w`, [k][64]) by 6 positions from `position`, all
// of k; X element (k, p) at x[k_offset(k) + p * stride]; C written in nChw16c.
template <bool kBlockedInput>
__attribute__((target("avx512f"))) void tile(const float* x, const float* w, int64_t k, int64_t n,
                                             int64_t position, float* c) {
  __m512 acc[kPositions][4];
  for (auto& row : acc) {
    for (auto& v : row) v = _mm512_setzero_ps();
  }
  for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
    const float* xs = kBlockedInput ? x + blocked_index(k0, position, n) : x + k0 * n + position;
    const float* ws = w + k0 * kPanel;
    for (int q = 0; q < kBlock; ++q) {
      __m512 weights[4];
      for (int v = 0; v < 4; ++v) weights[v] = _mm512_loadu_ps(ws + q * kPanel + 16 * v);
      for (int j = 0; j < kPositions; ++j) {
        const float value = kBlockedInput ? xs[j * kBlock + q] : xs[q * n + j];
        const __m512 b = _mm512_set1_ps(value);
        for (int v = 0; v < 4; ++v) acc[j][v] = _mm512_fmadd_ps(weights[v], b, acc[j][v]);
      }
    }
  }
  for (int j = 0; j < kPositions; ++j) {
    for (int v = 0; v < 4; ++v) {
      _mm512_storeu_ps(c + blocked_index(16 * v, position + j, n), acc[j][v]);
    }
  }
}

// Every panel and whole tile of positions (n a multiple of 6 here).
template <bool kBlockedInput>
void reference_product(const float* x, const float* packed, int64_t m, int64_t k, int64_t n,
                       float* c) {
  for (int64_t panel = 0; panel < m / kPanel; ++panel) {
    for (int64_t p = 0; p + kPositions <= n; p += kPositions) {
      tile<kBlockedInput>(x, packed + panel * k * kPanel, k, n, p,
                          c + blocked_index(panel * kPanel, 0, n));
    }
  }
}

struct Operands {
  int64_t m = 0, k = 0, n = 0;
  std::vector<float> packed;  // W packed by pack_a_channels (panels of [k][64])
  std::vector<float> panels;  // W packed by pack_a (the column-tile GEMM's panels)
  std::vector<float> x_nchw, x_blocked;
  std::vector<float> c_nchw, c_packed, c_simple, c_blocked;
  std::vector<int64_t> offsets;  // row k of X in NCHW
  std::vector<ColumnRun> runs;
};

Operands make_operands(const Shape& s) {
  Operands o;
  o.m = s.m;
  o.k = s.k;
  o.n = s.side * s.side / kPositions * kPositions;
  std::vector<float> weights(static_cast<size_t>(o.m * o.k));
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = static_cast<float>((i * 37) % 101) * 0.01f - 0.5f;
  o.packed.resize(static_cast<size_t>(onepool::cpu::nn::channel_packed_floats(o.m, o.k)));
  onepool::cpu::nn::pack_a_channels(weights.data(), o.m, o.k, o.k, o.packed.data());
  o.panels.resize(
      static_cast<size_t>(onepool::cpu::nn::packed_a_floats(SgemmIsa::kAvx512, o.m, o.k) + kBlock));
  onepool::cpu::nn::pack_a(SgemmIsa::kAvx512, weights.data(), o.m, o.k, o.k,
                           onepool::cpu::nn::line_aligned(o.panels.data()));
  o.x_nchw.resize(static_cast<size_t>(o.k * o.n));
  o.x_blocked.resize(o.x_nchw.size());
  o.c_nchw.resize(static_cast<size_t>(o.m * o.n));
  o.c_packed.resize(o.c_nchw.size());
  o.c_simple.resize(o.c_nchw.size());
  o.c_blocked.resize(o.c_nchw.size());
  for (int64_t p = 0; p < o.k; ++p) o.offsets.push_back(p * o.n);
  onepool::cpu::nn::append_column_runs(1, o.n, o.n, o.runs);
  return o;
}

// The producer: writes X (round-dependent values) in the layout the next product reads.
void produce(Operands& o, int round, bool blocked) {
  for (int64_t c = 0; c < o.k; ++c) {
    for (int64_t p = 0; p < o.n; ++p) {
      const float value = static_cast<float>((c * 7 + p + round) % 13) * 0.1f;
      (blocked ? o.x_blocked[static_cast<size_t>(blocked_index(c, p, o.n))]
               : o.x_nchw[static_cast<size_t>(c * o.n + p)]) = value;
    }
  }
}

void run_channels(Operands& o) {
  const ChannelProduct product{o.packed.data(),
                               o.m,
                               o.k,
                               o.x_nchw.data(),
                               o.offsets.data(),
                               o.runs.data(),
                               static_cast<int64_t>(o.runs.size()),
                               o.c_nchw.data(),
                               o.n,
                               nullptr};
  onepool::cpu::nn::sgemm_channels(product, 0, o.m / kPanel);
}

void run_packed(Operands& o) {
  const onepool::cpu::nn::PackedA a{onepool::cpu::nn::line_aligned(o.panels.data()), o.m, o.k};
  onepool::cpu::nn::sgemm_packed_a_rows(SgemmIsa::kAvx512, a, 0, o.m, o.n, o.x_nchw.data(),
                                        o.offsets.data(), o.c_packed.data(), o.n);
}

// The four products of one round's inputs agree bit for bit (C compared in nChw16c).
bool same_bits(Operands& o) {
  produce(o, 0, false);
  produce(o, 0, true);
  run_channels(o);
  run_packed(o);
  reference_product<false>(o.x_nchw.data(), o.packed.data(), o.m, o.k, o.n, o.c_simple.data());
  reference_product<true>(o.x_blocked.data(), o.packed.data(), o.m, o.k, o.n, o.c_blocked.data());
  for (int64_t c = 0; c < o.m; ++c) {
    for (int64_t p = 0; p < o.n; ++p) {
      const size_t b = static_cast<size_t>(blocked_index(c, p, o.n));
      const float channels = o.c_nchw[static_cast<size_t>(c * o.n + p)];
      if (std::memcmp(&channels, &o.c_packed[static_cast<size_t>(c * o.n + p)], sizeof(float)) !=
              0 ||
          std::memcmp(&channels, &o.c_simple[b], sizeof(float)) != 0 ||
          std::memcmp(&channels, &o.c_blocked[b], sizeof(float)) != 0) {
        return false;
      }
    }
  }
  return true;
}

struct Timing {
  std::vector<double> seconds;
  double median() {
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  }
};

// "microseconds (GFLOP/s)", with * for the runtime's pick.
std::string cell(double seconds, double flops, bool picked) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.0f (%.0f)%s", seconds * 1e6, flops / seconds * 1e-9,
                picked ? " *" : "");
  return text;
}

template <class Fn>
double timed(const Fn& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int measure(const Shape& s, int rounds) {
  Operands o = make_operands(s);
  if (!same_bits(o)) {
    std::printf("%s: the four products disagree\n", s.name);
    return 1;
  }
  Timing packed, channels, simple, blocked;
  for (int round = 1; round <= rounds; ++round) {
    produce(o, round, false);
    packed.seconds.push_back(timed([&] { run_packed(o); }));
    produce(o, round, false);
    channels.seconds.push_back(timed([&] { run_channels(o); }));
    produce(o, round, false);
    simple.seconds.push_back(timed([&] {
      reference_product<false>(o.x_nchw.data(), o.packed.data(), o.m, o.k, o.n, o.c_simple.data());
    }));
    produce(o, round, true);
    blocked.seconds.push_back(timed([&] {
      reference_product<true>(o.x_blocked.data(), o.packed.data(), o.m, o.k, o.n,
                              o.c_blocked.data());
    }));
  }
  const double flops = 2.0 * static_cast<double>(o.m * o.k * o.n);
  const bool channels_pick = o.k >= 256;  // implicit_channels_fit on these flat 1x1 maps
  const double picked = channels_pick ? channels.median() : packed.median();
  std::printf("| %s | %lld x %lld x %lldx%lld | %s | %s | %s | %s | %.2f |\n", s.name,
              static_cast<long long>(s.m), static_cast<long long>(s.k),
              static_cast<long long>(s.side), static_cast<long long>(s.side),
              cell(packed.median(), flops, !channels_pick).c_str(),
              cell(channels.median(), flops, channels_pick).c_str(),
              cell(simple.median(), flops, false).c_str(),
              cell(blocked.median(), flops, false).c_str(), blocked.median() / picked);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 21;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--rounds") rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  if (onepool::cpu::detected_cpu_isa() != onepool::CpuIsa::kAvx512) {
    std::printf("pointwise_layouts: this CPU has no AVX-512; nothing to measure\n");
    return 0;
  }
  std::printf("one thread, median of %d alternated rounds, microseconds (GFLOP/s)\n\n", rounds);
  std::printf(
      "| convolution | M x K x map | packed, NCHW | channels, NCHW | simple, NCHW |"
      " blocked, nChw16c | blocked / * |\n|---|---|---|---|---|---|---|\n");
  int status = 0;
  for (const Shape& s : kShapes) status |= measure(s, rounds);
  return status;
}
