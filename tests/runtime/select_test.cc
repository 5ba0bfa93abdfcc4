// NonZero and Compress (runtime/cpu/kernels/select.cc): the ONNX node-test examples, several
// dtypes, NaN and -0.0, empty results, a rank-0 input, a condition shorter and longer than the
// axis, and a planned bound too small for the actual output (an error, and no byte written).
// The OutputSpec shapes are the bounds the importer plans; run_single_node trims each result to
// the actual shape the kernel reports.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

template <class T>
TestInput tensor(DType dtype, Shape shape, const std::vector<T>& values) {
  return {make_host_tensor(dtype, shape, values), false};
}

TestInput bools(Shape shape, const std::vector<uint8_t>& values) {
  return tensor(DType::kBool, shape, values);
}

AttributeMap axis_attribute(int64_t axis) {
  AttributeMap attributes;
  attributes.set("axis", int_attr(axis));
  return attributes;
}

// Runs NonZero on `x` with the output planned at `bound`; returns the [rows, n] result.
Expected<HostTensor> nonzero(const TestInput& x, Shape bound) {
  ONEPOOL_ASSIGN_OR_RETURN(auto outputs, run_single_node("NonZero", {x}, {{DType::kInt64, bound}}));
  return outputs[0];
}

const float kNan = std::numeric_limits<float>::quiet_NaN();

}  // namespace

// test_nonzero_example: [[true,false],[true,true]] → [[0,1,1],[0,0,1]] (shape [2,3], bound [2,4]).
TEST_CASE("NonZero: the ONNX example") {
  auto result = nonzero(bools(Shape{2, 2}, {1, 0, 1, 1}), Shape{2, 4});
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(result->shape == Shape{2, 3});
  CHECK(values_of<int64_t>(*result) == std::vector<int64_t>{0, 1, 1, 0, 0, 1});
}

// float32 [0, NaN, -0.0, 2.5]: NaN counts, -0.0 does not → [[1, 3]]. float64 the same.
TEST_CASE("NonZero: NaN is nonzero, -0.0 is zero") {
  auto f32_result = nonzero(f32(Shape{4}, {0.0f, kNan, -0.0f, 2.5f}), Shape{1, 4});
  REQUIRE_MESSAGE(f32_result.has_value(), f32_result.status().to_string());
  CHECK(f32_result->shape == Shape{1, 2});
  CHECK(values_of<int64_t>(*f32_result) == std::vector<int64_t>{1, 3});
  const std::vector<double> x{0.0, std::nan(""), -0.0, 2.5};
  auto f64_result = nonzero(tensor(DType::kFloat64, Shape{4}, x), Shape{1, 4});
  REQUIRE(f64_result.has_value());
  CHECK(values_of<int64_t>(*f64_result) == std::vector<int64_t>{1, 3});
}

// int32 [2,2,2] with nonzeros at flat 1 (0,0,1), 4 (1,0,0), 7 (1,1,1): rows [0,1,1], [0,0,1],
// [1,0,1]. int8, uint8 and int64 with the same pattern give the same coordinates.
TEST_CASE("NonZero: rank 3, integer dtypes") {
  const std::vector<int64_t> expected{0, 1, 1, 0, 0, 1, 1, 0, 1};
  auto i32 = nonzero(tensor<int32_t>(DType::kInt32, Shape{2, 2, 2}, {0, -3, 0, 0, 7, 0, 0, 1}),
                     Shape{3, 8});
  REQUIRE_MESSAGE(i32.has_value(), i32.status().to_string());
  CHECK(i32->shape == Shape{3, 3});
  CHECK(values_of<int64_t>(*i32) == expected);
  auto i8 =
      nonzero(tensor<int8_t>(DType::kInt8, Shape{2, 2, 2}, {0, -1, 0, 0, 1, 0, 0, 1}), Shape{3, 8});
  REQUIRE(i8.has_value());
  CHECK(values_of<int64_t>(*i8) == expected);
  auto u8 = nonzero(tensor<uint8_t>(DType::kUInt8, Shape{2, 2, 2}, {0, 255, 0, 0, 1, 0, 0, 9}),
                    Shape{3, 8});
  REQUIRE(u8.has_value());
  CHECK(values_of<int64_t>(*u8) == expected);
  auto wide = nonzero(i64(Shape{2, 2, 2}, {0, int64_t{1} << 40, 0, 0, -1, 0, 0, 2}), Shape{3, 8});
  REQUIRE(wide.has_value());
  CHECK(values_of<int64_t>(*wide) == expected);
}

// float16 bits [0x8000 (-0), 0x3c00 (1), 0x0000, 0x7e00 (NaN)] → [[1, 3]].
TEST_CASE("NonZero: float16 tested on its bits") {
  auto result = nonzero(tensor<uint16_t>(DType::kFloat16, Shape{4}, {0x8000, 0x3c00, 0, 0x7e00}),
                        Shape{1, 4});
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<int64_t>(*result) == std::vector<int64_t>{1, 3});
}

// All zeros [2,3] → shape [2,0]; an empty X [0,3] → [2,0] too.
TEST_CASE("NonZero: nothing nonzero") {
  auto zeros = nonzero(f32(Shape{2, 3}, std::vector<float>(6, 0.0f)), Shape{2, 6});
  REQUIRE_MESSAGE(zeros.has_value(), zeros.status().to_string());
  CHECK(zeros->shape == Shape{2, 0});
  CHECK(zeros->data.empty());
  auto empty = nonzero(f32(Shape{0, 3}, {}), Shape{2, 0});
  REQUIRE_MESSAGE(empty.has_value(), empty.status().to_string());
  CHECK(empty->shape == Shape{2, 0});
}

// A rank-0 X, as ONNX Runtime has it: 5 → [[0]] (shape [1,1]), 0 → shape [1,0]. Planned with
// zero rows ([0,1]) the result is [0,1] / [0,0]. Three rows for a rank-2 X is a malformed model.
TEST_CASE("NonZero: a rank-0 input, and rows that disagree with the rank") {
  auto five = nonzero(f32(Shape{}, {5.0f}), Shape{1, 1});
  REQUIRE_MESSAGE(five.has_value(), five.status().to_string());
  CHECK(five->shape == Shape{1, 1});
  CHECK(values_of<int64_t>(*five) == std::vector<int64_t>{0});
  auto zero = nonzero(f32(Shape{}, {0.0f}), Shape{1, 1});
  REQUIRE(zero.has_value());
  CHECK(zero->shape == Shape{1, 0});
  auto no_rows = nonzero(f32(Shape{}, {5.0f}), Shape{0, 1});
  REQUIRE(no_rows.has_value());
  CHECK(no_rows->shape == Shape{0, 1});
  auto wrong = nonzero(f32(Shape{2, 2}, {1, 1, 1, 1}), Shape{3, 4});
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.status().code() == StatusCode::kInvalidModel);
  CHECK(wrong.status().message().find("expected int64 [2,n]") != std::string::npos);
}

// [1,2,3] all nonzero against a bound of [1,2]: an error naming the node, the output, the actual
// [1,3] and the bound [1,2].
TEST_CASE("NonZero: a bound too small is an error") {
  auto result = nonzero(f32(Shape{3}, {1, 2, 3}), Shape{1, 2});
  REQUIRE_FALSE(result.has_value());
  const std::string message = result.status().message();
  CHECK(result.status().code() == StatusCode::kOutOfRange);
  CHECK(message.find("node 'test_node' (NonZero)") != std::string::npos);
  CHECK(message.find("output 'output_0': the actual shape [1,3] does not fit the planned bound "
                     "[1,2]") != std::string::npos);
}

// The ONNX examples on x = [[1,2],[3,4],[5,6]]: axis 0 with [F,T,T] → [[3,4],[5,6]]; axis 1 and
// axis -1 with [F,T] → [[2],[4],[6]]; no axis with [F,T,F,F,T] → [2,5] (bound [min(5,6)] = [5]).
TEST_CASE("Compress: the ONNX examples") {
  const TestInput x = f32(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  auto rows = run_single_node("Compress", {x, bools(Shape{3}, {0, 1, 1})},
                              {{DType::kFloat32, Shape{3, 2}}}, axis_attribute(0));
  REQUIRE_MESSAGE(rows.has_value(), rows.status().to_string());
  CHECK((*rows)[0].shape == Shape{2, 2});
  CHECK(values_of<float>((*rows)[0]) == std::vector<float>{3, 4, 5, 6});
  for (int64_t axis : {1, -1}) {
    auto columns = run_single_node("Compress", {x, bools(Shape{2}, {0, 1})},
                                   {{DType::kFloat32, Shape{3, 2}}}, axis_attribute(axis));
    REQUIRE_MESSAGE(columns.has_value(), columns.status().to_string());
    CHECK((*columns)[0].shape == Shape{3, 1});
    CHECK(values_of<float>((*columns)[0]) == std::vector<float>{2, 4, 6});
  }
  auto flat = run_single_node("Compress", {x, bools(Shape{5}, {0, 1, 0, 0, 1})},
                              {{DType::kFloat32, Shape{5}}});
  REQUIRE_MESSAGE(flat.has_value(), flat.status().to_string());
  CHECK((*flat)[0].shape == Shape{2});
  CHECK(values_of<float>((*flat)[0]) == std::vector<float>{2, 5});
}

// x int64 [4,2] = 0..7 along axis 0: condition [T,F,T] (shorter) → rows 0 and 2 = [0,1,4,5];
// x [2,2] with [F,T,T] (longer: only the first 2 count) → row 1 = [2,3].
TEST_CASE("Compress: a condition shorter or longer than the axis") {
  auto shorter = run_single_node(
      "Compress", {i64(Shape{4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), bools(Shape{3}, {1, 0, 1})},
      {{DType::kInt64, Shape{3, 2}}}, axis_attribute(0));
  REQUIRE_MESSAGE(shorter.has_value(), shorter.status().to_string());
  CHECK((*shorter)[0].shape == Shape{2, 2});
  CHECK(values_of<int64_t>((*shorter)[0]) == std::vector<int64_t>{0, 1, 4, 5});
  auto longer =
      run_single_node("Compress", {i64(Shape{2, 2}, {0, 1, 2, 3}), bools(Shape{3}, {0, 1, 1})},
                      {{DType::kInt64, Shape{2, 2}}}, axis_attribute(0));
  REQUIRE_MESSAGE(longer.has_value(), longer.status().to_string());
  CHECK((*longer)[0].shape == Shape{1, 2});
  CHECK(values_of<int64_t>((*longer)[0]) == std::vector<int64_t>{2, 3});
}

// Nothing selected: axis 0 → [0,2]; no axis → [0].
TEST_CASE("Compress: nothing selected") {
  const TestInput x = f32(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  auto rows = run_single_node("Compress", {x, bools(Shape{3}, {0, 0, 0})},
                              {{DType::kFloat32, Shape{3, 2}}}, axis_attribute(0));
  REQUIRE_MESSAGE(rows.has_value(), rows.status().to_string());
  CHECK((*rows)[0].shape == Shape{0, 2});
  CHECK((*rows)[0].data.empty());
  auto flat =
      run_single_node("Compress", {x, bools(Shape{2}, {0, 0})}, {{DType::kFloat32, Shape{2}}});
  REQUIRE(flat.has_value());
  CHECK((*flat)[0].shape == Shape{0});
}

// Elements move by size: uint8, int8, bool, float64 and an inner axis of int32 [2,3,2] (axis 1,
// [T,F,T] → x[:, {0,2}, :] = [0,1,4,5, 6,7,10,11]).
TEST_CASE("Compress: several dtypes") {
  const auto condition = bools(Shape{3}, {1, 0, 1});
  auto u8 =
      run_single_node("Compress", {tensor<uint8_t>(DType::kUInt8, Shape{3}, {7, 8, 9}), condition},
                      {{DType::kUInt8, Shape{3}}});
  REQUIRE_MESSAGE(u8.has_value(), u8.status().to_string());
  CHECK(values_of<uint8_t>((*u8)[0]) == std::vector<uint8_t>{7, 9});
  auto i8 =
      run_single_node("Compress", {tensor<int8_t>(DType::kInt8, Shape{3}, {-1, -2, -3}), condition},
                      {{DType::kInt8, Shape{3}}});
  REQUIRE(i8.has_value());
  CHECK(values_of<int8_t>((*i8)[0]) == std::vector<int8_t>{-1, -3});
  auto b = run_single_node("Compress", {bools(Shape{3}, {1, 1, 0}), condition},
                           {{DType::kBool, Shape{3}}});
  REQUIRE(b.has_value());
  CHECK(values_of<uint8_t>((*b)[0]) == std::vector<uint8_t>{1, 0});
  auto f64 = run_single_node(
      "Compress", {tensor<double>(DType::kFloat64, Shape{3}, {0.5, 1.5, 2.5}), condition},
      {{DType::kFloat64, Shape{3}}});
  REQUIRE(f64.has_value());
  CHECK(values_of<double>((*f64)[0]) == std::vector<double>{0.5, 2.5});
  std::vector<int32_t> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i);
  auto inner = run_single_node("Compress", {tensor(DType::kInt32, Shape{2, 3, 2}, x), condition},
                               {{DType::kInt32, Shape{2, 3, 2}}}, axis_attribute(1));
  REQUIRE_MESSAGE(inner.has_value(), inner.status().to_string());
  CHECK((*inner)[0].shape == Shape{2, 2, 2});
  CHECK(values_of<int32_t>((*inner)[0]) == std::vector<int32_t>{0, 1, 4, 5, 6, 7, 10, 11});
}

// Three rows selected against a bound of [2,2]: an error naming the output, actual [3,2] and the
// bound; run directly on a buffer with room past the view, which must stay untouched (0xCD).
TEST_CASE("Compress: a bound too small is an error and writes nothing") {
  const Graph graph = single_node_graph(
      "Compress", {f32(Shape{3, 2}, {1, 2, 3, 4, 5, 6}), bools(Shape{3}, {1, 1, 1})},
      {{DType::kFloat32, Shape{2, 2}}}, axis_attribute(0));
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  auto prepared = cpu::prepare_cpu_kernel(registry.find("Compress"), graph, graph.nodes[0]);
  REQUIRE_MESSAGE(prepared.has_value(), prepared.status().to_string());
  CHECK(prepared->data_dependent_outputs);
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> condition{1, 1, 1};
  std::vector<std::byte> output(64, std::byte{0xCD});
  const std::vector<TensorView> inputs = {{x.data(), DType::kFloat32, Shape{3, 2}, {}},
                                          {condition.data(), DType::kBool, Shape{3}, {}}};
  const std::vector<TensorView> outputs = {{output.data(), DType::kFloat32, Shape{2, 2}, {}}};
  const Status status = run_prepared(*prepared, inputs, outputs, 1);
  REQUIRE_FALSE(status.is_ok());
  CHECK(status.code() == StatusCode::kOutOfRange);
  CHECK(status.message().find("output 'output_0': the actual shape [3,2] does not fit the "
                              "planned bound [2,2]") != std::string::npos);
  for (std::byte value : output) CHECK(value == std::byte{0xCD});
}

// A float condition, or an output dtype that is not the input's, is a malformed model.
TEST_CASE("Compress: a malformed node") {
  auto float_condition = run_single_node("Compress", {f32(Shape{2}, {1, 2}), f32(Shape{2}, {1, 0})},
                                         {{DType::kFloat32, Shape{2}}});
  REQUIRE_FALSE(float_condition.has_value());
  CHECK(float_condition.status().code() == StatusCode::kInvalidModel);
  CHECK(float_condition.status().message().find("expected a 1-D bool tensor, got float32 [2]") !=
        std::string::npos);
  auto wrong_dtype = run_single_node("Compress", {f32(Shape{2}, {1, 2}), bools(Shape{2}, {1, 0})},
                                     {{DType::kInt64, Shape{2}}});
  REQUIRE_FALSE(wrong_dtype.has_value());
  CHECK(wrong_dtype.status().code() == StatusCode::kInvalidModel);
}
