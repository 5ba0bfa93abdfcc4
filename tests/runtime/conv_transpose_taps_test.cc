// The ConvTranspose path for kernel == stride (runtime/cpu/kernels/conv_transpose_taps.h): which
// transposed convolutions take it, that it is the transposed convolution (against float64), that
// its bits depend on nothing but the inputs (threads, instruction set) and that NaN and Inf reach
// exactly the outputs the ONNX definition says.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/cpu/cpu_isa.h"
#include "runtime/cpu/kernels/sgemm_packed.h"
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

// X [N, C, H, W] (H == 1 and one_d: a 1-D op on [N, C, W]), W [C, M, kH, kW], stride == kernel.
struct TapsCase {
  int64_t batch = 1;
  int64_t in_channels = 8;
  int64_t out_channels = 6;
  int64_t height = 5;
  int64_t width = 7;
  int64_t kernel_h = 2;
  int64_t kernel_w = 2;
  bool one_d = false;
  bool bias = true;
  std::string activation;  // fused, "" for none
  bool constant_weights = true;
  std::vector<int64_t> pads;            // none when empty
  std::vector<int64_t> output_padding;  // none when empty
  int64_t group = 1;

  int64_t out_height() const { return height * kernel_h; }
  int64_t out_width() const { return width * kernel_w; }
  Shape x_shape() const {
    return one_d ? Shape{batch, in_channels, width} : Shape{batch, in_channels, height, width};
  }
  Shape w_shape() const {
    const int64_t m = out_channels / group;
    return one_d ? Shape{in_channels, m, kernel_w} : Shape{in_channels, m, kernel_h, kernel_w};
  }
  Shape y_shape() const {
    int64_t extra = output_padding.empty() ? 0 : output_padding.back();
    return one_d ? Shape{batch, out_channels, out_width() + extra}
                 : Shape{batch, out_channels, out_height() + extra, out_width() + extra};
  }
};

AttributeMap attributes_of(const TapsCase& c) {
  AttributeMap attributes;
  if (c.one_d) {
    attributes.set("strides", ints_attr({c.kernel_w}));
  } else {
    attributes.set("strides", ints_attr({c.kernel_h, c.kernel_w}));
  }
  if (!c.pads.empty()) attributes.set("pads", ints_attr(c.pads));
  if (!c.output_padding.empty()) attributes.set("output_padding", ints_attr(c.output_padding));
  if (c.group != 1) attributes.set("group", int_attr(c.group));
  if (!c.activation.empty()) attributes.set("onepool_activation", string_attr(c.activation));
  if (c.activation == "Clip") {
    attributes.set("onepool_alpha", testing::float_attr(-0.25f));
    attributes.set("onepool_beta", testing::float_attr(0.5f));
  }
  return attributes;
}

struct TapsData {
  std::vector<float> x, w, b;
};

TapsData data_for(const TapsCase& c, uint32_t seed) {
  return TapsData{random_values(c.x_shape().element_count(), seed),
                  random_values(c.w_shape().element_count(), seed + 1),
                  random_values(c.out_channels, seed + 2)};
}

struct TapsRun {
  std::vector<float> y;
  std::string implementation;
};

// Prepares the ConvTranspose for `threads` threads limited to `isa` and runs it once in the
// workspace it asks for.
TapsRun run_transpose(const TapsCase& c, const TapsData& data, int threads,
                      CpuIsa isa = CpuIsa::kAuto) {
  std::vector<std::optional<testing::TestInput>> inputs{
      f32(c.x_shape(), data.x), f32(c.w_shape(), data.w, c.constant_weights)};
  if (c.bias) inputs.push_back(f32(Shape{c.out_channels}, data.b, true));
  const Graph graph = testing::single_node_graph(
      "ConvTranspose", inputs, {OutputSpec{DType::kFloat32, c.y_shape()}}, attributes_of(c));
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared =
      registry.find("ConvTranspose")(cpu::NodeContext(graph, graph.nodes[0], threads, isa));
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  std::vector<TensorView> views;
  for (const auto& input : inputs) {
    views.push_back(TensorView{const_cast<std::byte*>(input->tensor.data.data()), DType::kFloat32,
                               input->tensor.shape, Device{}});
  }
  TapsRun run{std::vector<float>(static_cast<size_t>(c.y_shape().element_count()), -7.0f),
              prepared->implementation};
  const std::vector<TensorView> outputs{
      TensorView{run.y.data(), DType::kFloat32, c.y_shape(), Device{}}};
  const Status status =
      testing::run_prepared_in(*prepared, views, outputs, threads, prepared->workspace_bytes);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return run;
}

// The definition in float64: Y[n, m, ih * kH + kh, iw * kW + kw] = b[m] + sum_c X[n, c, ih, iw] *
// W[c, m, kh, kw]. A NaN or Inf input reaches the kH x kW outputs of its position in every
// channel, a NaN weight the outputs of its tap in its channel.
std::vector<float> direct_transpose(const TapsCase& c, const TapsData& data) {
  std::vector<float> y(static_cast<size_t>(c.y_shape().element_count()));
  const int64_t oh = c.out_height(), ow = c.out_width();
  const int64_t kh_count = c.kernel_h, kw_count = c.kernel_w;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t m = 0; m < c.out_channels; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t iy = oy / kh_count, ky = oy % kh_count;
          const int64_t ix = ox / kw_count, kx = ox % kw_count;
          double sum = 0.0;
          for (int64_t ci = 0; ci < c.in_channels; ++ci) {
            const double input = data.x[static_cast<size_t>(
                ((n * c.in_channels + ci) * c.height + iy) * c.width + ix)];
            sum += input * data.w[static_cast<size_t>(
                               ((ci * c.out_channels + m) * kh_count + ky) * kw_count + kx)];
          }
          if (c.bias) sum += data.b[static_cast<size_t>(m)];
          y[static_cast<size_t>(((n * c.out_channels + m) * oh + oy) * ow + ox)] =
              testing::activate_named(c.activation, static_cast<float>(sum));
        }
  return y;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Machines without AVX2 + FMA keep sgemm+col2im (the portable micro-kernel is no faster).
bool taps_expected() { return cpu::nn::best_sgemm_isa() != cpu::nn::SgemmIsa::kPortable; }

bool is_taps(const TapsRun& run) { return run.implementation.rfind("tap gemm", 0) == 0; }

// Kernels 2x2, 3x3, 1x2 and 4x1 and 1-D; maps whose rows fill several column tiles, a partial
// last one, or one row wider than a tile (300); channel counts that fill no whole GEMM panel and
// 100 output channels (200 product rows: two chunks); batch 2; no bias, Relu and Clip.
TEST_CASE("ConvTranspose with kernel == stride matches a float64 definition") {
  struct Geometry {
    int64_t height, width, kernel_h, kernel_w;
    bool one_d;
  };
  const std::vector<Geometry> geometries{
      {5, 7, 2, 2, false}, {9, 70, 2, 2, false}, {2, 300, 2, 2, false}, {6, 11, 3, 3, false},
      {4, 9, 1, 2, false}, {5, 6, 4, 1, false},  {1, 40, 1, 2, true}};
  uint32_t seed = 70;
  for (const Geometry& geometry : geometries) {
    TapsCase c;
    c.height = geometry.height;
    c.width = geometry.width;
    c.kernel_h = geometry.kernel_h;
    c.kernel_w = geometry.kernel_w;
    c.one_d = geometry.one_d;
    c.in_channels = seed % 2 == 0 ? 8 : 13;
    c.out_channels = seed % 3 == 0 ? 100 : (seed % 3 == 1 ? 6 : 24);
    c.batch = seed % 4 == 0 ? 2 : 1;
    c.bias = seed % 5 != 0;
    c.activation = seed % 3 == 1 ? "Relu" : (seed % 3 == 2 ? "Clip" : "");
    CAPTURE(c.height);
    CAPTURE(c.width);
    CAPTURE(c.kernel_h);
    CAPTURE(c.kernel_w);
    CAPTURE(c.out_channels);
    const TapsData data = data_for(c, seed++);
    const TapsRun run = run_transpose(c, data, 2);
    CAPTURE(run.implementation);
    CHECK(is_taps(run) == taps_expected());
    check_matches(run.y, direct_transpose(c, data));
  }
}

// Which transposed convolutions take the path: kernel == stride, one group, constant weights, no
// pads, no output_padding. The others keep sgemm+col2im (and still compute the op).
TEST_CASE("ConvTranspose takes the tap GEMM only where kernel == stride and nothing else differs") {
  if (!taps_expected()) return;
  TapsCase plain;
  const TapsData data = data_for(plain, 5);
  CHECK(is_taps(run_transpose(plain, data, 2)));
  TapsCase input_weights = plain;
  input_weights.constant_weights = false;
  CHECK_FALSE(is_taps(run_transpose(input_weights, data, 2)));
  TapsCase grouped = plain;
  grouped.group = 2;
  const TapsData grouped_data = data_for(grouped, 6);
  CHECK_FALSE(is_taps(run_transpose(grouped, grouped_data, 2)));
  TapsCase padded_output = plain;
  padded_output.output_padding = {1, 1};
  CHECK_FALSE(is_taps(run_transpose(padded_output, data, 2)));
  TapsCase padded = plain;
  padded.pads = {1, 1, 1, 1};
  // pads 1 on both sides of a 2x2 stride-2 window: Y is 2 smaller on each axis.
  const Graph graph = testing::single_node_graph(
      "ConvTranspose", {f32(padded.x_shape(), data.x), f32(padded.w_shape(), data.w, true)},
      {OutputSpec{DType::kFloat32,
                  Shape{1, padded.out_channels, padded.out_height() - 2, padded.out_width() - 2}}},
      attributes_of(padded));
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find("ConvTranspose")(cpu::NodeContext(graph, graph.nodes[0], 2));
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  CHECK(prepared->implementation == "sgemm+col2im");
}

// The same bits at 1, 2 and 3 threads and on the AVX2 micro-kernel as on the widest one: the
// chains never depend on how the items are shared out.
TEST_CASE("ConvTranspose tap GEMM bits depend only on the inputs") {
  TapsCase c;
  c.in_channels = 37;
  c.out_channels = 100;
  c.height = 7;
  c.width = 45;
  c.batch = 2;
  c.activation = "Relu";
  const TapsData data = data_for(c, 90);
  const TapsRun reference = run_transpose(c, data, 1);
  check_matches(reference.y, direct_transpose(c, data));
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    CHECK(same_bits(run_transpose(c, data, threads).y, reference.y));
  }
  CHECK(same_bits(run_transpose(c, data, 2, CpuIsa::kAvx2).y, reference.y));
}

// A NaN input reaches its position's 2x2 outputs in every channel, an Inf input the same outputs
// (Inf or NaN as the float64 sum says), a NaN weight its tap's outputs in its channel; no other.
TEST_CASE("ConvTranspose tap GEMM propagates NaN and Inf as the definition does") {
  TapsCase c;
  c.in_channels = 16;
  c.out_channels = 24;
  c.height = 6;
  c.width = 33;
  TapsData data = data_for(c, 120);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  data.x[static_cast<size_t>((3 * c.height + 2) * c.width + 32)] = nan;  // a row's last column
  data.x[static_cast<size_t>((5 * c.height + 4) * c.width + 0)] = inf;
  data.w[static_cast<size_t>(((7 * c.out_channels + 11) * 2 + 1) * 2 + 0)] = nan;
  for (const char* activation : {"", "Relu"}) {
    c.activation = activation;
    CAPTURE(c.activation);
    const TapsRun run = run_transpose(c, data, 2);
    const std::vector<float> expected = direct_transpose(c, data);
    check_matches(run.y, expected);
    const auto nan_count =
        std::count_if(expected.begin(), expected.end(), [](float v) { return std::isnan(v); });
    CHECK(nan_count > 0);
  }
}

}  // namespace
}  // namespace onepool
