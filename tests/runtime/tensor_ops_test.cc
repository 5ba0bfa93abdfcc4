// Data-movement CPU kernels: Transpose, Concat, Split, Slice, Gather, GatherElements, Pad,
// Expand, Tile, DepthToSpace, SpaceToDepth. Hand-computed cases, naive-loop comparisons for
// transposes, and ONNX node tests converted to inline values.
#include <doctest/doctest.h>

#include <numeric>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

TestInput i32(Shape shape, const std::vector<int32_t>& values, bool constant = false) {
  return {make_host_tensor(DType::kInt32, shape, values), constant};
}

void check_close(const std::vector<float>& actual, const std::vector<float>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element ", i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

std::vector<float> iota_floats(size_t count) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), 0.0f);
  return values;
}

AttributeMap axis_attributes(int64_t axis) {
  AttributeMap attributes;
  attributes.set("axis", int_attr(axis));
  return attributes;
}

// The reference: out[o] = in[sum_k o_k * in_stride[perm[k]]], one element at a time.
template <class T>
std::vector<T> naive_transpose(const std::vector<T>& in, const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& perm) {
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1), out_dims(rank), index(rank, 0);
  for (size_t k = rank - 1; k-- > 0;) strides[k] = strides[k + 1] * dims[k + 1];
  for (size_t k = 0; k < rank; ++k) out_dims[k] = dims[static_cast<size_t>(perm[k])];
  std::vector<T> out;
  for (size_t n = 0; n < in.size(); ++n) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k) offset += index[k] * strides[static_cast<size_t>(perm[k])];
    out.push_back(in[static_cast<size_t>(offset)]);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < out_dims[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

// Runs Transpose on a float tensor of `dims` filled with 0, 1, 2, ... and compares with the
// naive loop, element for element.
void check_transpose(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm,
                     int threads = 2) {
  auto in_shape = Shape::from_dims(dims);
  REQUIRE(in_shape.has_value());
  std::vector<int64_t> out_dims;
  for (int64_t axis : perm) out_dims.push_back(dims[static_cast<size_t>(axis)]);
  auto out_shape = Shape::from_dims(out_dims);
  REQUIRE(out_shape.has_value());
  const std::vector<float> in = iota_floats(static_cast<size_t>(in_shape->element_count()));
  AttributeMap attributes;
  attributes.set("perm", ints_attr(perm));
  auto result = run_single_node("Transpose", {f32(*in_shape, in)}, {{DType::kFloat32, *out_shape}},
                                attributes, threads);
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == naive_transpose(in, dims, perm));
}

}  // namespace

// 2-D [2,3] = [[0,1,2],[3,4,5]] transposed (default perm) is [[0,3],[1,4],[2,5]].
TEST_CASE("Transpose 2-D default perm") {
  auto result =
      run_single_node("Transpose", {f32({2, 3}, {0, 1, 2, 3, 4, 5})}, {{DType::kFloat32, {3, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{0, 3, 1, 4, 2, 5});
}

// Larger shapes cross several 32x32 tiles and both threads; every element must equal the naive
// loop's: 2-D [67,45], 3-D (2,0,1), NCHW->NHWC (0,2,3,1), NHWC->NCHW (0,3,1,2), last-two swap,
// and a general permutation (3,1,0,2) that takes the table path.
TEST_CASE("Transpose N-D against a naive loop") {
  check_transpose({67, 45}, {1, 0});
  check_transpose({3, 4, 5}, {2, 0, 1});
  check_transpose({2, 3, 37, 41}, {0, 2, 3, 1});
  check_transpose({2, 37, 41, 3}, {0, 3, 1, 2});
  check_transpose({2, 3, 33, 35}, {0, 1, 3, 2}, 1);
  check_transpose({4, 3, 5, 6}, {3, 1, 0, 2});
  check_transpose({1, 5, 1, 7}, {2, 3, 0, 1});
}

// int8 (1-byte elements) NCHW->NHWC of [1,2,2,2] = 0..7 gives [0,4,1,5,2,6,3,7].
TEST_CASE("Transpose int8 NCHW to NHWC") {
  AttributeMap attributes;
  attributes.set("perm", ints_attr({0, 2, 3, 1}));
  HostTensor in = make_host_tensor<int8_t>(DType::kInt8, {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto result = run_single_node("Transpose", {TestInput{in, false}}, {{DType::kInt8, {1, 2, 2, 2}}},
                                attributes);
  REQUIRE(result.has_value());
  CHECK(values_of<int8_t>(result.value()[0]) == std::vector<int8_t>{0, 4, 1, 5, 2, 6, 3, 7});
}

// Concat of a = [[0,1],[2,3]] and b = [[4,5],[6,7]]: axis 0 stacks rows [0..7]; axis 1 (the
// last, also as -1) joins rows: [0,1,4,5,2,3,6,7]. A [1,2] third input on axis 0 appends 8, 9.
TEST_CASE("Concat on axes 0, 1 and last") {
  const auto a = f32({2, 2}, {0, 1, 2, 3});
  const auto b = f32({2, 2}, {4, 5, 6, 7}, true);
  auto axis0 = run_single_node("Concat", {a, b, f32({1, 2}, {8, 9})}, {{DType::kFloat32, {5, 2}}},
                               axis_attributes(0));
  REQUIRE(axis0.has_value());
  CHECK(values_of<float>(axis0.value()[0]) == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  for (int64_t axis : {1, -1}) {
    auto joined =
        run_single_node("Concat", {a, b}, {{DType::kFloat32, {2, 4}}}, axis_attributes(axis));
    REQUIRE(joined.has_value());
    CHECK(values_of<float>(joined.value()[0]) == std::vector<float>{0, 1, 4, 5, 2, 3, 6, 7});
  }
}

// A 3-D concat on the middle axis: [2,1,3] (0..5) and [2,2,3] (10..21) -> [2,3,3]:
// [0,1,2, 10,11,12, 13,14,15, 3,4,5, 16,17,18, 19,20,21].
TEST_CASE("Concat 3-D middle axis") {
  std::vector<float> b(12);
  std::iota(b.begin(), b.end(), 10.0f);
  auto result = run_single_node("Concat", {f32({2, 1, 3}, iota_floats(6)), f32({2, 2, 3}, b)},
                                {{DType::kFloat32, {2, 3, 3}}}, axis_attributes(1));
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{0, 1, 2, 10, 11, 12, 13, 14, 15, 3, 4, 5, 16, 17, 18, 19, 20, 21});
}

// Split [2,6] = 0..11 on axis 1 into equal thirds: [0,1,6,7], [2,3,8,9], [4,5,10,11]; with an
// explicit split input [1,5]: [0,6] and [1,2,3,4,5,7,8,9,10,11].
TEST_CASE("Split equal and explicit") {
  const auto in = f32({2, 6}, iota_floats(12));
  auto equal = run_single_node(
      "Split", {in},
      {{DType::kFloat32, {2, 2}}, {DType::kFloat32, {2, 2}}, {DType::kFloat32, {2, 2}}},
      axis_attributes(1));
  REQUIRE(equal.has_value());
  CHECK(values_of<float>(equal.value()[0]) == std::vector<float>{0, 1, 6, 7});
  CHECK(values_of<float>(equal.value()[1]) == std::vector<float>{2, 3, 8, 9});
  CHECK(values_of<float>(equal.value()[2]) == std::vector<float>{4, 5, 10, 11});
  auto explicit_split =
      run_single_node("Split", {in, i64({2}, {1, 5}, true)},
                      {{DType::kFloat32, {2, 1}}, {DType::kFloat32, {2, 5}}}, axis_attributes(-1));
  REQUIRE(explicit_split.has_value());
  CHECK(values_of<float>(explicit_split.value()[0]) == std::vector<float>{0, 6});
  CHECK(values_of<float>(explicit_split.value()[1]) ==
        std::vector<float>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11});
  // A split attribute (opset < 13) that disagrees with the output shapes is a model error.
  AttributeMap bad = axis_attributes(1);
  bad.set("split", ints_attr({2, 4}));
  auto mismatch =
      run_single_node("Split", {in}, {{DType::kFloat32, {2, 1}}, {DType::kFloat32, {2, 5}}}, bad);
  CHECK_FALSE(mismatch.has_value());
}

// Slice of [3,4] = 0..11: starts [-1, 100] (clamped to 3 on axis 1), ends [-100, -5] (clamped
// to -1 for the negative steps), steps [-2, -1] -> rows 2, 0 and columns 3..0:
// [[11,10,9,8],[3,2,1,0]].
TEST_CASE("Slice negative steps and clamping") {
  auto result = run_single_node(
      "Slice",
      {f32({3, 4}, iota_floats(12)), i64({2}, {-1, 100}, true), i64({2}, {-100, -5}, true),
       i64({2}, {0, 1}, true), i64({2}, {-2, -1}, true)},
      {{DType::kFloat32, {2, 4}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{11, 10, 9, 8, 3, 2, 1, 0});
}

// Slice with default axes/steps and an out-of-range end: [3,4] rows 1..inf, cols 1..3 ->
// [[5,6],[9,10]]; the opset-1 attribute form with axes [1] starts [-2] ends [1000] gives the
// last two columns [[2,3],[6,7],[10,11]].
TEST_CASE("Slice defaults and attribute form") {
  auto result = run_single_node(
      "Slice", {f32({3, 4}, iota_floats(12)), i64({2}, {1, 1}, true), i64({2}, {1000, 3}, true)},
      {{DType::kFloat32, {2, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{5, 6, 9, 10});
  AttributeMap attributes;
  attributes.set("starts", ints_attr({-2}));
  attributes.set("ends", ints_attr({1000}));
  attributes.set("axes", ints_attr({1}));
  auto legacy = run_single_node("Slice", {f32({3, 4}, iota_floats(12))},
                                {{DType::kFloat32, {3, 2}}}, attributes);
  REQUIRE(legacy.has_value());
  CHECK(values_of<float>(legacy.value()[0]) == std::vector<float>{2, 3, 6, 7, 10, 11});
}

// Gather from [3,2] = [[0,1],[2,3],[4,5]]: axis 0, indices [-1, 0] (runtime, int64) -> rows
// [4,5],[0,1]; axis 1, int32 indices [[1],[-2]] shape [2,1] -> out [3,2,1] = [1,0,3,2,5,4].
TEST_CASE("Gather axis 0 and 1 with negative indices") {
  const auto data = f32({3, 2}, iota_floats(6));
  auto rows = run_single_node("Gather", {data, i64({2}, {-1, 0})}, {{DType::kFloat32, {2, 2}}},
                              axis_attributes(0));
  REQUIRE(rows.has_value());
  CHECK(values_of<float>(rows.value()[0]) == std::vector<float>{4, 5, 0, 1});
  auto cols = run_single_node("Gather", {data, i32({2, 1}, {1, -2})},
                              {{DType::kFloat32, {3, 2, 1}}}, axis_attributes(1));
  REQUIRE(cols.has_value());
  CHECK(values_of<float>(cols.value()[0]) == std::vector<float>{1, 0, 3, 2, 5, 4});
}

// Index 3 on an axis of 3 elements (valid: [-3, 2]) is an error Status, not a crash; so is -4.
TEST_CASE("Gather out-of-range index returns kOutOfRange") {
  for (int64_t bad : {3, -4}) {
    auto result = run_single_node("Gather", {f32({3, 2}, iota_floats(6)), i64({2}, {0, bad})},
                                  {{DType::kFloat32, {2, 2}}}, axis_attributes(0));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.status().code() == StatusCode::kOutOfRange);
    CHECK(result.status().message().find("test_node") != std::string::npos);
  }
}

// GatherElements axis 1 on [[1,2],[3,4]] with [[0,0],[1,0]] -> [[1,1],[4,3]]; index 2 fails.
TEST_CASE("GatherElements axis 1 and bounds check") {
  auto result =
      run_single_node("GatherElements", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})},
                      {{DType::kFloat32, {2, 2}}}, axis_attributes(1));
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1, 1, 4, 3});
  auto bad =
      run_single_node("GatherElements", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 2, 1, 0})},
                      {{DType::kFloat32, {2, 2}}}, axis_attributes(1));
  CHECK_FALSE(bad.has_value());
}

// Pad [1,2,3] by 2 in front and 1 behind:
//   constant 9 -> [9,9,1,2,3,9]; reflect -> [3,2,1,2,3,2]; edge -> [1,1,1,2,3,3].
TEST_CASE("Pad constant, reflect and edge") {
  const auto in = f32({3}, {1, 2, 3});
  const auto pads = i64({2}, {2, 1}, true);
  const std::pair<const char*, std::vector<float>> cases[] = {{"constant", {9, 9, 1, 2, 3, 9}},
                                                              {"reflect", {3, 2, 1, 2, 3, 2}},
                                                              {"edge", {1, 1, 1, 2, 3, 3}}};
  for (const auto& [mode, expected] : cases) {
    AttributeMap attributes;
    attributes.set("mode", string_attr(mode));
    auto result = run_single_node("Pad", {in, pads, f32({}, {9.0f}, true)},
                                  {{DType::kFloat32, {6}}}, attributes);
    REQUIRE(result.has_value());
    CHECK(values_of<float>(result.value()[0]) == expected);
  }
}

// A constant Pad that only grows may run over its own input (the planner's growing in place):
// [2,3,4] = 0..23 padded by [0,1,1] in front and [1,0,2] behind with 7 gives [3,4,7], the same
// bytes in place as copied. Reflect mode and negative pads never declare it.
TEST_CASE("Pad grows in place over its input") {
  AttributeMap attributes;
  const auto in = f32({2, 3, 4}, iota_floats(24));
  const auto pads = i64({6}, {0, 1, 1, 1, 0, 2}, true);
  const auto fill = f32({}, {7.0f}, true);
  const OutputSpec spec{DType::kFloat32, {3, 4, 7}};
  auto copied = run_single_node("Pad", {in, pads, fill}, {spec}, attributes);
  REQUIRE_MESSAGE(copied.has_value(), copied.status().to_string());
  auto in_place = run_single_node_in_place("Pad", {in, pads, fill}, spec, attributes);
  REQUIRE_MESSAGE(in_place.has_value(), in_place.status().to_string());
  CHECK(in_place->in_place_grows);
  const auto expected = values_of<float>((*copied)[0]);
  CHECK(values_of<float>(in_place->output) == expected);
  CHECK(expected[0] == 7.0f);           // [0,0,0] lies in the added row
  CHECK(expected[7 + 1] == 0.0f);       // [0,1,1] reads input [0,0,0]
  CHECK(expected[3 * 28 - 1] == 7.0f);  // the added plane
  attributes.set("mode", string_attr("reflect"));
  auto reflect = run_single_node_in_place("Pad", {in, pads}, spec, attributes);
  REQUIRE(reflect.has_value());
  CHECK_FALSE(reflect->in_place_grows);
  AttributeMap constant;
  auto crop = run_single_node_in_place("Pad", {in, i64({6}, {0, -1, 0, 0, 0, 1}, true)},
                                       {DType::kFloat32, {2, 2, 5}}, constant);
  REQUIRE(crop.has_value());
  CHECK_FALSE(crop->in_place_grows);
}

// Negative pads crop: [2,3] = 0..5 with pads [0,-1, 1,0] (begin rows 0, begin cols -1, end rows
// 1, end cols 0) -> [[1,2],[4,5],[7,7]] with constant 7 in the added row. The constant comes
// from a runtime input; the opset-2 attribute form (pads, value 7) gives the same.
TEST_CASE("Pad negative pads crop, runtime constant and attribute form") {
  auto result = run_single_node(
      "Pad", {f32({2, 3}, iota_floats(6)), i64({4}, {0, -1, 1, 0}, true), f32({}, {7.0f})},
      {{DType::kFloat32, {3, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) == std::vector<float>{1, 2, 4, 5, 7, 7});
  AttributeMap attributes;
  attributes.set("pads", ints_attr({0, -1, 1, 0}));
  attributes.set("value", float_attr(7.0f));
  auto legacy = run_single_node("Pad", {f32({2, 3}, iota_floats(6))}, {{DType::kFloat32, {3, 2}}},
                                attributes);
  REQUIRE(legacy.has_value());
  CHECK(values_of<float>(legacy.value()[0]) == std::vector<float>{1, 2, 4, 5, 7, 7});
}

// Expand [3,1] = [1,2,3] to [2,3,2]: each value repeated along the last axis, block repeated:
// [1,1,2,2,3,3, 1,1,2,2,3,3]. The shape input may be a runtime tensor.
TEST_CASE("Expand") {
  auto result = run_single_node("Expand", {f32({3, 1}, {1, 2, 3}), i64({3}, {2, 1, 2})},
                                {{DType::kFloat32, {2, 3, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
}

// Tile [[1,2],[3,4]] by [2,3] -> [4,6]: rows [1,2,1,2,1,2],[3,4,3,4,3,4] twice.
TEST_CASE("Tile") {
  auto result = run_single_node("Tile", {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {2, 3}, true)},
                                {{DType::kFloat32, {4, 6}}});
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
}

// Larger tensors exercise row merging and both threads. Slice [4,37,300] (0, 1, 2, ...) with
// starts [1, 36, 5], ends [4, 0, 290], steps [1, -3, 2]: output [3, 12, 143] where element
// (a, b, c) = in[1 + a, 36 - 3b, 5 + 2c], i.e. value (1 + a) * 11100 + (36 - 3b) * 300 + 5 + 2c.
TEST_CASE("Slice on a larger tensor against the closed form") {
  auto result = run_single_node(
      "Slice",
      {f32({4, 37, 300}, iota_floats(4 * 37 * 300)), i64({3}, {1, 36, 5}, true),
       i64({3}, {4, 0, 290}, true), i64({3}, {0, 1, 2}, true), i64({3}, {1, -3, 2}, true)},
      {{DType::kFloat32, {3, 12, 143}}});
  REQUIRE(result.has_value());
  const auto out = values_of<float>(result.value()[0]);
  REQUIRE(out.size() == size_t{3 * 12 * 143});
  size_t mismatches = 0;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 12; ++b) {
      for (int c = 0; c < 143; ++c) {
        const float expected = static_cast<float>((1 + a) * 11100 + (36 - 3 * b) * 300 + 5 + 2 * c);
        mismatches += out[static_cast<size_t>((a * 12 + b) * 143 + c)] != expected ? 1 : 0;
      }
    }
  }
  CHECK(mismatches == 0);
}

// Reflect-pad [3,40,50] by begin [1,2,3], end [0,4,5] -> [4,46,58], checked against a folding
// reference: index i < 0 -> -i, i >= n -> 2(n-1) - i (pads are smaller than the dims).
TEST_CASE("Pad reflect on a larger tensor against a folding reference") {
  const std::vector<float> in = iota_floats(3 * 40 * 50);
  AttributeMap attributes;
  attributes.set("mode", string_attr("reflect"));
  auto result = run_single_node("Pad", {f32({3, 40, 50}, in), i64({6}, {1, 2, 3, 0, 4, 5}, true)},
                                {{DType::kFloat32, {4, 46, 58}}}, attributes);
  REQUIRE(result.has_value());
  const auto out = values_of<float>(result.value()[0]);
  auto fold = [](int i, int n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); };
  size_t mismatches = 0;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 46; ++b) {
      for (int c = 0; c < 58; ++c) {
        const int source = (fold(a - 1, 3) * 40 + fold(b - 2, 40)) * 50 + fold(c - 3, 50);
        const float actual = out[static_cast<size_t>((a * 46 + b) * 58 + c)];
        mismatches += actual != in[static_cast<size_t>(source)] ? 1 : 0;
      }
    }
  }
  CHECK(mismatches == 0);
}

// Official ONNX node tests (onnx 1.12 data), converted to inline values.
// ONNX node test test_edge_pad (opset 13).
TEST_CASE("official test_edge_pad") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("edge"));
  auto result = run_single_node(
      "Pad",
      {i32({1, 3, 4, 5}, {1,  0,  0,  2, 1, 0,  0,  0, 0,  0, 0, 1, 0, 0,  0, 0, 1, 0, 0, 0,
                          -2, 0,  0,  0, 2, -1, 0,  0, 1,  1, 0, 0, 0, -1, 0, 0, 1, 1, 0, 0,
                          -1, -1, -1, 1, 0, 0,  -1, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0}),
       i64({8}, {0, 0, 1, 1, 0, 0, 1, 1}, true)},
      {{DType::kInt32, {1, 3, 6, 7}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<int32_t> expected = {
      1, 1, 0, 0, 2,  1,  1,  1,  1,  0,  0, 2, 1, 1,  0,  0,  0,  0,  0, 0, 0, 0, 0,  1,  0,  0,
      0, 0, 0, 0, 1,  0,  0,  0,  0,  0,  0, 1, 0, 0,  0,  0,  -2, -2, 0, 0, 0, 2, 2,  -2, -2, 0,
      0, 0, 2, 2, -1, -1, 0,  0,  1,  1,  1, 0, 0, 0,  0,  -1, 0,  0,  0, 0, 1, 1, 0,  0,  0,  0,
      0, 1, 1, 0, 0,  0,  -1, -1, -1, -1, 1, 0, 0, -1, -1, -1, -1, 1,  0, 0, 0, 0, -1, 0,  -1, 0,
      0, 0, 0, 0, 0,  -1, 0,  0,  0,  0,  0, 0, 0, 0,  0,  0,  0,  0,  0, 0, 0, 0};
  CHECK(values_of<int32_t>(result.value()[0]) == expected);
}

// ONNX node test test_reflect_pad (opset 13).
TEST_CASE("official test_reflect_pad") {
  AttributeMap attributes;
  attributes.set("mode", string_attr("reflect"));
  auto result = run_single_node(
      "Pad",
      {i32({1, 3, 4, 5}, {0,  0,  0,  -1, 0,  0, -1, 0, 0,  0, 0, 0, 1, -1, 0, 0, 0, 0, 0, 0,
                          -1, 0,  0,  -1, 1,  1, 1,  0, -1, 1, 0, 1, 0, 0,  0, 0, 0, 1, 0, 0,
                          1,  -1, -1, 0,  -1, 1, 0,  0, 1,  1, 1, 0, 0, 1,  0, 0, 0, 0, 0, 0}),
       i64({8}, {0, 0, 1, 1, 0, 0, 1, 1}, true)},
      {{DType::kInt32, {1, 3, 6, 7}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<int32_t> expected = {
      -1, 0,  -1, 0,  0, 0, 0, 0, 0,  0, 0,  -1, 0, -1, -1, 0,  -1, 0, 0,  0, 0,  0, 0,  0, 1,  -1,
      0,  -1, 0,  0,  0, 0, 0, 0, 0,  0, 0,  0,  1, -1, 0,  -1, 1,  1, 1,  0, -1, 1, -1, 0, -1, 0,
      0,  -1, 1,  -1, 1, 1, 1, 0, -1, 1, -1, 1,  0, 1,  0,  0,  0,  0, 0,  0, 0,  1, 0,  0, 0,  1,
      0,  1,  0,  0,  0, 0, 0, 1, 0,  0, 1,  1,  1, -1, 1,  -1, -1, 0, -1, 0, 0,  1, 0,  0, 1,  1,
      1,  0,  1,  0,  0, 1, 0, 1, 0,  0, 0,  0,  0, 0,  0,  0,  1,  0, 0,  1, 0,  1};
  CHECK(values_of<int32_t>(result.value()[0]) == expected);
}

// ONNX node test test_expand_dim_changed (opset 13).
TEST_CASE("official test_expand_dim_changed") {
  AttributeMap attributes;
  auto result =
      run_single_node("Expand", {f32({3, 1}, {1.0f, 2.0f, 3.0f}), i64({3}, {2, 1, 6}, true)},
                      {{DType::kFloat32, {2, 3, 6}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 2.0f,
                                       2.0f, 2.0f, 2.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f,
                                       1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 2.0f,
                                       2.0f, 2.0f, 2.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_transpose_all_permutations_2 (opset 13).
TEST_CASE("official test_transpose_all_permutations_2") {
  AttributeMap attributes;
  attributes.set("perm", ints_attr({1, 0, 2}));
  auto result = run_single_node(
      "Transpose",
      {f32({2, 3, 4}, {0.548813522f,  0.715189338f,  0.602763355f, 0.544883192f, 0.423654795f,
                       0.64589411f,   0.437587202f,  0.891772985f, 0.963662744f, 0.383441508f,
                       0.791725039f,  0.528894901f,  0.568044543f, 0.925596654f, 0.0710360557f,
                       0.0871293023f, 0.0202183966f, 0.832619846f, 0.778156757f, 0.870012164f,
                       0.978618324f,  0.799158573f,  0.461479366f, 0.780529201f})},
      {{DType::kFloat32, {3, 2, 4}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      0.548813522f,  0.715189338f,  0.602763355f, 0.544883192f, 0.568044543f, 0.925596654f,
      0.0710360557f, 0.0871293023f, 0.423654795f, 0.64589411f,  0.437587202f, 0.891772985f,
      0.0202183966f, 0.832619846f,  0.778156757f, 0.870012164f, 0.963662744f, 0.383441508f,
      0.791725039f,  0.528894901f,  0.978618324f, 0.799158573f, 0.461479366f, 0.780529201f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_depthtospace_crd_mode_example (opset 13).
TEST_CASE("official test_depthtospace_crd_mode_example") {
  AttributeMap attributes;
  attributes.set("blocksize", int_attr(2));
  attributes.set("mode", string_attr("CRD"));
  auto result = run_single_node(
      "DepthToSpace",
      {f32({1, 8, 2, 3},
           {0.0f,  1.0f,  2.0f,  3.0f,  4.0f,  5.0f,  9.0f,  10.0f, 11.0f, 12.0f, 13.0f, 14.0f,
            18.0f, 19.0f, 20.0f, 21.0f, 22.0f, 23.0f, 27.0f, 28.0f, 29.0f, 30.0f, 31.0f, 32.0f,
            36.0f, 37.0f, 38.0f, 39.0f, 40.0f, 41.0f, 45.0f, 46.0f, 47.0f, 48.0f, 49.0f, 50.0f,
            54.0f, 55.0f, 56.0f, 57.0f, 58.0f, 59.0f, 63.0f, 64.0f, 65.0f, 66.0f, 67.0f, 68.0f})},
      {{DType::kFloat32, {1, 2, 4, 6}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {
      0.0f,  9.0f,  1.0f,  10.0f, 2.0f,  11.0f, 18.0f, 27.0f, 19.0f, 28.0f, 20.0f, 29.0f,
      3.0f,  12.0f, 4.0f,  13.0f, 5.0f,  14.0f, 21.0f, 30.0f, 22.0f, 31.0f, 23.0f, 32.0f,
      36.0f, 45.0f, 37.0f, 46.0f, 38.0f, 47.0f, 54.0f, 63.0f, 55.0f, 64.0f, 56.0f, 65.0f,
      39.0f, 48.0f, 40.0f, 49.0f, 41.0f, 50.0f, 57.0f, 66.0f, 58.0f, 67.0f, 59.0f, 68.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_spacetodepth_example (opset 13).
TEST_CASE("official test_spacetodepth_example") {
  AttributeMap attributes;
  attributes.set("blocksize", int_attr(2));
  auto result = run_single_node(
      "SpaceToDepth", {f32({1, 1, 4, 6}, {0.0f,  6.0f,  1.0f,  7.0f,  2.0f,  8.0f,  12.0f, 18.0f,
                                          13.0f, 19.0f, 14.0f, 20.0f, 3.0f,  9.0f,  4.0f,  10.0f,
                                          5.0f,  11.0f, 15.0f, 21.0f, 16.0f, 22.0f, 17.0f, 23.0f})},
      {{DType::kFloat32, {1, 4, 2, 3}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {0.0f,  1.0f,  2.0f,  3.0f,  4.0f,  5.0f,  6.0f,  7.0f,
                                       8.0f,  9.0f,  10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f,
                                       16.0f, 17.0f, 18.0f, 19.0f, 20.0f, 21.0f, 22.0f, 23.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_gather_elements_negative_indices (opset 13).
TEST_CASE("official test_gather_elements_negative_indices") {
  AttributeMap attributes;
  attributes.set("axis", int_attr(0));
  auto result =
      run_single_node("GatherElements",
                      {f32({3, 3}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f}),
                       i64({2, 3}, {-1, -2, 0, -2, 0, 0}, true)},
                      {{DType::kFloat32, {2, 3}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {7.0f, 5.0f, 3.0f, 4.0f, 2.0f, 3.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_gather_negative_indices (opset 13).
TEST_CASE("official test_gather_negative_indices") {
  AttributeMap attributes;
  attributes.set("axis", int_attr(0));
  auto result =
      run_single_node("Gather",
                      {f32({10}, {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f}),
                       i64({3}, {0, -9, -10}, true)},
                      {{DType::kFloat32, {3}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {0.0f, 1.0f, 0.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}

// ONNX node test test_concat_3d_axis_1 (opset 13).
TEST_CASE("official test_concat_3d_axis_1") {
  AttributeMap attributes;
  attributes.set("axis", int_attr(1));
  auto result = run_single_node(
      "Concat",
      {f32({2, 2, 2}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f}),
       f32({2, 2, 2}, {9.0f, 10.0f, 11.0f, 12.0f, 13.0f, 14.0f, 15.0f, 16.0f}, true)},
      {{DType::kFloat32, {2, 4, 2}}}, attributes);
  REQUIRE(result.has_value());
  const std::vector<float> expected = {1.0f, 2.0f, 3.0f, 4.0f, 9.0f,  10.0f, 11.0f, 12.0f,
                                       5.0f, 6.0f, 7.0f, 8.0f, 13.0f, 14.0f, 15.0f, 16.0f};
  check_close(values_of<float>(result.value()[0]), expected);
}
