// Softmax, LogSoftmax and Hardmax CPU kernels: opset-13 single-axis semantics (last axis and a
// strided middle axis), the pre-13 flatten-at-axis semantics, large inputs, Inf rows, and cases
// converted from the ONNX node tests (test_softmax_*, test_logsoftmax_*, test_hardmax_example).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

void check_close(const std::vector<float>& actual, const std::vector<float>& expected,
                 double epsilon = 1e-5) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(epsilon));
  }
}

// run_single_node fixes opset 17; this builds the same one-node graph with any opset (for the
// opset < 13 flattening semantics). One float32 input, one float32 output of the same shape.
Expected<std::vector<float>> run_with_opset(const std::string& op, Shape shape,
                                            std::vector<float> input, int64_t opset,
                                            const AttributeMap& attributes) {
  Graph graph;
  graph.opset = opset;
  Value x;
  x.name = "x";
  x.dtype = DType::kFloat32;
  x.shape = shape;
  x.kind = ValueKind::kGraphInput;
  Value y = x;
  y.name = "y";
  y.kind = ValueKind::kActivation;
  y.is_graph_output = true;
  Node node;
  node.name = "test_node";
  node.op_type = op;
  node.attributes = attributes;
  node.inputs.push_back(graph.add_value(x));
  node.outputs.push_back(graph.add_value(y));
  graph.nodes.push_back(node);
  graph.rebuild_edges();
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  const cpu::KernelFactory factory = registry.find(op);
  if (factory == nullptr) return make_status(StatusCode::kUnsupported, "no kernel for ", op);
  ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared,
                           factory(cpu::NodeContext(graph, graph.nodes[0])));
  std::vector<float> output(input.size(), std::nanf(""));
  const TensorView in_view{input.data(), DType::kFloat32, shape, Device{}};
  const TensorView out_view{output.data(), DType::kFloat32, shape, Device{}};
  std::vector<std::byte> workspace(prepared.workspace_bytes + 1);
  cpu::ThreadPool pool(2);
  cpu::RunContext context;
  context.inputs = std::span<const TensorView>(&in_view, 1);
  context.outputs = std::span<const TensorView>(&out_view, 1);
  context.workspace = workspace.data();
  context.workspace_bytes = prepared.workspace_bytes;
  context.threads = &pool;
  ONEPOOL_RETURN_IF_ERROR(prepared.kernel->run(context));
  return output;
}

std::vector<float> run_f32(const std::string& op, Shape shape, const std::vector<float>& input,
                           int64_t opset, const AttributeMap& attributes = {}) {
  auto result = run_with_opset(op, shape, input, opset, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return *result;
}

AttributeMap axis_attribute(int64_t axis) {
  AttributeMap attributes;
  attributes.set("axis", int_attr(axis));
  return attributes;
}

// The [3,4,5] input of the ONNX tests test_softmax_axis_1 and test_logsoftmax_axis_1.
const std::vector<float> kInput345 = {
    1.7640524f,  0.4001572f,  0.978738f,   2.2408931f,  1.867558f,   0.9772779f,   0.95008844f,
    0.1513572f,  0.10321885f, 0.41059852f, 0.14404356f, 1.4542735f,  0.7610377f,   0.121675014f,
    0.44386324f, 0.33367434f, 1.4940791f,  0.20515826f, 0.3130677f,  0.85409576f,  2.5529897f,
    0.6536186f,  0.8644362f,  0.742165f,   2.2697546f,  1.4543657f,  0.045758516f, 0.18718386f,
    1.5327792f,  1.4693588f,  0.15494743f, 0.37816253f, 0.88778573f, 1.9807965f,   0.34791216f,
    0.15634897f, 1.2302907f,  1.2023798f,  0.3873268f,  0.30230275f, 1.048553f,    1.420018f,
    1.7062702f,  1.9507754f,  0.5096522f,  0.4380743f,  1.2527953f,  0.7774904f,   1.6138978f,
    0.21274029f, 0.89546657f, 0.3869025f,  0.51080513f, 1.1806322f,  0.028182229f, 0.42833188f,
    0.06651722f, 0.3024719f,  0.6343221f,  0.36274117f};

// test_softmax_axis_1 (opset 13): softmax along the middle axis (stride 5) of [3,4,5].
TEST_CASE("Softmax onnx test_softmax_axis_1 (opset 13, strided axis)") {
  const std::vector<float> expected = {
      0.5284221f,   0.116434306f, 0.36997053f,  0.72279483f, 0.54444695f, 0.24059641f, 0.20179623f,
      0.16174848f,  0.08523832f,  0.12682536f,  0.10457312f, 0.33410105f, 0.2975919f,  0.0868261f,
      0.13111512f,  0.12640832f,  0.34766838f,  0.17068906f, 0.10514076f, 0.19761252f, 0.65995777f,
      0.24486724f,  0.2542138f,   0.13592635f,  0.576269f,   0.21998335f, 0.13333386f, 0.12914337f,
      0.29968366f,  0.25883183f,  0.059987348f, 0.18590954f, 0.2602194f,  0.46906656f, 0.08432952f,
      0.060071476f, 0.43588933f,  0.35642338f,  0.09532338f, 0.0805697f,  0.34025502f, 0.40646407f,
      0.514599f,    0.40899333f,  0.31013957f,  0.18478939f, 0.3438732f,  0.20328483f, 0.2920197f,
      0.23046765f,  0.29195774f,  0.14465912f,  0.15569872f, 0.18934216f, 0.19162734f, 0.18299784f,
      0.10500362f,  0.12641747f,  0.10964476f,  0.26776546f};
  check_close(run_f32("Softmax", {3, 4, 5}, kInput345, 13, axis_attribute(1)), expected);
}

// test_logsoftmax_axis_1 (opset 13), first 10 of 60 values checked through the whole output:
// log of the softmax above, e.g. log(0.5284221) = -0.6378599.
TEST_CASE("LogSoftmax onnx test_logsoftmax_axis_1 (opset 13)") {
  const auto output = run_f32("LogSoftmax", {3, 4, 5}, kInput345, 13, axis_attribute(1));
  check_close(std::vector<float>(output.begin(), output.begin() + 10),
              {-0.6378599f, -2.150428f, -0.99433196f, -0.32462987f, -0.6079847f, -1.4246345f,
               -1.6004968f, -1.8217127f, -2.462304f, -2.0649443f});
  CHECK(output[59] == doctest::Approx(-1.3176439f));
}

// test_softmax_example, test_logsoftmax_example_1, and the default axis (-1) at opset 17 through
// run_single_node: [-1,0,1] -> [0.09003057,0.24472846,0.66524094] /
// [-2.4076061,-1.407606,-0.407606].
TEST_CASE("Softmax and LogSoftmax onnx examples (last axis)") {
  auto softmax = run_single_node("Softmax", {f32({1, 3}, {-1, 0, 1})}, {{DType::kFloat32, {1, 3}}});
  REQUIRE(softmax.has_value());
  check_close(values_of<float>((*softmax)[0]), {0.09003057f, 0.24472846f, 0.66524094f});
  check_close(run_f32("LogSoftmax", {1, 3}, {-1, 0, 1}, 13), {-2.4076061f, -1.407606f, -0.407606f});
}

// test_softmax_large_number: rows [0,1,2,3] and [10000..10003] give the same, finite result
// [0.032058604,0.08714432,0.2368828,0.6439143] thanks to the max subtraction.
TEST_CASE("Softmax large numbers stay finite") {
  const std::vector<float> row = {0.032058604f, 0.08714432f, 0.2368828f, 0.6439143f};
  std::vector<float> expected = row;
  expected.insert(expected.end(), row.begin(), row.end());
  check_close(run_f32("Softmax", {2, 4}, {0, 1, 2, 3, 10000, 10001, 10002, 10003}, 13), expected);
}

// Opset 11 flattens at axis (default 1): [2,2,3] holding i/4 becomes [2,6], so each batch row of
// 6 values sums to 1: [0.0815769,...,0.2847314]. Opset 13 with axis 1 is a different result:
// pairs (x, x+0.75) along axis 1 -> [0.3208213 x3, 0.6791787 x3] per batch.
TEST_CASE("Softmax flattening semantics before opset 13") {
  std::vector<float> input(12);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i) / 4.0f;
  const std::vector<float> flat_row = {0.0815769f,  0.10474682f, 0.13449758f,
                                       0.17269832f, 0.22174901f, 0.2847314f};
  std::vector<float> flat = flat_row;
  flat.insert(flat.end(), flat_row.begin(), flat_row.end());
  check_close(run_f32("Softmax", {2, 2, 3}, input, 11), flat);
  check_close(run_f32("Softmax", {2, 2, 3}, input, 11, axis_attribute(1)), flat);
  const std::vector<float> log_row = {-2.506209f, -2.256209f, -2.006209f,
                                      -1.756209f, -1.506209f, -1.256209f};
  std::vector<float> log_flat = log_row;
  log_flat.insert(log_flat.end(), log_row.begin(), log_row.end());
  check_close(run_f32("LogSoftmax", {2, 2, 3}, input, 11), log_flat);
  const float lo = 0.3208213f;
  const float hi = 0.6791787f;
  check_close(run_f32("Softmax", {2, 2, 3}, input, 13, axis_attribute(1)),
              {lo, lo, lo, hi, hi, hi, lo, lo, lo, hi, hi, hi});
}

// test_hardmax_example: one-hot of each row's max. Ties pick the first: [[1,1],[0,2]] -> [1,0,0,1].
// Opset 11 Hardmax with axis 0 on [2,2] flattens to one row of 4: only the 2 is set.
TEST_CASE("Hardmax") {
  check_close(run_f32("Hardmax", {4, 4}, {3, 0, 1, 2, 2, 5, 1, 0, 0, 1, 3, 2, 0, 1, 2, 3}, 13),
              {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  check_close(run_f32("Hardmax", {2, 2}, {1, 1, 0, 2}, 13), {1, 0, 0, 1});
  check_close(run_f32("Hardmax", {2, 2}, {1, 1, 0, 2}, 11, axis_attribute(0)), {0, 0, 0, 1});
}

// Inf handling follows the plain formula: a row with +Inf gives NaN (inf - inf); a row with one
// -Inf gives 0 there and normal values elsewhere: [-inf,0,0] -> [0,0.5,0.5].
TEST_CASE("Softmax with infinities") {
  const float inf = std::numeric_limits<float>::infinity();
  const auto output = run_f32("Softmax", {2, 3}, {inf, 0, 0, -inf, 0, 0}, 13);
  CHECK(std::isnan(output[0]));
  check_close({output[3], output[4], output[5]}, {0.0f, 0.5f, 0.5f});
}

// 256 rows of 1000 on 2 threads, along the last axis and along axis 0 (stride 1000): every row
// sums to 1, and the largest input of a row gets the largest probability.
TEST_CASE("Softmax larger inputs sum to one") {
  std::vector<float> input(256 * 1000);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<float>((i * 7919) % 1000) / 100.0f;
  const auto last = run_f32("Softmax", {256, 1000}, input, 13);
  for (int r = 0; r < 256; r += 51) {
    double sum = 0.0;
    for (int c = 0; c < 1000; ++c) sum += last[static_cast<size_t>(r * 1000 + c)];
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
  }
  const auto first = run_f32("Softmax", {256, 1000}, input, 13, axis_attribute(0));
  for (int c = 0; c < 1000; c += 199) {
    double sum = 0.0;
    for (int r = 0; r < 256; ++r) sum += first[static_cast<size_t>(r * 1000 + c)];
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-4));
  }
}

// Contiguous float rows run in 16 lanes plus a tail: rows of every length around the lane count
// match a double-precision softmax, with the row's max in the tail, in a lane and first.
TEST_CASE("Softmax contiguous rows of every length match double precision") {
  for (const int n : {1, 2, 15, 16, 17, 31, 33, 37, 128, 131}) {
    for (const int peak : {0, n / 2, n - 1}) {
      INFO("row length " << n << ", max at " << peak);
      std::vector<float> row(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i)
        row[static_cast<size_t>(i)] = static_cast<float>((i * 37) % 11) - 5.0f;
      row[static_cast<size_t>(peak)] = 9.5f;
      double sum = 0.0;
      for (const float v : row) sum += std::exp(static_cast<double>(v) - 9.5);
      const auto output = run_f32("Softmax", {1, n}, row, 13);
      for (int i = 0; i < n; ++i) {
        const double expected =
            std::exp(static_cast<double>(row[static_cast<size_t>(i)]) - 9.5) / sum;
        CHECK(output[static_cast<size_t>(i)] == doctest::Approx(expected).epsilon(2e-6));
      }
    }
  }
}

// NaN or +Inf anywhere in a long contiguous row (in a lane or in the tail) makes the whole row NaN;
// -Inf there gives 0 at that element and a normal softmax elsewhere.
TEST_CASE("Softmax contiguous rows with NaN and infinities") {
  const float inf = std::numeric_limits<float>::infinity();
  for (const int position : {0, 5, 20, 36}) {
    INFO("special value at " << position);
    for (const float special : {std::numeric_limits<float>::quiet_NaN(), inf}) {
      std::vector<float> row(37, 1.0f);
      row[static_cast<size_t>(position)] = special;
      for (const float v : run_f32("Softmax", {1, 37}, row, 13)) CHECK(std::isnan(v));
    }
    std::vector<float> row(37, 1.0f);
    row[static_cast<size_t>(position)] = -inf;
    const auto output = run_f32("Softmax", {1, 37}, row, 13);
    for (int i = 0; i < 37; ++i) {
      CHECK(output[static_cast<size_t>(i)] == doctest::Approx(i == position ? 0.0 : 1.0 / 36.0));
    }
  }
}

// Errors: axis 3 on a rank-3 input names the axis; an int64 input is unsupported.
TEST_CASE("Softmax errors") {
  auto axis = run_with_opset("Softmax", {1, 2, 2}, {1, 2, 3, 4}, 13, axis_attribute(3));
  REQUIRE_FALSE(axis.has_value());
  CHECK(axis.status().message().find("axis 3 is out of range") != std::string::npos);
  auto dtype = run_single_node("Softmax", {i64({2}, {1, 2})}, {{DType::kInt64, {2}}});
  REQUIRE_FALSE(dtype.has_value());
  CHECK(dtype.status().code() == StatusCode::kUnsupported);
}

}  // namespace
}  // namespace onepool::testing
