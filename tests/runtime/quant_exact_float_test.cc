// ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul with constant weights run on the
// float GEMM when its
// sums are exact (runtime/cpu/kernels/quant_conv_float.h): the same bytes as the integer loops
// the same node runs with its weights as a graph input, on grouped, strided, padded convolutions
// and batched products with per-channel zero points; weights too large for exact float sums keep
// the integer loops.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool {
namespace {

using testing::f32;
using testing::int_attr;
using testing::ints_attr;
using testing::make_host_tensor;
using testing::OutputSpec;
using testing::random_bytes;
using testing::TestInput;

std::vector<int8_t> as_int8(const std::vector<uint8_t>& bytes) {
  return std::vector<int8_t>(bytes.begin(), bytes.end());
}

template <class T>
TestInput tensor(DType dtype, Shape shape, const std::vector<T>& values, bool constant) {
  return {make_host_tensor(dtype, std::move(shape), values), constant};
}

struct QuantConvCase {
  int64_t channels = 6, out_channels = 8, height = 9, width = 11, kernel = 3, group = 2;
  int64_t stride = 2;
};

AttributeMap attributes_of(const QuantConvCase& c) {
  AttributeMap attributes;
  attributes.set("group", int_attr(c.group));
  attributes.set("strides", ints_attr({c.stride, c.stride}));
  attributes.set("pads", ints_attr({1, 0, 1, 2}));
  return attributes;
}

Shape output_shape(const QuantConvCase& c) {
  return Shape{1, c.out_channels, (c.height + 2 - c.kernel) / c.stride + 1,
               (c.width + 2 - c.kernel) / c.stride + 1};
}

// The QLinearConv inputs with the weights and their zero points constant or graph inputs.
std::vector<std::optional<TestInput>> qlinear_inputs(const QuantConvCase& c, bool constant,
                                                     const std::vector<int8_t>& weights) {
  const auto x = random_bytes(static_cast<size_t>(c.channels * c.height * c.width), 11);
  std::vector<int8_t> w_zero;
  std::vector<float> w_scale;
  for (int64_t oc = 0; oc < c.out_channels; ++oc) {
    w_zero.push_back(static_cast<int8_t>(oc * 7 - 20));
    w_scale.push_back(0.01f + 0.002f * static_cast<float>(oc));
  }
  std::vector<int32_t> bias;
  for (int64_t oc = 0; oc < c.out_channels; ++oc)
    bias.push_back(static_cast<int32_t>(oc * 37 - 100));
  const Shape w_shape{c.out_channels, c.channels / c.group, c.kernel, c.kernel};
  return {tensor(DType::kUInt8, Shape{1, c.channels, c.height, c.width}, x, false),
          f32(Shape{}, {0.05f}),
          tensor<uint8_t>(DType::kUInt8, Shape{}, {131}, false),
          tensor(DType::kInt8, w_shape, weights, constant),
          f32(Shape{c.out_channels}, w_scale, true),
          tensor(DType::kInt8, Shape{c.out_channels}, w_zero, constant),
          f32(Shape{}, {0.7f}),
          tensor<uint8_t>(DType::kUInt8, Shape{}, {120}, false),
          tensor(DType::kInt32, Shape{c.out_channels}, bias, true)};
}

std::vector<std::byte> run_qlinear(const QuantConvCase& c, bool constant,
                                   const std::vector<int8_t>& weights) {
  auto y = testing::run_single_node("QLinearConv", qlinear_inputs(c, constant, weights),
                                    {OutputSpec{DType::kUInt8, output_shape(c)}}, attributes_of(c));
  REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
  return (*y)[0].data;
}

// The implementation the CPU registry prepares for the QLinearConv of `c`.
std::string qlinear_implementation(const QuantConvCase& c, const std::vector<int8_t>& weights) {
  const Graph graph =
      testing::single_node_graph("QLinearConv", qlinear_inputs(c, true, weights),
                                 {OutputSpec{DType::kUInt8, output_shape(c)}}, attributes_of(c));
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find("QLinearConv")(cpu::NodeContext(graph, graph.nodes[0], 2));
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  return prepared->implementation;
}

// Both exact float paths: the implicit GEMM on float planes (3x3 at strides 1 and 2, 1x1 at
// stride 1) and the column matrix (a strided 1x1, which the implicit GEMM leaves to im2col).
TEST_CASE("QLinearConv with constant weights gives the integer rows' bytes on the float GEMM") {
  for (const auto& [kernel, stride] : {std::pair<int64_t, int64_t>{3, 1}, {3, 2}, {1, 1}, {1, 2}}) {
    QuantConvCase c;
    c.kernel = kernel;
    c.stride = stride;
    CAPTURE(c.kernel);
    CAPTURE(c.stride);
    const auto weights = as_int8(random_bytes(
        static_cast<size_t>(c.out_channels * c.channels / c.group * c.kernel * c.kernel), 12));
    const std::string expected =
        kernel == 1 && stride == 2 ? "exact float gemm" : "exact float implicit gemm";
    CHECK(qlinear_implementation(c, weights).rfind(expected, 0) == 0);
    CHECK(run_qlinear(c, true, weights) == run_qlinear(c, false, weights));
  }
}

// A convolution large enough for both threads (16 -> 32 channels, 3x3 on 34 x 30: 4.4M
// multiply-adds, above the serial bound), at strides 1 and 2: the input conversion and the
// requantization split positions over the threads, the GEMM bands; the bytes stay the integer
// rows'.
TEST_CASE("QLinearConv split over threads by positions gives the integer rows' bytes") {
  for (const int64_t stride : {1, 2}) {
    QuantConvCase c;
    c.channels = 16;
    c.out_channels = 32;
    c.height = 34;
    c.width = 30;
    c.group = 1;
    c.stride = stride;
    CAPTURE(c.stride);
    const auto weights =
        as_int8(random_bytes(static_cast<size_t>(c.out_channels * c.channels * 9), 14));
    CHECK(qlinear_implementation(c, weights).rfind("exact float implicit gemm", 0) == 0);
    CHECK(run_qlinear(c, true, weights) == run_qlinear(c, false, weights));
  }
}

// 96 input channels x 3 x 3 = 864 rows of weights up to 148 away from their zero point: 864 x
// 255 x 148 is above 2^24, so a float sum could round; the node keeps the integer rows.
TEST_CASE("QLinearConv keeps the integer rows where float sums could round") {
  QuantConvCase c;
  c.channels = 96;
  c.group = 1;
  const auto weights = as_int8(
      random_bytes(static_cast<size_t>(c.out_channels * c.channels * c.kernel * c.kernel), 13));
  CHECK(qlinear_implementation(c, weights).rfind("int16 columns", 0) == 0);
}

TEST_CASE("ConvInteger with constant weights gives the integer rows' values") {
  QuantConvCase c;
  const auto x = random_bytes(static_cast<size_t>(c.channels * c.height * c.width), 21);
  const auto weights = as_int8(random_bytes(
      static_cast<size_t>(c.out_channels * c.channels / c.group * c.kernel * c.kernel), 22));
  const Shape w_shape{c.out_channels, c.channels / c.group, c.kernel, c.kernel};
  std::vector<std::vector<std::byte>> results;
  for (const bool constant : {false, true}) {
    auto y = testing::run_single_node(
        "ConvInteger",
        {tensor(DType::kUInt8, Shape{1, c.channels, c.height, c.width}, x, false),
         tensor(DType::kInt8, w_shape, weights, constant),
         tensor<uint8_t>(DType::kUInt8, Shape{}, {77}, false),
         tensor<int8_t>(DType::kInt8, Shape{}, {-3}, constant)},
        {OutputSpec{DType::kInt32, output_shape(c)}}, attributes_of(c));
    REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
    results.push_back((*y)[0].data);
  }
  CHECK(results[1] == results[0]);
}

// A batched B [2, k, 40] against A [2, 24, k] with per-row A and per-column B zero points;
// k = 64 is exact in one float GEMM, k = 600 with weights 150 from their zero point is not
// (600 x 255 x 150 > 2^24) and runs in two chunks of k. Either way the values are those of the
// integer loops.
TEST_CASE("MatMulInteger with a constant B gives the integer rows' values") {
  for (const int64_t k : {64, 600}) {
    CAPTURE(k);
    const int64_t m = 24, n = 40;
    const auto a = random_bytes(static_cast<size_t>(2 * m * k), 31);
    auto b = random_bytes(static_cast<size_t>(2 * k * n), 32);
    if (k == 600) b[5] = 0;  // 0 - 150: beyond the exact bound
    std::vector<uint8_t> a_zero, b_zero;
    for (int64_t i = 0; i < m; ++i) a_zero.push_back(static_cast<uint8_t>(100 + i));
    for (int64_t j = 0; j < n; ++j)
      b_zero.push_back(static_cast<uint8_t>(k == 600 ? 150 : 120 + j));
    std::vector<std::vector<std::byte>> results;
    for (const bool constant : {false, true}) {
      auto y = testing::run_single_node("MatMulInteger",
                                        {tensor(DType::kUInt8, Shape{2, m, k}, a, false),
                                         tensor(DType::kUInt8, Shape{2, k, n}, b, constant),
                                         tensor(DType::kUInt8, Shape{m}, a_zero, false),
                                         tensor(DType::kUInt8, Shape{n}, b_zero, constant)},
                                        {OutputSpec{DType::kInt32, Shape{2, m, n}}});
      REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
      results.push_back((*y)[0].data);
    }
    CHECK(results[1] == results[0]);
  }
}

// The implementation the CPU registry prepares for a MatMulInteger of A [rows, k] (uint8) and a
// constant B [k, n] (uint8) with per-column zero points.
std::string matmul_integer_implementation(const std::vector<std::optional<TestInput>>& inputs,
                                          const Shape& y_shape) {
  const Graph graph = testing::single_node_graph(
      "MatMulInteger", inputs, {OutputSpec{DType::kInt32, y_shape}}, AttributeMap{});
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find("MatMulInteger")(cpu::NodeContext(graph, graph.nodes[0], 2));
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  return prepared->implementation;
}

// Fewer rows than a packed panel (a classifier's one row) take B's centered columns as int16:
// the integer rows' values, at the largest products (|255 - 0| x |0 - 255| at every k, far beyond
// the float path's exact bound) and for a batched A against one B. A k too deep for int32 sums of
// such products keeps the float GEMM's chunks.
TEST_CASE("MatMulInteger with few rows multiplies B's int16 columns exactly") {
  struct Case {
    int64_t batch, m, k, n;
    const char* implementation;
  };
  for (const Case c :
       {Case{1, 1, 2048, 10, "exact int16 columns"}, Case{2, 3, 777, 33, "exact int16 columns"},
        Case{1, 1, 40000, 2, "exact float gemm"}}) {
    CAPTURE(c.m);
    CAPTURE(c.k);
    auto a = random_bytes(static_cast<size_t>(c.batch * c.m * c.k), 51);
    auto b = random_bytes(static_cast<size_t>(c.k * c.n), 52);
    for (int64_t p = 0; p < c.k; p += 3) {  // the extreme product at every third step of k
      a[static_cast<size_t>(p)] = 255;
      b[static_cast<size_t>(p * c.n)] = 0;
    }
    std::vector<uint8_t> b_zero(static_cast<size_t>(c.n), 200);
    b_zero[0] = 255;
    const Shape y_shape{c.batch, c.m, c.n};
    std::vector<std::vector<std::byte>> results;
    for (const bool constant : {false, true}) {
      const std::vector<std::optional<TestInput>> inputs = {
          tensor(DType::kUInt8, Shape{c.batch, c.m, c.k}, a, false),
          tensor(DType::kUInt8, Shape{c.k, c.n}, b, constant),
          tensor<uint8_t>(DType::kUInt8, Shape{}, {0}, false),
          tensor(DType::kUInt8, Shape{c.n}, b_zero, constant)};
      if (constant) CHECK(matmul_integer_implementation(inputs, y_shape) == c.implementation);
      auto y =
          testing::run_single_node("MatMulInteger", inputs, {OutputSpec{DType::kInt32, y_shape}});
      REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
      results.push_back((*y)[0].data);
    }
    CHECK(results[1] == results[0]);
  }
}

// QLinearMatMul inputs: A [2, m, k] uint8 (per-tensor scale and zero point), B [k, n] int8 with
// per-column scales and zero points, constant or graph inputs; y uint8.
std::vector<std::optional<TestInput>> qlinear_matmul_inputs(int64_t m, int64_t k, int64_t n,
                                                            const std::vector<int8_t>& b,
                                                            bool constant) {
  std::vector<float> b_scale;
  std::vector<int8_t> b_zero;
  for (int64_t j = 0; j < n; ++j) {
    b_scale.push_back(0.004f + 0.001f * static_cast<float>(j));
    b_zero.push_back(static_cast<int8_t>(j % 9 - 4));
  }
  return {tensor(DType::kUInt8, Shape{2, m, k}, random_bytes(static_cast<size_t>(2 * m * k), 41),
                 false),
          f32(Shape{}, {0.03f}),
          tensor<uint8_t>(DType::kUInt8, Shape{}, {118}, false),
          tensor(DType::kInt8, Shape{k, n}, b, constant),
          f32(Shape{n}, b_scale, true),
          tensor(DType::kInt8, Shape{n}, b_zero, constant),
          f32(Shape{}, {0.9f}),
          tensor<uint8_t>(DType::kUInt8, Shape{}, {125}, false)};
}

std::string qlinear_matmul_implementation(int64_t m, int64_t k, int64_t n,
                                          const std::vector<int8_t>& b) {
  const Graph graph =
      testing::single_node_graph("QLinearMatMul", qlinear_matmul_inputs(m, k, n, b, true),
                                 {OutputSpec{DType::kUInt8, Shape{2, m, n}}}, AttributeMap{});
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = registry.find("QLinearMatMul")(cpu::NodeContext(graph, graph.nodes[0], 2));
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  return prepared->implementation;
}

// k = 300 is exact in one float GEMM; k = 1200 with a weight 124 from its zero point is not
// (1200 x 255 x 124 > 2^24) and runs in three chunks of k. Five rows (fewer than a panel) take
// the int16 columns instead. Either way the bytes are those of the integer rows.
TEST_CASE("QLinearMatMul with a constant B gives the integer rows' bytes") {
  for (const int64_t m : {5, 24}) {
    for (const int64_t k : {300, 1200}) {
      CAPTURE(m);
      CAPTURE(k);
      const int64_t n = 10;
      auto b = as_int8(random_bytes(static_cast<size_t>(k * n), 42));
      if (k == 1200) b[0] = -128;  // -128 - 4 at column 0's zero point of -4: 124 away
      CHECK(qlinear_matmul_implementation(m, k, n, b)
                .rfind(m == 5 ? "exact int16 columns" : "exact float gemm", 0) == 0);
      std::vector<std::vector<std::byte>> results;
      for (const bool constant : {false, true}) {
        auto y =
            testing::run_single_node("QLinearMatMul", qlinear_matmul_inputs(m, k, n, b, constant),
                                     {OutputSpec{DType::kUInt8, Shape{2, m, n}}});
        REQUIRE_MESSAGE(y.has_value(), y.status().to_string());
        results.push_back((*y)[0].data);
      }
      CHECK(results[1] == results[0]);
    }
  }
}

}  // namespace
}  // namespace onepool
