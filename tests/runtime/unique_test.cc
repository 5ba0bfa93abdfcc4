// Unique (runtime/cpu/kernels/unique.cc): the ONNX node-test examples, NaN (one value, sorted
// last), -0.0 and 0.0, several dtypes, an empty input, omitted optional outputs (trailing and in
// the middle), bounds too small (an error), and a randomized check against a std::map reference.
// The OutputSpec shapes are the bounds the importer plans: numel(X) (or dim[axis]) for Y, indices
// and counts; run_single_node trims each result to the actual shape the kernel reports.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

template <class T>
TestInput tensor(DType dtype, Shape shape, const std::vector<T>& values) {
  return {make_host_tensor(dtype, shape, values), false};
}

constexpr int64_t kNoAxis = std::numeric_limits<int64_t>::min();

AttributeMap unique_attributes(int64_t axis, int64_t sorted) {
  AttributeMap attributes;
  if (axis != kNoAxis) attributes.set("axis", int_attr(axis));
  attributes.set("sorted", int_attr(sorted));
  return attributes;
}

// The four outputs at their bounds: Y like x (flattened without an axis), the rest [n].
std::vector<OutputSpec> bounds(DType dtype, Shape y_bound, int64_t n) {
  return {{dtype, y_bound},
          {DType::kInt64, Shape{n}},
          {DType::kInt64, Shape{n}},
          {DType::kInt64, Shape{n}}};
}

using Ints = std::vector<int64_t>;

// Checks outputs 1-3 of a four-output result.
void check_indices(const std::vector<HostTensor>& result, const Ints& indices, const Ints& inverse,
                   const Ints& counts) {
  CHECK(values_of<int64_t>(result[1]) == indices);
  CHECK(values_of<int64_t>(result[2]) == inverse);
  CHECK(values_of<int64_t>(result[3]) == counts);
}

const std::vector<float> kSample{2, 1, 1, 3, 4, 3};

// Unique without an axis, every output planned at its bound [numel(x)].
Expected<std::vector<HostTensor>> unique_flat(const TestInput& x, int64_t sorted) {
  const int64_t n = x.tensor.shape.element_count();
  return run_single_node("Unique", {x}, bounds(x.tensor.dtype, Shape{n}, n),
                         unique_attributes(kNoAxis, sorted));
}

// x of 5 elements shaped like [b, a, b, c, a] with c < a < b: Y [c, a, b], indices [3,1,0],
// inverse [2,1,2,0,1], counts [1,2,2].
template <class T>
void check_dtype(DType dtype, const std::vector<T>& x, const std::vector<T>& y) {
  auto result = unique_flat(tensor(dtype, Shape{5}, x), 1);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<T>((*result)[0]) == y);
  check_indices(*result, {3, 1, 0}, {2, 1, 2, 0, 1}, {1, 2, 2});
}

}  // namespace

// test_unique_sorted_without_axis: [2,1,1,3,4,3] → Y [1,2,3,4], indices [1,0,3,4], inverse
// [1,0,0,2,3,2], counts [2,1,2,1].
TEST_CASE("Unique: sorted, without axis (ONNX example)") {
  auto result = unique_flat(f32(Shape{6}, kSample), 1);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK((*result)[0].shape == Shape{4});
  CHECK(values_of<float>((*result)[0]) == std::vector<float>{1, 2, 3, 4});
  check_indices(*result, {1, 0, 3, 4}, {1, 0, 0, 2, 3, 2}, {2, 1, 2, 1});
}

// test_unique_not_sorted_without_axis: Y [2,1,3,4], indices [0,1,3,4], inverse [0,1,1,2,3,2],
// counts [1,2,2,1].
TEST_CASE("Unique: not sorted, without axis (ONNX example)") {
  auto result = unique_flat(f32(Shape{6}, kSample), 0);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK(values_of<float>((*result)[0]) == std::vector<float>{2, 1, 3, 4});
  check_indices(*result, {0, 1, 3, 4}, {0, 1, 1, 2, 3, 2}, {1, 2, 2, 1});
}

// test_unique_sorted_with_axis: rows [1,0,0],[1,0,0],[2,3,4] → Y [[1,0,0],[2,3,4]], indices
// [0,2], inverse [0,0,1], counts [2,1]. test_unique_sorted_with_negative_axis: columns of
// [[1,0,0],[1,0,0],[2,3,3]] (axis -1) → Y [[0,1],[0,1],[3,2]], indices [1,0], inverse [1,0,0],
// counts [2,1].
TEST_CASE("Unique: sorted, with axis 0 and -1 (ONNX examples)") {
  auto rows = run_single_node("Unique", {f32(Shape{3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4})},
                              bounds(DType::kFloat32, Shape{3, 3}, 3), unique_attributes(0, 1));
  REQUIRE_MESSAGE(rows.has_value(), rows.status().to_string());
  CHECK((*rows)[0].shape == Shape{2, 3});
  CHECK(values_of<float>((*rows)[0]) == std::vector<float>{1, 0, 0, 2, 3, 4});
  check_indices(*rows, {0, 2}, {0, 0, 1}, {2, 1});
  auto columns = run_single_node("Unique", {f32(Shape{3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 3})},
                                 bounds(DType::kFloat32, Shape{3, 3}, 3), unique_attributes(-1, 1));
  REQUIRE_MESSAGE(columns.has_value(), columns.status().to_string());
  CHECK((*columns)[0].shape == Shape{3, 2});
  CHECK(values_of<float>((*columns)[0]) == std::vector<float>{0, 1, 0, 1, 3, 2});
  check_indices(*columns, {1, 0}, {1, 0, 0}, {2, 1});
}

// test_unique_sorted_with_axis_3d: x [2,4,2], slices along axis 1 are [1,1],[0,1],[2,1],[0,1]
// (twice) → Y [[[0,1],[1,1],[2,1]] ×2], indices [1,0,2], inverse [1,0,2,0], counts [2,1,1].
TEST_CASE("Unique: sorted, 3-D with axis 1 (ONNX example)") {
  const std::vector<float> x{1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1};
  auto result =
      run_single_node("Unique", {f32(Shape{2, 4, 2}, x)},
                      bounds(DType::kFloat32, Shape{2, 4, 2}, 4), unique_attributes(1, 1));
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  CHECK((*result)[0].shape == Shape{2, 3, 2});
  CHECK(values_of<float>((*result)[0]) == std::vector<float>{0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1});
  check_indices(*result, {1, 0, 2}, {1, 0, 2, 0}, {2, 1, 1});
}

// [NaN, 1, NaN, -inf, 1]: NaNs are one value, sorted after every number. Sorted → Y [-inf,1,NaN],
// indices [3,1,0], inverse [2,1,2,0,1], counts [1,2,2]; not sorted → Y [NaN,1,-inf], indices
// [0,1,3], inverse [0,1,0,2,1], counts [2,2,1].
TEST_CASE("Unique: NaN equals NaN and sorts last") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const TestInput x = f32(Shape{5}, {nan, 1, nan, -inf, 1});
  auto sorted = unique_flat(x, 1);
  REQUIRE_MESSAGE(sorted.has_value(), sorted.status().to_string());
  const auto y = values_of<float>((*sorted)[0]);
  REQUIRE(y.size() == 3);
  CHECK(y[0] == -inf);
  CHECK(y[1] == 1);
  CHECK(std::isnan(y[2]));
  check_indices(*sorted, {3, 1, 0}, {2, 1, 2, 0, 1}, {1, 2, 2});
  auto unsorted = unique_flat(x, 0);
  REQUIRE(unsorted.has_value());
  const auto first = values_of<float>((*unsorted)[0]);
  REQUIRE(first.size() == 3);
  CHECK(std::isnan(first[0]));
  CHECK(first[1] == 1);
  CHECK(first[2] == -inf);
  check_indices(*unsorted, {0, 1, 3}, {0, 1, 0, 2, 1}, {2, 2, 1});
}

// [-0.0, 1, 0.0]: -0.0 and 0.0 are one value, written as the first occurrence (-0.0), count 2.
// float16 bits [1, -0, +0, -1, NaN, 1] sorted → [-1, -0, 1, NaN], counts [1, 2, 2, 1].
TEST_CASE("Unique: signed zeros, and float16") {
  auto zeros = unique_flat(f32(Shape{3}, {-0.0f, 1, 0.0f}), 1);
  REQUIRE_MESSAGE(zeros.has_value(), zeros.status().to_string());
  const auto y = values_of<float>((*zeros)[0]);
  REQUIRE(y.size() == 2);
  CHECK(std::signbit(y[0]));
  check_indices(*zeros, {0, 1}, {0, 1, 0}, {2, 1});
  const std::vector<uint16_t> bits{0x3c00, 0x8000, 0x0000, 0xbc00, 0x7e00, 0x3c00};
  auto half = unique_flat(tensor(DType::kFloat16, Shape{6}, bits), 1);
  REQUIRE_MESSAGE(half.has_value(), half.status().to_string());
  CHECK(values_of<uint16_t>((*half)[0]) == std::vector<uint16_t>{0xbc00, 0x8000, 0x3c00, 0x7e00});
  check_indices(*half, {3, 1, 0, 4}, {2, 1, 1, 0, 3, 2}, {1, 2, 2, 1});
}

// [5,-3,5,-9,-3] in the signed types → Y [-9,-3,5]; [200,3,200,0,3] in uint8 → [0,3,200].
TEST_CASE("Unique: several dtypes") {
  check_dtype<int8_t>(DType::kInt8, {5, -3, 5, -9, -3}, {-9, -3, 5});
  check_dtype<int32_t>(DType::kInt32, {5, -3, 5, -9, -3}, {-9, -3, 5});
  check_dtype<int64_t>(DType::kInt64, {5, -3, 5, -9, -3}, {-9, -3, 5});
  check_dtype<double>(DType::kFloat64, {5, -3, 5, -9, -3}, {-9, -3, 5});
  check_dtype<uint8_t>(DType::kUInt8, {200, 3, 200, 0, 3}, {0, 3, 200});
}

// An empty X [0]: every output has shape [0].
TEST_CASE("Unique: an empty input") {
  auto result = unique_flat(f32(Shape{0}, {}), 1);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  for (const HostTensor& output : *result) CHECK(output.shape == Shape{0});
}

namespace {
// Runs Unique with the outputs whose `present` flag is false left out of the node (kNoValue, as
// the importer has an empty output name) and given a null view; those come back empty.
Expected<std::vector<HostTensor>> run_with_outputs(const TestInput& x,
                                                   const std::vector<OutputSpec>& outputs,
                                                   const std::vector<bool>& present) {
  Graph graph = single_node_graph("Unique", {x}, outputs, unique_attributes(kNoAxis, 1));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!present[i]) graph.nodes[0].outputs[i] = kNoValue;
  }
  graph.rebuild_edges();
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared,
                           cpu::prepare_cpu_kernel(registry.find("Unique"), graph, graph.nodes[0]));
  HostTensor input = x.tensor;
  const std::vector<TensorView> inputs = {{input.data.data(), input.dtype, input.shape, {}}};
  std::vector<HostTensor> results(outputs.size());
  std::vector<TensorView> views(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!present[i]) continue;
    results[i] = make_host_tensor(outputs[i].dtype, outputs[i].shape,
                                  std::vector<int64_t>(outputs[i].shape.element_count(), -7));
    views[i] = {results[i].data.data(), outputs[i].dtype, outputs[i].shape, {}};
  }
  std::vector<Shape> shapes;
  ONEPOOL_RETURN_IF_ERROR(run_prepared(prepared, inputs, views, 1, &shapes));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!present[i]) continue;
    results[i].shape = shapes[i];
    results[i].data.resize(static_cast<size_t>(shapes[i].element_count()) * sizeof(int64_t));
  }
  return results;
}

}  // namespace

// int64 [2,1,1,3,4,3] with only Y: Y [1,2,3,4]. With Y and counts, indices and inverse_indices
// left out (null views): Y [1,2,3,4], counts [2,1,2,1].
TEST_CASE("Unique: omitted optional outputs") {
  const TestInput x = i64(Shape{6}, {2, 1, 1, 3, 4, 3});
  auto only_y = run_single_node("Unique", {x}, {{DType::kInt64, Shape{6}}});
  REQUIRE_MESSAGE(only_y.has_value(), only_y.status().to_string());
  CHECK(values_of<int64_t>((*only_y)[0]) == Ints{1, 2, 3, 4});
  auto middle = run_with_outputs(x, bounds(DType::kInt64, Shape{6}, 6), {true, false, false, true});
  REQUIRE_MESSAGE(middle.has_value(), middle.status().to_string());
  CHECK(values_of<int64_t>((*middle)[0]) == Ints{1, 2, 3, 4});
  CHECK((*middle)[1].data.empty());
  CHECK((*middle)[2].data.empty());
  CHECK((*middle)[3].shape == Shape{4});
  CHECK(values_of<int64_t>((*middle)[3]) == Ints{2, 1, 2, 1});
}

// [2,1,1,3,4,3] has 4 unique values: Y planned at [2] is an error naming the output, actual [4]
// and the bound; so is counts planned at [3]. A Y bound of rank 2 without an axis is malformed.
TEST_CASE("Unique: bounds too small, and a malformed bound") {
  const TestInput x = f32(Shape{6}, kSample);
  auto small_y = run_single_node("Unique", {x}, {{DType::kFloat32, Shape{2}}});
  REQUIRE_FALSE(small_y.has_value());
  CHECK(small_y.status().code() == StatusCode::kOutOfRange);
  CHECK(small_y.status().message().find("node 'test_node' (Unique): output 'output_0': the actual "
                                        "shape [4] does not fit the planned bound [2]") !=
        std::string::npos);
  auto small_counts = run_single_node("Unique", {x},
                                      {{DType::kFloat32, Shape{6}},
                                       {DType::kInt64, Shape{6}},
                                       {DType::kInt64, Shape{6}},
                                       {DType::kInt64, Shape{3}}});
  REQUIRE_FALSE(small_counts.has_value());
  CHECK(small_counts.status().message().find("output 'output_3': the actual shape [4] does not "
                                             "fit the planned bound [3]") != std::string::npos);
  auto rank_two = run_single_node("Unique", {x}, {{DType::kFloat32, Shape{2, 3}}});
  REQUIRE_FALSE(rank_two.has_value());
  CHECK(rank_two.status().code() == StatusCode::kInvalidModel);
}

namespace {
// The reference: slices of x viewed as [outer, n, inner], grouped with std::map (lexicographic
// order of std::vector), in sorted or first-occurrence order.
struct Reference {
  std::vector<int32_t> y;
  Ints indices, inverse, counts;
};

Reference reference_unique(const std::vector<int32_t>& x, int64_t outer, int64_t n, int64_t inner,
                           bool sorted) {
  std::map<std::vector<int32_t>, Ints> groups;
  std::vector<std::vector<int32_t>> slices(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) slices[i].push_back(x[(o * n + i) * inner + j]);
    }
    groups[slices[i]].push_back(i);
  }
  std::vector<const std::vector<int32_t>*> order;
  for (const auto& group : groups) order.push_back(&group.first);
  if (!sorted) {
    std::sort(order.begin(), order.end(),
              [&](auto* a, auto* b) { return groups[*a].front() < groups[*b].front(); });
  }
  Reference result;
  const auto count = static_cast<int64_t>(order.size());
  result.y.resize(static_cast<size_t>(outer * count * inner));
  std::map<std::vector<int32_t>, int64_t> position;
  for (int64_t p = 0; p < count; ++p) {
    const std::vector<int32_t>& slice = *order[p];
    position[slice] = p;
    result.indices.push_back(groups[slice].front());
    result.counts.push_back(static_cast<int64_t>(groups[slice].size()));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j)
        result.y[(o * count + p) * inner + j] = slice[o * inner + j];
    }
  }
  for (int64_t i = 0; i < n; ++i) result.inverse.push_back(position[slices[i]]);
  return result;
}

}  // namespace

// 300 random int32 tensors [a,b,c] (dims 1-4, values 0-3, so slices repeat), for no axis and each
// axis, sorted and not: every output equals the reference's.
TEST_CASE("Unique: random tensors against a std::map reference") {
  uint32_t state = 12345;
  auto next = [&](uint32_t range) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int64_t>((state >> 8) % range);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const Shape shape{1 + next(4), 1 + next(4), 1 + next(4)};
    std::vector<int32_t> x(static_cast<size_t>(shape.element_count()));
    for (int32_t& v : x) v = static_cast<int32_t>(next(4));
    const int64_t axis = next(4) - 1;  // -1: no axis
    const bool sorted = next(2) == 1;
    int64_t outer = 1, n = shape.element_count(), inner = 1;
    Shape y_bound{n};
    if (axis >= 0) {
      n = shape[static_cast<int>(axis)];
      for (int a = 0; a < static_cast<int>(axis); ++a) outer *= shape[a];
      for (int a = static_cast<int>(axis) + 1; a < 3; ++a) inner *= shape[a];
      y_bound = shape;
    }
    auto result = run_single_node("Unique", {tensor(DType::kInt32, shape, x)},
                                  bounds(DType::kInt32, y_bound, n),
                                  unique_attributes(axis >= 0 ? axis : kNoAxis, sorted ? 1 : 0));
    REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
    const Reference expected = reference_unique(x, outer, n, inner, sorted);
    INFO("trial ", trial, " shape ", shape.to_string(), " axis ", axis, " sorted ", sorted);
    CHECK(values_of<int32_t>((*result)[0]) == expected.y);
    check_indices(*result, expected.indices, expected.inverse, expected.counts);
  }
}
