// QDQ int8 fusion (planner/optimize/fuse_qdq.cc): DequantizeLinear → Conv / MatMul [→ Relu] →
// QuantizeLinear becomes QLinearConv / QLinearMatMul only where the integer form is exact, and
// the fused graph computes what the unfused one does.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "onepool/onepool.h"
#include "planner/optimize/graph_edit.h"
#include "planner/optimize_test_util.h"

namespace onepool::testing {
namespace {

template <class T>
HostTensor host_tensor(DType dtype, Shape shape, const std::vector<T>& values) {
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  tensor.data.resize(values.size() * sizeof(T));
  std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
  return tensor;
}

// Builds QDQ graphs: typed values and weights on a GraphBuilder-like Graph.
struct QdqGraph {
  Graph graph;

  ValueId value(const std::string& name, DType dtype, Shape shape) {
    Value value;
    value.name = name;
    value.dtype = dtype;
    value.shape = std::move(shape);
    return graph.add_value(value);
  }
  ValueId input(const std::string& name, Shape shape) {
    const ValueId id = value(name, DType::kFloat32, std::move(shape));
    graph.values[static_cast<size_t>(id)].kind = ValueKind::kGraphInput;
    graph.inputs.push_back(id);
    return id;
  }
  ValueId weight(const std::string& name, HostTensor tensor) {
    const ValueId id = value(name, tensor.dtype, tensor.shape);
    Value& v = graph.values[static_cast<size_t>(id)];
    v.kind = ValueKind::kWeight;
    v.weight_index = static_cast<int32_t>(graph.weights.size());
    graph.weights.push_back(std::move(tensor));
    return id;
  }
  ValueId scale(const std::string& name, std::vector<float> values) {
    const auto n = static_cast<int64_t>(values.size());
    return weight(name, host_tensor(DType::kFloat32, n == 1 ? Shape{} : Shape{n}, values));
  }
  Node& node(const std::string& op, std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
    Node node;
    node.name = op + "_" + std::to_string(graph.nodes.size());
    node.op_type = op;
    node.inputs = std::move(inputs);
    node.outputs = std::move(outputs);
    graph.nodes.push_back(node);
    return graph.nodes.back();
  }
  // DequantizeLinear(q, scale, zero) → a new float value of `shape`.
  ValueId dequantize(const std::string& name, ValueId q, ValueId scale, ValueId zero,
                     int64_t axis = 1) {
    const Shape shape = graph.values[static_cast<size_t>(q)].shape;
    const ValueId out = value(name, DType::kFloat32, shape);
    Node& dq = node("DequantizeLinear", {q, scale, zero}, {out});
    if (axis != 1) dq.attributes.set("axis", graph_opt::int_attribute(axis));
    return out;
  }
  void output(ValueId id) {
    graph.values[static_cast<size_t>(id)].is_graph_output = true;
    graph.outputs.push_back(id);
  }
};

// The knobs of the Conv pattern that decide whether the fusion is exact.
struct ConvCase {
  float bias_scale_factor = 1.0f;  // bias scale = x_scale * w_scale * factor
  bool per_channel_x = false;      // x dequantized with one scale per channel (axis 1)
  uint8_t y_zero = 0;              // 0 lets the Relu go; anything else keeps it
};

// x [1,2,2,2] float → Q(uint8, 1/4, 0) → DQ → Conv(1x1, w int8 [2,2,1,1] per channel with
// scales [1/2, 1/4], bias int32 [2]) → Relu → Q(uint8, scale 1/2, y_zero) → output "y".
// Every scale is a power of two and the inputs multiples of 1/4, so the float graph is exact too.
QdqGraph conv_qdq(const ConvCase& knobs) {
  QdqGraph q;
  const ValueId x = q.input("x", {1, 2, 2, 2});
  const ValueId x_q = q.value("x_q", DType::kUInt8, {1, 2, 2, 2});
  const ValueId zero_u8 = q.weight("zero_u8", host_tensor<uint8_t>(DType::kUInt8, {}, {0}));
  const ValueId x_scale = q.scale("x_scale", {0.25f});
  q.node("QuantizeLinear", {x, x_scale, zero_u8}, {x_q});
  const ValueId x_dq =
      knobs.per_channel_x
          ? q.dequantize("x_dq", x_q, q.scale("x_scales", {0.25f, 0.25f}),
                         q.weight("x_zeros", host_tensor<uint8_t>(DType::kUInt8, {2}, {0, 0})))
          : q.dequantize("x_dq", x_q, x_scale, zero_u8);
  const ValueId w_q =
      q.weight("w_q", host_tensor<int8_t>(DType::kInt8, {2, 2, 1, 1}, {2, -1, 3, 1}));
  const ValueId w_dq =
      q.dequantize("w_dq", w_q, q.scale("w_scale", {0.5f, 0.25f}),
                   q.weight("w_zero", host_tensor<int8_t>(DType::kInt8, {2}, {0, 0})), 0);
  const float f = knobs.bias_scale_factor;
  const ValueId b_dq =
      q.dequantize("b_dq", q.weight("b_q", host_tensor<int32_t>(DType::kInt32, {2}, {8, -4})),
                   q.scale("b_scale", {0.25f * 0.5f * f, 0.25f * 0.25f * f}),
                   q.weight("b_zero", host_tensor<int32_t>(DType::kInt32, {2}, {0, 0})), 0);
  const ValueId c = q.value("c", DType::kFloat32, {1, 2, 2, 2});
  const ValueId r = q.value("r", DType::kFloat32, {1, 2, 2, 2});
  const ValueId y = q.value("y", DType::kUInt8, {1, 2, 2, 2});
  q.node("Conv", {x_dq, w_dq, b_dq}, {c}).attributes.set("kernel_shape", ints_attr({1, 1}));
  q.node("Relu", {c}, {r});
  const ValueId y_zero =
      q.weight("y_zero", host_tensor<uint8_t>(DType::kUInt8, {}, {knobs.y_zero}));
  q.node("QuantizeLinear", {r, q.scale("y_scale", {0.5f}), y_zero}, {y});
  q.output(y);
  q.graph.rebuild_edges();
  return q;
}

std::vector<std::string> op_types(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes) ops.push_back(node.op_type);
  return ops;
}

// The exact pattern: Q(x), then one QLinearConv reading x_q, x_scale, zero, w_q, w_scale,
// w_zero, y_scale, y_zero, b_q and writing "y"; the Relu, the output Q and the three
// DequantizeLinear nodes are gone.
TEST_CASE("DQ → Conv → Relu → Q with an int32 bias at x_scale * w_scale becomes QLinearConv") {
  QdqGraph q = conv_qdq({});
  const OptimizeReport report = optimize_ok(q.graph, OptimizeLevel::kAll);
  CHECK(report.fused_qdq == 1);
  REQUIRE(op_types(q.graph) == std::vector<std::string>{"QuantizeLinear", "QLinearConv"});
  const Node& conv = q.graph.nodes[1];
  REQUIRE(conv.inputs.size() == 9);
  const std::vector<std::string> expected = {"x_q",    "x_scale", "zero_u8", "w_q", "w_scale",
                                             "w_zero", "y_scale", "y_zero",  "b_q"};
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(name_of(q.graph, conv.inputs[i]) == expected[i]);
  }
  CHECK(name_of(q.graph, conv.outputs[0]) == "y");
  CHECK(conv.attributes.get_ints("kernel_shape") == std::vector<int64_t>{1, 1});
}

// Inexact cases stay float: a bias scale 1.0001 x (x_scale * w_scale) would need a rescale of
// the int32 bias; a per-channel x scale is not QLinearConv's; a Relu before a zero point of 128
// clamps at real 0, which uint8 saturation (at real -64) does not reproduce. Level basic never
// fuses.
TEST_CASE("the QDQ fusion leaves inexact Conv patterns alone") {
  for (const ConvCase& knobs :
       {ConvCase{1.0001f, false, 0}, ConvCase{1.0f, true, 0}, ConvCase{1.0f, false, 128}}) {
    QdqGraph q = conv_qdq(knobs);
    const OptimizeReport report = optimize_ok(q.graph, OptimizeLevel::kAll);
    CHECK(report.fused_qdq == 0);
    const std::vector<std::string> ops = op_types(q.graph);
    CHECK(std::count(ops.begin(), ops.end(), "Conv") == 1);
    CHECK(std::count(ops.begin(), ops.end(), "DequantizeLinear") == 3);
  }
  QdqGraph q = conv_qdq({});
  CHECK(optimize_ok(q.graph, OptimizeLevel::kBasic).fused_qdq == 0);
}

// a [3,4] uint8 (DQ scale 1/8, zero 8) × b [4,2] int8 constant (scale 1/2) → Q(int8, 1/4, 0):
// one QLinearMatMul. With the MatMul output also a graph output, nothing is fused.
TEST_CASE("DQ → MatMul → Q becomes QLinearMatMul unless the float product is read elsewhere") {
  for (bool float_output : {false, true}) {
    QdqGraph q;
    const ValueId a_q = q.value("a_q", DType::kUInt8, {3, 4});
    q.graph.values[static_cast<size_t>(a_q)].kind = ValueKind::kGraphInput;
    q.graph.inputs.push_back(a_q);
    const ValueId a =
        q.dequantize("a", a_q, q.scale("a_scale", {0.125f}),
                     q.weight("a_zero", host_tensor<uint8_t>(DType::kUInt8, {}, {8})));
    const ValueId b = q.dequantize(
        "b",
        q.weight("b_q", host_tensor<int8_t>(DType::kInt8, {4, 2}, {1, 2, 3, 4, -1, -2, -3, -4})),
        q.scale("b_scale", {0.5f}), kNoValue);
    const ValueId m = q.value("m", DType::kFloat32, {3, 2});
    const ValueId y = q.value("y", DType::kInt8, {3, 2});
    q.node("MatMul", {a, b}, {m});
    q.node("QuantizeLinear",
           {m, q.scale("y_scale", {0.25f}),
            q.weight("y_zero", host_tensor<int8_t>(DType::kInt8, {}, {0}))},
           {y});
    q.output(y);
    if (float_output) q.output(m);
    q.graph.rebuild_edges();
    const OptimizeReport report = optimize_ok(q.graph, OptimizeLevel::kAll);
    CHECK(report.fused_qdq == (float_output ? 0 : 1));
    if (float_output) continue;
    REQUIRE(op_types(q.graph) == std::vector<std::string>{"QLinearMatMul"});
    CHECK(name_of(q.graph, q.graph.nodes[0].inputs[0]) == "a_q");
    CHECK(q.graph.nodes[0].inputs[5] == kNoValue);  // b's omitted zero point stays omitted
  }
}

std::vector<uint8_t> run_uint8(const Graph& graph, const char* optimize,
                               const std::vector<float>& x) {
  LoadOptions options;
  options.optimize = optimize;
  auto model = Model::from_graph(graph, options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  auto session = Session::create(*model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<uint8_t> y(static_cast<size_t>((*model)->outputs()[0].shape.element_count()));
  const TensorView in{const_cast<float*>(x.data()), DType::kFloat32, Shape{1, 2, 2, 2}, {}};
  const TensorView out{y.data(), DType::kUInt8, (*model)->outputs()[0].shape, {}};
  REQUIRE((*session)->run({&in, 1}, {&out, 1}).is_ok());
  return y;
}

// Through Model::from_graph and a Session, fused (all) and unfused (none) give the same bytes on
// the power-of-two Conv graph: x = [1, 0.5, 0.25, 2, 0.75, 3, 1.5, 0] per channel plane gives
// channel 0 = relu(0.5 * (2 * x0 - x1) + 1) / 0.5, channel 1 = relu(0.25 * (3 * x0 + x1) - 0.25).
TEST_CASE("fused and unfused QDQ Conv give the same uint8 output") {
  const QdqGraph q = conv_qdq({});
  const std::vector<float> x = {1.0f, 0.5f, 0.25f, 2.0f, 0.75f, 3.0f, 1.5f, 0.0f};
  const std::vector<uint8_t> unfused = run_uint8(q.graph, "none", x);
  const std::vector<uint8_t> fused = run_uint8(q.graph, "all", x);
  CHECK(fused == unfused);
  // Channel 0, pixel 0: (2 * 1 - 0.75) * 0.5 + 1 = 1.625 → 1.625 / 0.5 = 3.25 → 3.
  CHECK(fused[0] == 3);
}

// The generated cnn_qdq_int8 (3 QDQ Convs + the classifier MatMul, 4 fusions): fused and unfused
// agree within one uint8 step everywhere, and on almost every element exactly (the float graph
// rounds every product, so a value within ~1e-6 of a half-way point may round the other way;
// 6 of 81,920 residual elements over 40 random inputs when measured).
TEST_CASE("cnn_qdq_int8: 4 fusions, fused and unfused within one step") {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/cnn_qdq_int8.onnx";
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing generated model ", path);
  std::vector<std::vector<std::vector<std::byte>>> results;
  for (const char* level : {"none", "all"}) {
    LoadOptions options;
    options.optimize = level;
    auto model = Model::load(path, options);
    REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
    if (std::string(level) == "all") {
      CHECK((*model)->optimization_summary().find("fused 4 QDQ") != std::string::npos);
    }
    auto session = Session::create(*model, SessionOptions{});
    REQUIRE(session.has_value());
    std::vector<float> x(3 * 32 * 32);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 256) / 256.0f;
    const TensorView in{x.data(), DType::kFloat32, Shape{1, 3, 32, 32}, {}};
    std::vector<std::vector<std::byte>> storage;
    std::vector<TensorView> outs;
    for (const TensorInfo& info : (*model)->outputs()) {
      storage.emplace_back(static_cast<size_t>(info.shape.element_count()) *
                           dtype_size(info.dtype));
    }
    for (size_t o = 0; o < storage.size(); ++o) {
      const TensorInfo& info = (*model)->outputs()[o];
      outs.push_back({storage[o].data(), info.dtype, info.shape, {}});
    }
    REQUIRE((*session)->run({&in, 1}, outs).is_ok());
    results.push_back(std::move(storage));
  }
  // Output 1 is the residual block's uint8 [1,32,8,8].
  const auto& unfused = results[0][1];
  const auto& fused = results[1][1];
  REQUIRE(unfused.size() == 2048);
  int differing = 0;
  for (size_t i = 0; i < fused.size(); ++i) {
    const int d = std::abs(static_cast<int>(fused[i]) - static_cast<int>(unfused[i]));
    CHECK(d <= 1);
    differing += d != 0;
  }
  CHECK(differing <= 4);
}

}  // namespace
}  // namespace onepool::testing
