// Conv and ConvTranspose CPU kernels: a sweep against naive loops written here, official ONNX
// node-test cases with inline numbers, fused activations, workspace sizes and error messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cpu/kernels/sgemm_packed.h"
#include "runtime/kernel_test_util.h"

namespace onepool {
namespace {

using testing::f32;
using testing::float_attr;
using testing::int_attr;
using testing::ints_attr;
using testing::OutputSpec;
using testing::random_values;
using testing::run_single_node;
using testing::string_attr;
using testing::values_of;

Shape shape_of(int64_t a, int64_t b, const std::vector<int64_t>& spatial) {
  Shape shape{a, b};
  for (int64_t d : spatial) shape.push_back(d);
  return shape;
}

void check_close(const std::vector<float>& actual, const std::vector<float>& expected,
                 float tolerance = 1e-4f) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(actual[i] - expected[i]) <= tolerance * (1.0f + std::fabs(expected[i])));
  }
}

// --- Conv -----------------------------------------------------------------------------------

struct ConvCase {
  int64_t batch = 1, in_channels = 2, out_channels = 2, group = 1;
  std::vector<int64_t> input, kernel, stride, dilation, pads;  // pads: begins then ends
  std::string auto_pad = "NOTSET";
  bool bias = false;
  bool relu = false;
};

// Resolves auto_pad into explicit pads and returns the output spatial dims (the ONNX formulas).
std::vector<int64_t> conv_output(ConvCase& c) {
  const size_t rank = c.input.size();
  if (c.pads.empty()) c.pads.assign(2 * rank, 0);
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t extent = (c.kernel[i] - 1) * c.dilation[i] + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out[i] = (c.input[i] + c.stride[i] - 1) / c.stride[i];
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * c.stride[i] + extent - c.input[i]);
      c.pads[i] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      c.pads[rank + i] = total - c.pads[i];
      continue;
    }
    if (c.auto_pad == "VALID") c.pads[i] = c.pads[rank + i] = 0;
    out[i] = (c.input[i] + c.pads[i] + c.pads[rank + i] - extent) / c.stride[i] + 1;
  }
  return out;
}

// Direct convolution over 1-D or 2-D inputs (1-D treated as height 1).
std::vector<float> naive_conv(const ConvCase& c, const std::vector<int64_t>& out,
                              const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& b) {
  const bool two_d = c.input.size() == 2;
  const int64_t ih = two_d ? c.input[0] : 1, iw = c.input.back();
  const int64_t kh = two_d ? c.kernel[0] : 1, kw = c.kernel.back();
  const int64_t oh = two_d ? out[0] : 1, ow = out.back();
  const int64_t sh = two_d ? c.stride[0] : 1, sw = c.stride.back();
  const int64_t dh = two_d ? c.dilation[0] : 1, dw = c.dilation.back();
  const size_t rank = c.input.size();
  const int64_t ph = two_d ? c.pads[0] : 0, pw = c.pads[rank - 1];
  const int64_t cg = c.in_channels / c.group, mg = c.out_channels / c.group;
  std::vector<float> y(static_cast<size_t>(c.batch * c.out_channels * oh * ow));
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t m = 0; m < c.out_channels; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = c.bias ? b[static_cast<size_t>(m)] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t y_in = oy * sh - ph + ky * dh, x_in = ox * sw - pw + kx * dw;
                if (y_in < 0 || y_in >= ih || x_in < 0 || x_in >= iw) continue;
                const int64_t channel = m / mg * cg + ci;
                sum += x[static_cast<size_t>(((n * c.in_channels + channel) * ih + y_in) * iw +
                                             x_in)] *
                       w[static_cast<size_t>(((m * cg + ci) * kh + ky) * kw + kx)];
              }
          float value = static_cast<float>(sum);
          if (c.relu) value = std::max(value, 0.0f);
          y[static_cast<size_t>(((n * c.out_channels + m) * oh + oy) * ow + ox)] = value;
        }
  return y;
}

AttributeMap conv_attributes(const ConvCase& c) {
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr(c.kernel));
  attributes.set("strides", ints_attr(c.stride));
  attributes.set("dilations", ints_attr(c.dilation));
  attributes.set("group", int_attr(c.group));
  if (c.auto_pad == "NOTSET") {
    attributes.set("pads", ints_attr(c.pads));
  } else {
    attributes.set("auto_pad", string_attr(c.auto_pad));
  }
  if (c.relu) attributes.set("onepool_activation", string_attr("Relu"));
  return attributes;
}

void check_conv_case(ConvCase c, uint32_t seed) {
  const std::vector<int64_t> out = conv_output(c);
  const Shape x_shape = shape_of(c.batch, c.in_channels, c.input);
  const Shape w_shape = shape_of(c.out_channels, c.in_channels / c.group, c.kernel);
  const auto x = random_values(x_shape.element_count(), seed);
  const auto w = random_values(w_shape.element_count(), seed + 1);
  const auto b = random_values(c.out_channels, seed + 2);
  std::vector<std::optional<testing::TestInput>> inputs{f32(x_shape, x), f32(w_shape, w, true)};
  if (c.bias) inputs.push_back(f32(Shape{c.out_channels}, b, true));
  const Shape y_shape = shape_of(c.batch, c.out_channels, out);
  auto result =
      run_single_node("Conv", inputs, {OutputSpec{DType::kFloat32, y_shape}}, conv_attributes(c));
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  check_close(values_of<float>((*result)[0]), naive_conv(c, out, x, w, b));
}

// Every combination below is compared element by element with naive_conv (tolerance 1e-4):
// 1-D and 2-D; group 1, 2 and depthwise (group = C, multiplier 1 and 2); strides 1 and 2;
// dilations 1 and 2; symmetric and asymmetric pads; SAME_UPPER, SAME_LOWER and VALID; bias on
// and off; the fused Relu; 1x1 kernels (the no-im2col GEMM path); batch 2.
TEST_CASE("Conv matches a naive convolution over a configuration sweep") {
  uint32_t seed = 1;
  for (int64_t stride : {1, 2}) {
    for (int64_t dilation : {1, 2}) {
      for (const char* auto_pad : {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}) {
        for (int64_t group : {1, 2, 4}) {
          ConvCase c;
          c.batch = 2;
          c.in_channels = 4;
          c.out_channels = group == 4 ? 8 : 6;  // group 4 = depthwise with multiplier 2
          c.group = group;
          c.input = {7, 6};
          c.kernel = {3, 2};
          c.stride = {stride, stride};
          c.dilation = {dilation, 1};
          c.pads = {1, 0, 2, 1};
          c.auto_pad = auto_pad;
          c.bias = (seed % 2) == 0;
          c.relu = (seed % 3) == 0;
          CAPTURE(stride);
          CAPTURE(dilation);
          CAPTURE(auto_pad);
          CAPTURE(group);
          check_conv_case(c, seed++);
          ConvCase one_d = c;  // the same sweep in 1-D
          one_d.input = {9};
          one_d.kernel = {3};
          one_d.stride = {stride};
          one_d.dilation = {dilation};
          one_d.pads = {2, 1};
          check_conv_case(one_d, seed++);
        }
      }
    }
  }
}

// Depthwise with multiplier 1 (MobileNet's 3x3, strides 1 and 2, pads 1, 0 and asymmetric:
// the specialised 3x3 row path and its edges), the 1x1 GEMM path with
// and without bias, and a 1x1 kernel with stride 2 (which needs im2col), all against naive_conv.
TEST_CASE("Conv depthwise and pointwise paths match the naive convolution") {
  ConvCase depthwise;
  depthwise.in_channels = depthwise.out_channels = depthwise.group = 5;
  depthwise.input = {9, 8};
  depthwise.kernel = {3, 3};
  depthwise.dilation = {1, 1};
  depthwise.pads = {1, 1, 1, 1};
  depthwise.bias = true;
  depthwise.relu = true;
  uint32_t seed = 100;
  for (int64_t stride : {1, 2}) {
    for (const std::vector<int64_t>& pads :
         {std::vector<int64_t>{1, 1, 1, 1}, std::vector<int64_t>{0, 0, 0, 0},
          std::vector<int64_t>{2, 0, 1, 2}}) {
      depthwise.stride = {stride, stride};
      depthwise.pads = pads;
      check_conv_case(depthwise, seed++);
    }
  }
  ConvCase pointwise;
  pointwise.batch = 2;
  pointwise.in_channels = 16;
  pointwise.out_channels = 24;
  pointwise.input = {5, 7};
  pointwise.kernel = {1, 1};
  pointwise.dilation = {1, 1};
  for (int64_t stride : {1, 2}) {
    pointwise.stride = {stride, stride};
    pointwise.bias = stride == 1;
    check_conv_case(pointwise, 200 + static_cast<uint32_t>(stride));
  }
}

// A 3-D convolution: x = 1..27 as [1,1,3,3,3], a 2x2x2 kernel of ones, no pad -> each output is
// the sum of a 2x2x2 cube: y[0] = 1+2+4+5+10+11+13+14 = 60, and each step along W adds 8, along
// H adds 24, along D adds 72: [60,68,84,92,132,140,156,164].
TEST_CASE("Conv 3-D sums 2x2x2 cubes") {
  std::vector<float> x(27);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  AttributeMap attributes;
  attributes.set("kernel_shape", ints_attr({2, 2, 2}));
  auto result = run_single_node(
      "Conv",
      {f32(Shape{1, 1, 3, 3, 3}, x), f32(Shape{1, 1, 2, 2, 2}, std::vector<float>(8, 1.0f), true)},
      {OutputSpec{DType::kFloat32, Shape{1, 1, 2, 2, 2}}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  check_close(values_of<float>((*result)[0]), {60, 68, 84, 92, 132, 140, 156, 164});
}

// Official ONNX node tests (x = 0..34 as [1,1,7,5] or 0..24 as [1,1,5,5], W = ones 3x3):
//   test_conv_with_strides_padding: pads 1, strides 2 -> [1,1,4,3]
//   test_conv_with_strides_and_asymmetric_padding: pads [1,0,1,0], strides 2 -> [1,1,4,2]
//   test_conv_with_autopad_same: SAME_LOWER, strides 2, 5x5 -> [1,1,3,3]
TEST_CASE("Conv reproduces the official ONNX node tests") {
  std::vector<float> x35(35), x25(25);
  for (size_t i = 0; i < 35; ++i) x35[i] = static_cast<float>(i);
  for (size_t i = 0; i < 25; ++i) x25[i] = static_cast<float>(i);
  const auto w = f32(Shape{1, 1, 3, 3}, std::vector<float>(9, 1.0f), true);
  AttributeMap base;
  base.set("kernel_shape", ints_attr({3, 3}));
  base.set("strides", ints_attr({2, 2}));

  AttributeMap padded = base;
  padded.set("pads", ints_attr({1, 1, 1, 1}));
  auto y1 = run_single_node("Conv", {f32(Shape{1, 1, 7, 5}, x35), w},
                            {OutputSpec{DType::kFloat32, Shape{1, 1, 4, 3}}}, padded);
  REQUIRE_MESSAGE(y1.has_value(), y1.status().to_string());
  check_close(values_of<float>((*y1)[0]), {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124});

  AttributeMap asymmetric = base;
  asymmetric.set("pads", ints_attr({1, 0, 1, 0}));
  auto y2 = run_single_node("Conv", {f32(Shape{1, 1, 7, 5}, x35), w},
                            {OutputSpec{DType::kFloat32, Shape{1, 1, 4, 2}}}, asymmetric);
  REQUIRE_MESSAGE(y2.has_value(), y2.status().to_string());
  check_close(values_of<float>((*y2)[0]), {21, 33, 99, 117, 189, 207, 171, 183});

  AttributeMap same_lower = base;
  same_lower.set("auto_pad", string_attr("SAME_LOWER"));
  auto y3 = run_single_node("Conv", {f32(Shape{1, 1, 5, 5}, x25), w},
                            {OutputSpec{DType::kFloat32, Shape{1, 1, 3, 3}}}, same_lower);
  REQUIRE_MESSAGE(y3.has_value(), y3.status().to_string());
  check_close(values_of<float>((*y3)[0]), {12, 27, 24, 63, 108, 81, 72, 117, 84});
}

// Fused Clip(0, 6) via onepool_activation = Clip, alpha = 0, beta = 6 on a 1x1 conv with weight
// 2 and bias -1: x = [-1, 0.5, 2, 5] -> 2x - 1 = [-3, 0, 3, 9] -> [0, 0, 3, 6].
TEST_CASE("Conv applies a fused Clip epilogue after the bias") {
  AttributeMap attributes;
  attributes.set("onepool_activation", string_attr("Clip"));
  attributes.set("onepool_alpha", float_attr(0.0f));
  attributes.set("onepool_beta", float_attr(6.0f));
  auto y = run_single_node("Conv",
                           {f32(Shape{1, 1, 4}, {-1.0f, 0.5f, 2.0f, 5.0f}),
                            f32(Shape{1, 1, 1}, {2.0f}, true), f32(Shape{1}, {-1.0f}, true)},
                           {OutputSpec{DType::kFloat32, Shape{1, 1, 4}}}, attributes);
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  check_close(values_of<float>((*y)[0]), {0, 0, 3, 6});
}

// Prepares a Conv node (without running it) to read its workspace size.
Expected<cpu::PreparedKernel> prepare_conv(const Shape& x, const Shape& w, const Shape& y,
                                           const AttributeMap& attributes, int threads = 1) {
  Graph graph;
  Node node;
  node.name = "conv";
  node.op_type = "Conv";
  node.attributes = attributes;
  for (const Shape& shape : {x, w}) {
    Value value;
    value.name = "in" + std::to_string(graph.values.size());
    value.dtype = DType::kFloat32;
    value.shape = shape;
    value.kind = ValueKind::kGraphInput;
    node.inputs.push_back(graph.add_value(value));
  }
  Value out;
  out.name = "y";
  out.dtype = DType::kFloat32;
  out.shape = y;
  node.outputs.push_back(graph.add_value(out));
  graph.nodes.push_back(node);
  graph.rebuild_edges();
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  return registry.find("Conv")(cpu::NodeContext(graph, graph.nodes[0], threads));
}

// Bytes of one group's weights packed for this CPU's GEMM micro-kernel (the workspace's start).
size_t packed_weight_bytes(int64_t out_channels, int64_t depth) {
  const cpu::nn::SgemmIsa isa = cpu::nn::best_sgemm_isa();
  const int64_t floats = cpu::nn::packed_a_floats(isa, out_channels, depth);
  return static_cast<size_t>((floats * 4 + 63) / 64 * 64);
}

// The workspace starts with one group's packed weights. A stride-1 conv is an implicit GEMM
// (conv_implicit.h) in bands of output rows, each thread with its own band buffers, declared as
// bounds that grow with the width: ResNet's 3x3 conv 64->64 on 56x56 (pad 1) reads planes 58
// wide; a band holds at most 768 columns, so its zero-padded input rows with their halo take
// 64 x (768 + 2 x 58) x 4 = 226,304 bytes and its wide output 64 x 768 x 4 = 196,608, for any
// batch; with group 2, half of each. A 1x1 conv is an implicit GEMM on its input as it is: its
// packed weights only (non-constant weights here), or one OpenBLAS GEMM (nothing) on a machine
// without AVX2 + FMA. A
// stride-2 3x3 conv is an implicit GEMM on 2 x 2 phase planes per channel: 28 output columns a
// row read planes 28 + 1 = 29 wide, so a band's four phases take 64 x 4 x (768 + 1 x 29) x 4 =
// 816,128 bytes and its wide output 196,608, per thread. A stride-2 1x1 conv takes im2col
// column tiles, one per thread, of at most max(256 columns, a row) and max(512 KiB, a row):
// 64 x 4 x 256 = 65,536 bytes. A depthwise conv needs nothing.
TEST_CASE("Conv declares packed weights and the buffers of its path") {
  AttributeMap attributes;
  attributes.set("pads", ints_attr({1, 1, 1, 1}));
  for (const int threads : {1, 2}) {
    auto full = prepare_conv(Shape{8, 64, 56, 56}, Shape{64, 64, 3, 3}, Shape{8, 64, 56, 56},
                             attributes, threads);
    REQUIRE_MESSAGE(full.has_value(), full.status().to_string());
    CHECK(full->workspace_bytes ==
          packed_weight_bytes(64, 576) + static_cast<size_t>(threads) * (226304u + 196608u));
    CHECK(full->workspace_preferred_bytes == full->workspace_bytes);
    CHECK(full->implementation.rfind("implicit gemm", 0) == 0);
  }
  AttributeMap grouped = attributes;
  grouped.set("group", int_attr(2));
  auto half =
      prepare_conv(Shape{8, 64, 56, 56}, Shape{64, 32, 3, 3}, Shape{8, 64, 56, 56}, grouped);
  REQUIRE_MESSAGE(half.has_value(), half.status().to_string());
  CHECK(half->workspace_bytes == packed_weight_bytes(32, 288) + 113152u + 98304u);
  auto pointwise =
      prepare_conv(Shape{1, 64, 56, 56}, Shape{128, 64, 1, 1}, Shape{1, 128, 56, 56}, {});
  REQUIRE_MESSAGE(pointwise.has_value(), pointwise.status().to_string());
  if (cpu::nn::best_sgemm_isa() == cpu::nn::SgemmIsa::kPortable) {
    CHECK(pointwise->workspace_bytes == 0u);
  } else {
    CHECK(pointwise->workspace_bytes == packed_weight_bytes(128, 64));
    CHECK(pointwise->implementation.rfind("implicit gemm", 0) == 0);
  }
  AttributeMap strided = attributes;
  strided.set("strides", ints_attr({2, 2}));
  for (const int threads : {1, 2}) {
    auto phases = prepare_conv(Shape{1, 64, 56, 56}, Shape{64, 64, 3, 3}, Shape{1, 64, 28, 28},
                               strided, threads);
    REQUIRE_MESSAGE(phases.has_value(), phases.status().to_string());
    CHECK(phases->workspace_bytes ==
          packed_weight_bytes(64, 576) + static_cast<size_t>(threads) * (816128u + 196608u));
    CHECK(phases->implementation.rfind("implicit gemm", 0) == 0);
    AttributeMap strided_1x1;
    strided_1x1.set("strides", ints_attr({2, 2}));
    auto tiles = prepare_conv(Shape{1, 64, 56, 56}, Shape{64, 64, 1, 1}, Shape{1, 64, 28, 28},
                              strided_1x1, threads);
    REQUIRE_MESSAGE(tiles.has_value(), tiles.status().to_string());
    CHECK(tiles->workspace_bytes ==
          packed_weight_bytes(64, 64) + static_cast<size_t>(threads) * 65536u);
    CHECK(tiles->implementation.rfind("im2col+gemm", 0) == 0);
  }
  AttributeMap depthwise = attributes;
  depthwise.set("group", int_attr(64));
  auto dw = prepare_conv(Shape{1, 64, 56, 56}, Shape{64, 1, 3, 3}, Shape{1, 64, 56, 56}, depthwise);
  REQUIRE_MESSAGE(dw.has_value(), dw.status().to_string());
  CHECK(dw->workspace_bytes == 0u);
}

// Runs a prepared Conv on `x` and `w` on `threads` threads.
std::vector<float> run_prepared_conv(cpu::PreparedKernel& prepared, std::vector<float> x,
                                     const Shape& x_shape, std::vector<float> w,
                                     const Shape& w_shape, const Shape& y_shape, int threads) {
  std::vector<float> y(static_cast<size_t>(y_shape.element_count()), -7.0f);
  const std::vector<TensorView> inputs = {{x.data(), DType::kFloat32, x_shape, {}},
                                          {w.data(), DType::kFloat32, w_shape, {}}};
  const std::vector<TensorView> outputs = {{y.data(), DType::kFloat32, y_shape, {}}};
  std::vector<std::byte> workspace(prepared.workspace_bytes);
  cpu::ThreadPool pool(threads);
  cpu::RunContext context;
  context.inputs = inputs;
  context.outputs = outputs;
  context.workspace = workspace.data();
  context.workspace_bytes = workspace.size();
  context.threads = &pool;
  REQUIRE(prepared.kernel->run(context).is_ok());
  return y;
}

// One, two and three threads give the same bits on both GEMM paths: stride 1 (the implicit
// GEMM, its wide output split in column blocks) and stride 2 (im2col tiles: 27x300 gives 14
// one-row tiles split over the threads; 27x12 and 7x7 a single tile, filled by all the threads,
// its product split over the panels of A). Each output is one multiply-add chain over the whole
// depth however the work is split. And the result is the convolution (a float64 direct loop).
TEST_CASE("Conv gives the same bits on any number of threads") {
  for (const int64_t stride : {1, 2}) {
    // 35 x 64: output rows of 64 (stride 1) and 32 (stride 2), whole vectors, each run as its own
    // product straight into Y (ImplicitGemmPlan::rows_direct).
    for (const auto& size : {std::pair<int64_t, int64_t>{27, 12}, {27, 300}, {7, 7}, {35, 64}}) {
      const int64_t height = size.first;
      const int64_t width = size.second;
      CAPTURE(stride);
      CAPTURE(height);
      CAPTURE(width);
      ConvCase c;
      c.in_channels = 8;
      c.out_channels = 40;
      c.input = {height, width};
      c.kernel = {3, 3};
      c.stride = {stride, stride};
      c.dilation = {1, 1};
      c.pads = {1, 1, 1, 1};
      const std::vector<int64_t> out = conv_output(c);
      const Shape x_shape{1, 8, height, width};
      const Shape w_shape{40, 8, 3, 3};
      const Shape y_shape{1, 40, out[0], out[1]};
      AttributeMap attributes;
      attributes.set("pads", ints_attr({1, 1, 1, 1}));
      attributes.set("strides", ints_attr({stride, stride}));
      const std::vector<float> x = random_values(x_shape.element_count(), 11);
      const std::vector<float> w = random_values(w_shape.element_count(), 12);
      std::vector<std::vector<float>> results;
      for (const int threads : {1, 2, 3}) {
        auto prepared = prepare_conv(x_shape, w_shape, y_shape, attributes, threads);
        REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
        results.push_back(run_prepared_conv(*prepared, x, x_shape, w, w_shape, y_shape, threads));
      }
      CHECK(results[1] == results[0]);
      CHECK(results[2] == results[0]);
      check_close(results[0], naive_conv(c, out, x, w, {}));
    }
  }
}

// Constant weights are packed once, when the Session is created (not in the workspace on every
// run): the output is the same, bit for bit, as with the same weights fed as an input, on both
// GEMM paths (stride 1 and 2) and with groups. The one exception is a 3x3 stride-1 conv of one
// group, which with constant weights runs Winograd F(2x2, 3x3) (conv_winograd.h): the same
// convolution to rounding, checked here within 2e-5 relative.
TEST_CASE("Conv with constant weights gives the bits of the same weights as an input") {
  for (const int64_t stride : {1, 2}) {
    for (const int64_t group : {1, 2}) {
      CAPTURE(stride);
      CAPTURE(group);
      AttributeMap attributes;
      attributes.set("pads", ints_attr({1, 1, 1, 1}));
      attributes.set("strides", ints_attr({stride, stride}));
      attributes.set("group", int_attr(group));
      const Shape x_shape{2, 8, 20, 36};
      const Shape w_shape{24, 8 / group, 3, 3};
      const Shape y_shape{2, 24, (20 - 1) / stride + 1, (36 - 1) / stride + 1};
      const std::vector<float> x = random_values(x_shape.element_count(), 5);
      const std::vector<float> w = random_values(w_shape.element_count(), 6);
      std::vector<std::vector<float>> results;
      for (const bool constant : {false, true}) {
        auto y = run_single_node("Conv", {f32(x_shape, x), f32(w_shape, w, constant)},
                                 {OutputSpec{DType::kFloat32, y_shape}}, attributes);
        REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
        results.push_back(values_of<float>((*y)[0]));
      }
      if (stride == 1 && group == 1) {
        check_close(results[1], results[0], 2e-5f);
      } else {
        CHECK(results[1] == results[0]);
      }
    }
  }
}

// With constant weights, k >= 256 and AVX-512, an implicit GEMM runs on channel vectors
// (sgemm_channels.h); with the same weights as an input it stays on the column tiles. The bits
// agree, with a bias and a fused activation the tiles apply (LeakyRelu) or the passes do
// (HardSigmoid), at two threads: a strided 3x3 onto 14x14 and a 5x5 on 12x12 (one band of
// 64 channels, its runs shared by the threads) and a 1x1 on 7x7 (k = 256, two panels).
TEST_CASE("Conv on channel vectors gives the bits of the column tiles") {
  struct ChannelCase {
    int64_t in_channels, out_channels, size, kernel, stride, pad;
  };
  const ChannelCase cases[] = {
      {32, 64, 28, 3, 2, 1}, {16, 64, 12, 5, 1, 2}, {256, 128, 7, 1, 1, 0}};
  for (const ChannelCase& c : cases) {
    for (const char* activation : {"LeakyRelu", "HardSigmoid"}) {
      CAPTURE(c.in_channels);
      CAPTURE(c.kernel);
      CAPTURE(activation);
      AttributeMap attributes;
      attributes.set("pads", ints_attr({c.pad, c.pad, c.pad, c.pad}));
      attributes.set("strides", ints_attr({c.stride, c.stride}));
      attributes.set("onepool_activation", string_attr(activation));
      attributes.set("onepool_alpha", float_attr(0.2f));
      attributes.set("onepool_beta", float_attr(0.5f));
      const int64_t out = (c.size + 2 * c.pad - c.kernel) / c.stride + 1;
      const Shape x_shape{1, c.in_channels, c.size, c.size};
      const Shape w_shape{c.out_channels, c.in_channels, c.kernel, c.kernel};
      const Shape y_shape{1, c.out_channels, out, out};
      const std::vector<float> x = random_values(x_shape.element_count(), 7);
      const std::vector<float> w = random_values(w_shape.element_count(), 8);
      const std::vector<float> b = random_values(c.out_channels, 9);
      std::vector<std::vector<float>> results;
      for (const bool constant : {false, true}) {
        auto y = run_single_node(
            "Conv",
            {f32(x_shape, x), f32(w_shape, w, constant), f32(Shape{c.out_channels}, b, true)},
            {OutputSpec{DType::kFloat32, y_shape}}, attributes, 2);
        REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
        results.push_back(values_of<float>((*y)[0]));
      }
      CHECK(results[1] == results[0]);
    }
  }
}

// A graph output shape that disagrees with the attributes is reported with both shapes and the
// axis: pads 1, stride 2 on 7x5 gives [1,1,4,3]; a graph claiming [1,1,4,4] differs on axis 3.
// A bias of the wrong length and a channel/group mismatch are reported too.
TEST_CASE("Conv reports shape mismatches at prepare time") {
  AttributeMap attributes;
  attributes.set("pads", ints_attr({1, 1, 1, 1}));
  attributes.set("strides", ints_attr({2, 2}));
  auto wrong = prepare_conv(Shape{1, 1, 7, 5}, Shape{1, 1, 3, 3}, Shape{1, 1, 4, 4}, attributes);
  REQUIRE_FALSE(wrong.has_value());
  const std::string message = wrong.status().message();
  CHECK(message.find("node 'conv' (Conv)") != std::string::npos);
  CHECK(message.find("expected shape [1,1,4,3]") != std::string::npos);
  CHECK(message.find("got [1,1,4,4]") != std::string::npos);
  CHECK(message.find("axis 3") != std::string::npos);

  auto bad_bias = run_single_node(
      "Conv",
      {f32(Shape{1, 2, 3}, std::vector<float>(6, 1.0f)),
       f32(Shape{2, 2, 1}, std::vector<float>(4, 1.0f), true), f32(Shape{3}, {1, 2, 3}, true)},
      {OutputSpec{DType::kFloat32, Shape{1, 2, 3}}});
  REQUIRE_FALSE(bad_bias.has_value());
  CHECK(bad_bias.status().message().find("expected shape [2], got [3]") != std::string::npos);

  AttributeMap grouped;
  grouped.set("group", int_attr(3));
  auto bad_group = prepare_conv(Shape{1, 4, 5, 5}, Shape{6, 2, 1, 1}, Shape{1, 6, 5, 5}, grouped);
  REQUIRE_FALSE(bad_group.has_value());
  CHECK(bad_group.status().code() == StatusCode::kInvalidModel);
}

// --- ConvTranspose --------------------------------------------------------------------------

struct TransposeCase {
  int64_t batch = 1, in_channels = 2, out_channels = 2, group = 1;
  std::vector<int64_t> input, kernel, stride, dilation, pads, output_padding;
  bool bias = false;
  bool relu = false;
};

std::vector<int64_t> transpose_output(const TransposeCase& c) {
  const size_t rank = c.input.size();
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    out[i] = c.stride[i] * (c.input[i] - 1) + c.output_padding[i] +
             (c.kernel[i] - 1) * c.dilation[i] + 1 - c.pads[i] - c.pads[rank + i];
  }
  return out;
}

// Scatter: every x element adds x * w into each output position its kernel taps reach.
std::vector<float> naive_transpose(const TransposeCase& c, const std::vector<int64_t>& out,
                                   const std::vector<float>& x, const std::vector<float>& w,
                                   const std::vector<float>& b) {
  const bool two_d = c.input.size() == 2;
  const size_t rank = c.input.size();
  const int64_t ih = two_d ? c.input[0] : 1, iw = c.input.back();
  const int64_t kh = two_d ? c.kernel[0] : 1, kw = c.kernel.back();
  const int64_t oh = two_d ? out[0] : 1, ow = out.back();
  const int64_t sh = two_d ? c.stride[0] : 1, sw = c.stride.back();
  const int64_t dh = two_d ? c.dilation[0] : 1, dw = c.dilation.back();
  const int64_t ph = two_d ? c.pads[0] : 0, pw = c.pads[rank - 1];
  const int64_t cg = c.in_channels / c.group, mg = c.out_channels / c.group;
  std::vector<double> y(static_cast<size_t>(c.batch * c.out_channels * oh * ow), 0.0);
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t ch = 0; ch < c.in_channels; ++ch)
      for (int64_t iy = 0; iy < ih; ++iy)
        for (int64_t ix = 0; ix < iw; ++ix)
          for (int64_t m = 0; m < mg; ++m)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t oy = iy * sh - ph + ky * dh, ox = ix * sw - pw + kx * dw;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const int64_t om = ch / cg * mg + m;
                y[static_cast<size_t>(((n * c.out_channels + om) * oh + oy) * ow + ox)] +=
                    x[static_cast<size_t>(((n * c.in_channels + ch) * ih + iy) * iw + ix)] *
                    w[static_cast<size_t>(((ch * mg + m) * kh + ky) * kw + kx)];
              }
  std::vector<float> result(y.size());
  const int64_t plane = oh * ow;
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t m = static_cast<int64_t>(i) / plane % c.out_channels;
    float value = static_cast<float>(y[i] + (c.bias ? b[static_cast<size_t>(m)] : 0.0));
    result[i] = c.relu ? std::max(value, 0.0f) : value;
  }
  return result;
}

void check_transpose_case(const TransposeCase& c, uint32_t seed) {
  const std::vector<int64_t> out = transpose_output(c);
  const Shape x_shape = shape_of(c.batch, c.in_channels, c.input);
  const Shape w_shape = shape_of(c.in_channels, c.out_channels / c.group, c.kernel);
  const auto x = random_values(x_shape.element_count(), seed);
  const auto w = random_values(w_shape.element_count(), seed + 1);
  const auto b = random_values(c.out_channels, seed + 2);
  std::vector<std::optional<testing::TestInput>> inputs{f32(x_shape, x), f32(w_shape, w, true)};
  if (c.bias) inputs.push_back(f32(Shape{c.out_channels}, b, true));
  AttributeMap attributes;
  attributes.set("strides", ints_attr(c.stride));
  attributes.set("dilations", ints_attr(c.dilation));
  attributes.set("pads", ints_attr(c.pads));
  attributes.set("output_padding", ints_attr(c.output_padding));
  attributes.set("group", int_attr(c.group));
  if (c.relu) attributes.set("onepool_activation", string_attr("Relu"));
  auto result = run_single_node(
      "ConvTranspose", inputs,
      {OutputSpec{DType::kFloat32, shape_of(c.batch, c.out_channels, out)}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  check_close(values_of<float>((*result)[0]), naive_transpose(c, out, x, w, b));
}

// ConvTranspose against the naive scatter (tolerance 1e-4) over 1-D and 2-D, group 1 and 2,
// strides 1/2/3, dilations 1/2, pads, output_padding, bias and the fused Relu, batch 2.
TEST_CASE("ConvTranspose matches a naive scatter over a configuration sweep") {
  uint32_t seed = 300;
  for (int64_t stride : {1, 2, 3}) {
    for (int64_t dilation : {1, 2}) {
      for (int64_t group : {1, 2}) {
        TransposeCase c;
        c.batch = 2;
        c.in_channels = 4;
        c.out_channels = 6;
        c.group = group;
        c.input = {4, 5};
        c.kernel = {3, 2};
        c.stride = {stride, stride};
        c.dilation = {dilation, 1};
        c.pads = {1, 0, 0, 1};
        c.output_padding = {stride - 1, 0};
        c.bias = (seed % 2) == 0;
        c.relu = (seed % 3) == 0;
        CAPTURE(stride);
        CAPTURE(dilation);
        CAPTURE(group);
        check_transpose_case(c, seed++);
        TransposeCase one_d = c;
        one_d.input = {6};
        one_d.kernel = {3};
        one_d.stride = {stride};
        one_d.dilation = {dilation};
        one_d.pads = {1, 0};
        one_d.output_padding = {stride - 1};
        check_transpose_case(one_d, seed++);
      }
    }
  }
}

// Official ONNX node tests, x = 0..8 as [1,1,3,3] and W = ones [1,2,3,3] unless noted:
//   test_convtranspose: defaults -> [1,2,5,5]
//   test_convtranspose_1d: x = [0,1,2], W ones [1,2,3] -> [0,1,3,3,2] per channel
//   test_convtranspose_autopad_same: SAME_UPPER, strides 2 -> [1,2,6,6]
//   test_convtranspose_pads: strides [3,2], pads [1,2,1,2] -> [1,2,7,3]
//   test_convtranspose_dilations: x [1,1,3,3], W [1,1,2,2] = [7,2,1,9], dilations 2 -> [1,1,5,5]
//   test_convtranspose_output_shape: strides [3,2], output_shape [10,8] -> zeros in the last
//     row and column (the requested size exceeds the natural 9x7)
TEST_CASE("ConvTranspose reproduces the official ONNX node tests") {
  std::vector<float> x9(9);
  for (size_t i = 0; i < 9; ++i) x9[i] = static_cast<float>(i);
  const auto x = f32(Shape{1, 1, 3, 3}, x9);
  const auto w = f32(Shape{1, 2, 3, 3}, std::vector<float>(18, 1.0f), true);
  auto twice = [](std::vector<float> channel) {
    std::vector<float> both = channel;
    both.insert(both.end(), channel.begin(), channel.end());
    return both;
  };
  auto run = [&](const testing::TestInput& input, const testing::TestInput& weight, Shape y,
                 const AttributeMap& attributes) {
    auto result = run_single_node("ConvTranspose", {input, weight},
                                  {OutputSpec{DType::kFloat32, y}}, attributes);
    REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
    return values_of<float>((*result)[0]);
  };

  check_close(run(x, w, Shape{1, 2, 5, 5}, {}),
              twice({0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                     27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8}));
  check_close(run(f32(Shape{1, 1, 3}, {0, 1, 2}),
                  f32(Shape{1, 2, 3}, std::vector<float>(6, 1.0f), true), Shape{1, 2, 5}, {}),
              twice({0, 1, 3, 3, 2}));

  AttributeMap same;
  same.set("auto_pad", string_attr("SAME_UPPER"));
  same.set("strides", ints_attr({2, 2}));
  check_close(run(x, w, Shape{1, 2, 6, 6}, same),
              twice({0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
                     3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8}));

  AttributeMap pads;
  pads.set("strides", ints_attr({3, 2}));
  pads.set("pads", ints_attr({1, 2, 1, 2}));
  check_close(run(x, w, Shape{1, 2, 7, 3}, pads),
              twice({1, 1, 3, 1, 1, 3, 7, 4, 9, 7, 4, 9, 7, 4, 9, 13, 7, 15, 13, 7, 15}));

  AttributeMap dilations;
  dilations.set("dilations", ints_attr({2, 2}));
  check_close(run(f32(Shape{1, 1, 3, 3}, {3, 8, 1, 9, 5, 7, 3, 2, 6}),
                  f32(Shape{1, 1, 2, 2}, {7, 2, 1, 9}, true), Shape{1, 1, 5, 5}, dilations),
              {21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
               76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54});

  AttributeMap output_shape;
  output_shape.set("strides", ints_attr({3, 2}));
  output_shape.set("output_shape", ints_attr({10, 8}));
  const std::vector<float> row0{0, 0, 1, 1, 3, 2, 2, 0}, row1{3, 3, 7, 4, 9, 5, 5, 0},
      row2{6, 6, 13, 7, 15, 8, 8, 0};
  std::vector<float> channel;
  for (const auto* row : {&row0, &row0, &row0, &row1, &row1, &row1, &row2, &row2, &row2}) {
    channel.insert(channel.end(), row->begin(), row->end());
  }
  channel.insert(channel.end(), 8, 0.0f);
  check_close(run(x, w, Shape{1, 2, 10, 8}, output_shape), twice(channel));
}

// ConvTranspose with bias [1, -100] and a fused Relu on test_convtranspose's input: channel 0
// is the official result + 1; channel 1 (all values <= 36 - 100 < 0) becomes all zeros.
TEST_CASE("ConvTranspose applies bias and a fused Relu") {
  std::vector<float> x9(9);
  for (size_t i = 0; i < 9; ++i) x9[i] = static_cast<float>(i);
  AttributeMap attributes;
  attributes.set("onepool_activation", string_attr("Relu"));
  auto y = run_single_node(
      "ConvTranspose",
      {f32(Shape{1, 1, 3, 3}, x9), f32(Shape{1, 2, 3, 3}, std::vector<float>(18, 1.0f), true),
       f32(Shape{2}, {1.0f, -100.0f}, true)},
      {OutputSpec{DType::kFloat32, Shape{1, 2, 5, 5}}}, attributes);
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  std::vector<float> expected{1,  2,  4,  4,  3,  4,  9,  16, 13, 8,  10, 22, 37,
                              28, 16, 10, 21, 34, 25, 14, 7,  14, 22, 16, 9};
  expected.insert(expected.end(), 25, 0.0f);
  check_close(values_of<float>((*y)[0]), expected);
}

}  // namespace
}  // namespace onepool
