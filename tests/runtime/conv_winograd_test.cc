// The Winograd F(2x2, 3x3) and F(4x4, 3x3) Conv paths (runtime/cpu/kernels/conv_winograd.h):
// which convolutions take them, that they are the convolution (against a float64 direct loop),
// that their bits depend on nothing but the inputs (threads, blocks, instruction set), and that
// NaN, Inf and huge values reach exactly the outputs the ONNX definition says.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/float_reference_check.h"
#include "runtime/kernel_test_util.h"

namespace onepool {
namespace {

using testing::check_matches;
using testing::f32;
using testing::int_attr;
using testing::ints_attr;
using testing::OutputSpec;
using testing::random_values;
using testing::string_attr;

struct Conv3x3 {
  int64_t batch = 1;
  int64_t in_channels = 8;
  int64_t out_channels = 24;
  int64_t height = 20;
  int64_t width = 36;
  std::vector<int64_t> pads{1, 1, 1, 1};  // top, left, bottom, right
  int64_t dilation = 1;
  bool bias = true;
  std::string activation;  // fused, "" for none
  bool constant_weights = true;

  int64_t out_height() const { return height + pads[0] + pads[2] - 2 * dilation; }
  int64_t out_width() const { return width + pads[1] + pads[3] - 2 * dilation; }
  Shape x_shape() const { return Shape{batch, in_channels, height, width}; }
  Shape w_shape() const { return Shape{out_channels, in_channels, 3, 3}; }
  Shape y_shape() const { return Shape{batch, out_channels, out_height(), out_width()}; }
};

struct ConvRun {
  std::vector<float> y;
  std::string implementation;
  size_t workspace_bytes = 0;            // the least the kernel runs in
  size_t workspace_preferred_bytes = 0;  // what it runs fastest in
};

AttributeMap attributes_of(const Conv3x3& c) {
  AttributeMap attributes;
  attributes.set("pads", ints_attr(c.pads));
  attributes.set("dilations", ints_attr({c.dilation, c.dilation}));
  if (!c.activation.empty()) attributes.set("onepool_activation", string_attr(c.activation));
  if (c.activation == "Clip") {
    attributes.set("onepool_alpha", testing::float_attr(-0.25f));
    attributes.set("onepool_beta", testing::float_attr(0.5f));
  }
  return attributes;
}

// Prepares the Conv for `threads` threads limited to `isa` and runs it once, in the least
// workspace the kernel asks for or in the one it prefers.
ConvRun run_conv(const Conv3x3& c, const std::vector<float>& x, const std::vector<float>& w,
                 const std::vector<float>& b, int threads, CpuIsa isa = CpuIsa::kAuto,
                 bool preferred_workspace = false) {
  std::vector<std::optional<testing::TestInput>> inputs{f32(c.x_shape(), x),
                                                        f32(c.w_shape(), w, c.constant_weights)};
  if (c.bias) inputs.push_back(f32(Shape{c.out_channels}, b, true));
  const Graph graph = testing::single_node_graph(
      "Conv", inputs, {OutputSpec{DType::kFloat32, c.y_shape()}}, attributes_of(c));
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find("Conv")(cpu::NodeContext(graph, graph.nodes[0], threads, isa));
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  std::vector<TensorView> views;
  for (const auto& input : inputs) {
    views.push_back(TensorView{const_cast<std::byte*>(input->tensor.data.data()), DType::kFloat32,
                               input->tensor.shape, Device{}});
  }
  ConvRun run{std::vector<float>(static_cast<size_t>(c.y_shape().element_count()), -7.0f),
              prepared->implementation, prepared->workspace_bytes,
              std::max(prepared->workspace_bytes, prepared->workspace_preferred_bytes)};
  const std::vector<TensorView> outputs{
      TensorView{run.y.data(), DType::kFloat32, c.y_shape(), Device{}}};
  const Status status = testing::run_prepared_in(
      *prepared, views, outputs, threads,
      preferred_workspace ? run.workspace_preferred_bytes : run.workspace_bytes);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return run;
}

// The convolution in float64, in the ONNX definition's terms: a NaN or Inf input reaches the
// outputs whose window holds it, a NaN weight every output of its channel (padding included).
std::vector<float> direct_conv(const Conv3x3& c, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& b) {
  std::vector<float> y(static_cast<size_t>(c.y_shape().element_count()));
  const int64_t oh = c.out_height(), ow = c.out_width();
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t m = 0; m < c.out_channels; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = c.bias ? b[static_cast<size_t>(m)] : 0.0;
          for (int64_t ci = 0; ci < c.in_channels; ++ci)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = oy - c.pads[0] + ky * c.dilation;
                const int64_t ix = ox - c.pads[1] + kx * c.dilation;
                const bool inside = iy >= 0 && iy < c.height && ix >= 0 && ix < c.width;
                const double input =  // padding is zeros, multiplied like any input
                    inside ? x[static_cast<size_t>(
                                 ((n * c.in_channels + ci) * c.height + iy) * c.width + ix)]
                           : 0.0;
                sum += input * w[static_cast<size_t>(((m * c.in_channels + ci) * 3 + ky) * 3 + kx)];
              }
          y[static_cast<size_t>(((n * c.out_channels + m) * oh + oy) * ow + ox)] =
              testing::activate_named(c.activation, static_cast<float>(sum));
        }
  return y;
}

struct ConvData {
  std::vector<float> x, w, b;
};

ConvData data_for(const Conv3x3& c, uint32_t seed) {
  return ConvData{random_values(c.x_shape().element_count(), seed),
                  random_values(c.w_shape().element_count(), seed + 1),
                  random_values(c.out_channels, seed + 2)};
}

bool is_winograd(const ConvRun& run) { return run.implementation.rfind("winograd", 0) == 0; }
bool is_winograd4(const ConvRun& run) {
  return run.implementation.rfind("winograd f(4x4,3x3)", 0) == 0;
}

// F(4x4, 3x3)'s transforms multiply by up to 5 and 8 before the products (F(2x2, 3x3)'s only add),
// so it rounds more: on these 8- and 13-channel sums within 3.4e-5 relative, against 2e-5.
float tolerance_for(const ConvRun& run) { return is_winograd4(run) ? 6e-5f : 2e-5f; }

// Odd and even maps (partial tiles on the right and bottom edge), rows of more than 16 tiles
// (several runs a tile row, the last one partial), pads 0, 1 and asymmetric, channel counts that
// fill no whole GEMM panel, batch 2, no bias, Relu and Clip epilogues: all against float64. The
// maps 36 and 70 wide run F(4x4, 3x3), 13 and 16 wide F(2x2, 3x3).
TEST_CASE("Winograd Conv matches a float64 direct convolution") {
  uint32_t seed = 40;
  int tile4_runs = 0;
  for (const auto& size : {std::pair<int64_t, int64_t>{20, 36}, {15, 13}, {9, 70}, {16, 16}}) {
    for (const std::vector<int64_t>& pads :
         {std::vector<int64_t>{1, 1, 1, 1}, {0, 0, 0, 0}, {2, 0, 1, 2}}) {
      Conv3x3 c;
      c.height = size.first;
      c.width = size.second;
      c.pads = pads;
      c.in_channels = seed % 2 == 0 ? 8 : 13;
      c.out_channels = seed % 3 == 0 ? 9 : 24;
      c.batch = seed % 4 == 0 ? 2 : 1;
      c.bias = seed % 5 != 0;
      c.activation = seed % 3 == 1 ? "Relu" : (seed % 3 == 2 ? "Clip" : "");
      CAPTURE(c.height);
      CAPTURE(c.width);
      CAPTURE(pads[0]);
      CAPTURE(pads[3]);
      const ConvData data = data_for(c, seed++);
      const ConvRun run = run_conv(c, data.x, data.w, data.b, 2);
      CAPTURE(run.implementation);
      CHECK(is_winograd(run));
      CHECK(is_winograd4(run) == (c.width > 20));
      tile4_runs += is_winograd4(run) ? 1 : 0;
      check_matches(run.y, direct_conv(c, data.x, data.w, data.b), tolerance_for(run));
    }
  }
  CHECK(tile4_runs == 6);
}

// Which convolutions take Winograd: 3x3 stride 1 with constant weights on a map of at least 32
// 2x2 tiles, or of 16 (7x7, 8x8) with at least 256 input channels; weights as an input, stride 2,
// a 7x7 map of fewer channels, a 5x5 map (9 tiles) or a weight that is NaN keep the implicit GEMM
// or im2col. F(4x4, 3x3) where a row holds at least 6 of its tiles (20x36: 9) and
// its products come to at most 4/5 of F(2x2, 3x3)'s: 40x22 takes it (6 a row; 36 x 60 product
// columns against 16 x 220, 0.61), 14x14 (4 a row) and 5x22 (36 x 12 against 16 x 33, 0.82) keep
// F(2x2, 3x3).
TEST_CASE("Winograd Conv is chosen only where it pays and where it is exact enough") {
  Conv3x3 c;
  const ConvData data = data_for(c, 3);
  CHECK(run_conv(c, data.x, data.w, data.b, 1).implementation.find("winograd f(4x4,3x3)") == 0);
  struct MapCase {
    int64_t height, width;
    bool tile4;
  };
  for (const MapCase& map_case : {MapCase{14, 14, false}, {40, 22, true}, {5, 22, false}}) {
    CAPTURE(map_case.height);
    CAPTURE(map_case.width);
    Conv3x3 map = c;
    map.height = map_case.height;
    map.width = map_case.width;
    const ConvData map_data = data_for(map, 5);
    const ConvRun run = run_conv(map, map_data.x, map_data.w, map_data.b, 1);
    CHECK(is_winograd(run));
    CHECK(is_winograd4(run) == map_case.tile4);
  }
  Conv3x3 input_weights = c;
  input_weights.constant_weights = false;
  CHECK_FALSE(is_winograd(run_conv(input_weights, data.x, data.w, data.b, 1)));
  Conv3x3 small = c;
  small.height = small.width = 7;
  const ConvData small_data = data_for(small, 4);
  CHECK_FALSE(is_winograd(run_conv(small, small_data.x, small_data.w, small_data.b, 1)));
  for (const int64_t side : {5, 7, 8}) {
    for (const int64_t channels : {128, 256}) {
      CAPTURE(side);
      CAPTURE(channels);
      Conv3x3 deep = c;
      deep.height = deep.width = side;
      deep.in_channels = channels;
      const ConvData deep_data = data_for(deep, 6);
      const ConvRun run = run_conv(deep, deep_data.x, deep_data.w, deep_data.b, 2);
      CHECK(is_winograd(run) == (side >= 7 && channels >= 256));
      check_matches(run.y, direct_conv(deep, deep_data.x, deep_data.w, deep_data.b),
                    tolerance_for(run));
    }
  }
  ConvData nan_weight = data;
  nan_weight.w[5] = std::numeric_limits<float>::quiet_NaN();
  const ConvRun kept = run_conv(c, nan_weight.x, nan_weight.w, nan_weight.b, 1);
  CHECK_FALSE(is_winograd(kept));
  check_matches(kept.y, direct_conv(c, nan_weight.x, nan_weight.w, nan_weight.b), 1e-4f);
}

// The bits depend on the inputs alone: 1, 2 and 3 threads on a map of one block (each phase
// split over the threads) and of several (each thread its own range of tiles), and the AVX2 or
// portable transforms against the AVX-512 ones.
TEST_CASE("Winograd Conv gives the same bits on any number of threads and instruction set") {
  // F(2x2, 3x3) in one block and in several (12 wide: 3 tiles of 4x4 a row), F(4x4, 3x3) in one
  // and in several.
  for (const std::pair<int64_t, int64_t>& map :
       {std::pair<int64_t, int64_t>{12, 12}, {600, 12}, {30, 30}, {90, 90}}) {
    CAPTURE(map.first);
    CAPTURE(map.second);
    Conv3x3 c;
    c.height = map.first;
    c.width = map.second;
    const int64_t width = c.width;
    c.activation = "Relu";
    const ConvData data = data_for(c, 7);
    const ConvRun one = run_conv(c, data.x, data.w, data.b, 1);
    REQUIRE(is_winograd(one));
    CHECK(is_winograd4(one) == (width > 12));
    CHECK(run_conv(c, data.x, data.w, data.b, 2, CpuIsa::kAuto, true).y == one.y);
    CHECK(run_conv(c, data.x, data.w, data.b, 2).y == one.y);
    CHECK(run_conv(c, data.x, data.w, data.b, 3).y == one.y);
    const CpuIsa detected = cpu::detected_cpu_isa();
    for (const CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kPortable}) {
      if (isa == CpuIsa::kAvx2 && detected == CpuIsa::kPortable) continue;
      CAPTURE(cpu_isa_name(isa));
      const ConvRun limited = run_conv(c, data.x, data.w, data.b, 2, isa);
      CHECK(is_winograd(limited));
      CHECK(limited.y == one.y);
    }
  }
}

// One thread, at least 256 input channels and a map whose blocks fill the column tiles poorly
// (14x14: 49 tiles of 2x2 in 64 lanes): the products run on the channel vectors on AVX-512 and
// give the column tiles' bits (two threads; AVX2) and the convolution (float64), with 264 output
// channels (a last panel of 8), a Relu and a bias. 96 input channels keep the column tiles.
TEST_CASE("Winograd Conv on the channel vectors gives the column tiles' bits") {
  Conv3x3 c;
  c.in_channels = 256;
  c.out_channels = 264;
  c.height = 14;
  c.width = 14;
  c.activation = "Relu";
  const ConvData data = data_for(c, 17);
  const ConvRun one = run_conv(c, data.x, data.w, data.b, 1);
  CAPTURE(one.implementation);
  REQUIRE(is_winograd(one));
  const bool avx512 = cpu::detected_cpu_isa() == CpuIsa::kAvx512;
  CHECK((one.implementation == "winograd f(2x2,3x3) channels avx512") == avx512);
  const ConvRun two = run_conv(c, data.x, data.w, data.b, 2);
  CHECK(two.implementation.find("gemm") != std::string::npos);
  CHECK(two.y == one.y);
  if (avx512) CHECK(run_conv(c, data.x, data.w, data.b, 1, CpuIsa::kAvx2).y == one.y);
  // Sums of 256 x 9 terms round more than the 8- and 13-channel ones above.
  check_matches(one.y, direct_conv(c, data.x, data.w, data.b), 1e-4f);
  Conv3x3 narrow = c;
  narrow.in_channels = 96;
  const ConvData narrow_data = data_for(narrow, 18);
  CHECK(run_conv(narrow, narrow_data.x, narrow_data.w, narrow_data.b, 1)
            .implementation.find("gemm") != std::string::npos);
}

// A convolution's workspace does not depend on which tile its map takes: F(4x4, 3x3) asks for
// exactly what F(2x2, 3x3) asks for with the same channels (a DynamicSession plans a shape range's
// workspaces at its top, where the map may take F(4x4, 3x3), and runs smaller shapes on
// F(2x2, 3x3) in them). With 64 -> 160 channels F(4x4, 3x3) prefers more (blocks of 32 tiles,
// 36 x 224 floats each, against F(2x2, 3x3)'s 32 of 16 x 224): the same bits in either, on 1 and
// 2 threads.
TEST_CASE("Winograd F(4x4, 3x3) asks for F(2x2, 3x3)'s workspace and prefers more") {
  Conv3x3 c;
  c.in_channels = 64;
  c.out_channels = 160;
  Conv3x3 small = c;
  small.height = small.width = 14;
  c.height = c.width = 30;
  const ConvData data = data_for(c, 11);
  const ConvData small_data = data_for(small, 12);
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    const ConvRun tile2 = run_conv(small, small_data.x, small_data.w, small_data.b, threads);
    const ConvRun least = run_conv(c, data.x, data.w, data.b, threads);
    REQUIRE(is_winograd(tile2));
    REQUIRE(is_winograd4(least));
    CHECK_FALSE(is_winograd4(tile2));
    CHECK(least.workspace_bytes == tile2.workspace_bytes);
    CHECK(tile2.workspace_preferred_bytes == tile2.workspace_bytes);
    CHECK(least.workspace_preferred_bytes > 2 * least.workspace_bytes);
    const ConvRun preferred = run_conv(c, data.x, data.w, data.b, threads, CpuIsa::kAuto, true);
    CHECK(preferred.y == least.y);
    // Sums of 576 products of values in [-1, 1): F(4x4, 3x3) within 2.1e-4 of float64 here,
    // scaled by 1 + |y| (the sums cancel: |y| is often far below the terms' sizes).
    check_matches(least.y, direct_conv(c, data.x, data.w, data.b), 4e-4f);
  }
}

// A dilated 3x3 conv runs as d x d undilated ones on strided sub-grids (phases): dilation 2 and
// 3 (phases of different sizes), pads equal to the dilation and asymmetric, on 1 and 2 threads
// (whole phases per thread) with the same bits, against float64; and a NaN input still reaches
// only the windows that hold it.
TEST_CASE("Winograd Conv runs dilated convolutions phase by phase") {
  uint32_t seed = 70;
  for (const int64_t dilation : {2, 3}) {
    for (const std::vector<int64_t>& pads :
         {std::vector<int64_t>{dilation, dilation, dilation, dilation}, {0, 3, 1, 0}}) {
      Conv3x3 c;  // dilation 2: phases 20 and 30 wide, F(4x4, 3x3); 3: 14 and 20, F(2x2, 3x3)
      c.height = 33;
      c.width = dilation == 2 ? 60 : 40;
      c.dilation = dilation;
      c.pads = pads;
      c.activation = "Relu";
      CAPTURE(dilation);
      CAPTURE(pads[1]);
      ConvData data = data_for(c, seed++);
      const ConvRun one = run_conv(c, data.x, data.w, data.b, 1);
      CHECK(is_winograd(one));
      CHECK(is_winograd4(one) == (dilation == 2));
      check_matches(one.y, direct_conv(c, data.x, data.w, data.b), tolerance_for(one));
      CHECK(run_conv(c, data.x, data.w, data.b, 2).y == one.y);
      data.x[static_cast<size_t>((2 * c.height + 7) * c.width + 9)] =
          std::numeric_limits<float>::quiet_NaN();
      check_matches(run_conv(c, data.x, data.w, data.b, 2).y,
                    direct_conv(c, data.x, data.w, data.b), 1e-4f);
    }
  }
}

// A NaN, an Inf and a value above 2^40 in the input: the transforms would spread each over its
// whole tile, so the output is computed directly and only the windows holding them change; on
// F(4x4, 3x3) (22 wide) and F(2x2, 3x3) (14 wide), at a plane's edge too (the last columns that
// the AVX-512 loads reach past the 64 they permute).
TEST_CASE("Winograd Conv keeps NaN, Inf and huge inputs to their windows") {
  for (const int64_t width : {22, 14, 70})
    for (const int64_t column : {int64_t{6}, width - 1}) {
      CAPTURE(width);
      CAPTURE(column);
      Conv3x3 c;
      c.height = 18;
      c.width = width;
      for (const float special : {std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity(), 3e12f}) {
        CAPTURE(special);
        ConvData data = data_for(c, 9);
        data.x[static_cast<size_t>((3 * c.height + 5) * c.width + column)] = special;
        for (const int threads : {1, 2}) {
          const ConvRun run = run_conv(c, data.x, data.w, data.b, threads);
          CHECK(is_winograd(run));
          CHECK(is_winograd4(run) == (width != 14));
          check_matches(run.y, direct_conv(c, data.x, data.w, data.b), 1e-4f);
        }
      }
    }
}

}  // namespace
}  // namespace onepool
