// A 1x1 Conv and the depthwise Conv reading it, fused into one PointwiseDepthwiseConv
// (planner/optimize/fuse_pointwise_depthwise.cc, runtime/cpu/kernels/conv_pointwise_depthwise.cc):
// which graphs fuse, and that the fused node gives the unfused nodes' bits at 1 to 3 threads, on
// the AVX-512 and AVX2 kernels, NaN and Inf included, at stride 1 and 2, 3x3 and 5x5, with and
// without biases, batch 2; the portable kernels (whose unfused 1x1 runs on OpenBLAS) agree within
// rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/core/onepool_ops.h"

namespace onepool::testing {
namespace {

struct ChainCase {
  const char* name;
  int64_t batch, channels, expanded, height, width, kernel, stride, pad;
  bool pointwise_bias = true, depthwise_bias = true;
  int64_t projected = 0;  // > 0: a 1x1 projection to this many channels follows (with a bias)
  bool residual = false;  // the projection adds x (stride 1, projected == channels) and a Relu
  bool expand = true;     // false: the depthwise Conv reads x (expanded == channels)
};

int64_t out_dim(const ChainCase& c, int64_t size) {
  return (size + 2 * c.pad - c.kernel) / c.stride + 1;
}

std::vector<float> wave(size_t count, float scale, int salt = 0) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = scale * static_cast<float>(static_cast<int>((i * 37 + 11 + salt) % 29) - 14);
  }
  return values;
}

Shape depthwise_shape(const ChainCase& c) {
  return {c.batch, c.expanded, out_dim(c, c.height), out_dim(c, c.width)};
}

Shape y_shape(const ChainCase& c) {
  Shape shape = depthwise_shape(c);
  if (c.projected > 0) shape[1] = c.projected;
  return shape;
}

// y = Conv 1x1 (dw + B3) [+ x, Relu].
ValueId add_projection(GraphBuilder& b, const ChainCase& c, ValueId x, ValueId dw) {
  const auto p = static_cast<size_t>(c.projected);
  const ValueId projected = b.value("projected", y_shape(c));
  b.node("Conv",
         {dw,
          b.weight("w3", {c.projected, c.expanded, 1, 1},
                   wave(p * static_cast<size_t>(c.expanded), 0.02f, 9)),
          b.weight("b3", {c.projected}, wave(p, 0.03f, 11))},
         {projected});
  if (!c.residual) return projected;
  const ValueId sum = b.value("sum", y_shape(c));
  b.node("Add", {projected, x}, {sum});
  const ValueId y = b.value("y", y_shape(c));
  b.node("Relu", {sum}, {y});
  return y;
}

// x -> Conv 1x1 (+ B1) -> Relu -> depthwise Conv (+ B2) -> LeakyRelu [-> projection] -> y.
Graph build(const ChainCase& c) {
  GraphBuilder b;
  const ValueId x = b.input("x", {c.batch, c.channels, c.height, c.width});
  const auto m = static_cast<size_t>(c.expanded);
  ValueId activated = x;
  if (c.expand) {
    std::vector<ValueId> pointwise_inputs = {
        x, b.weight("w1", {c.expanded, c.channels, 1, 1},
                    wave(m * static_cast<size_t>(c.channels), 0.03f))};
    if (c.pointwise_bias) {
      pointwise_inputs.push_back(b.weight("b1", {c.expanded}, wave(m, 0.05f, 3)));
    }
    const Shape expanded_shape{c.batch, c.expanded, c.height, c.width};
    const ValueId expanded = b.value("expanded", expanded_shape);
    b.node("Conv", pointwise_inputs, {expanded});
    activated = b.value("activated", expanded_shape);
    b.node("Relu", {expanded}, {activated});
  }
  std::vector<ValueId> depthwise_inputs = {
      activated, b.weight("w2", {c.expanded, 1, c.kernel, c.kernel},
                          wave(m * static_cast<size_t>(c.kernel * c.kernel), 0.02f, 5))};
  if (c.depthwise_bias) depthwise_inputs.push_back(b.weight("b2", {c.expanded}, wave(m, 0.04f, 7)));
  const ValueId conv = b.value("conv", depthwise_shape(c));
  Node& depthwise = b.node("Conv", depthwise_inputs, {conv});
  Attribute group;
  group.i = c.expanded;
  depthwise.attributes.set("group", group);
  depthwise.attributes.set("strides", ints_attr({c.stride, c.stride}));
  depthwise.attributes.set("pads", ints_attr({c.pad, c.pad, c.pad, c.pad}));
  const ValueId dw = b.value(c.projected > 0 ? "dw" : "y", depthwise_shape(c));
  Node& leaky = b.node("LeakyRelu", {conv}, {dw});
  leaky.attributes.set("alpha", float_attr(0.125f));
  b.output(c.projected > 0 ? add_projection(b, c, x, dw) : dw);
  return b.finish();
}

std::shared_ptr<const Model> load(Graph graph, const char* level) {
  LoadOptions options;
  options.optimize = level;
  auto model = Model::from_graph(std::move(graph), options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

bool is_fused(const Node& node) {
  return node.domain == kOnePoolDomain && node.op_type == kPointwiseDepthwiseOp;
}

struct Run {
  std::vector<float> y;
  std::string implementation;  // of the last node
  double flops = 0;            // of the last node
  size_t pool_bytes = 0;
};

Run run(const std::shared_ptr<const Model>& model, const ChainCase& c, int threads,
        const std::vector<float>& input, CpuIsa isa) {
  SessionOptions options;
  options.threads = threads;
  options.cpu_isa = isa;
  options.profile = true;
  auto session = Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  Run result;
  const Shape out = y_shape(c);
  result.y.assign(static_cast<size_t>(out.element_count()), -1.0f);
  TensorView in{const_cast<float*>(input.data()), DType::kFloat32,
                Shape{c.batch, c.channels, c.height, c.width}, Device{}};
  TensorView y{result.y.data(), DType::kFloat32, out, Device{}};
  const Status status = (*session)->run({&in, 1}, {&y, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  result.implementation = (*session)->profile().nodes.back().implementation;
  result.flops = (*session)->profile().nodes.back().flops;
  result.pool_bytes = (*session)->plan().pool_bytes;
  return result;
}

// Multiply-adds (x2) of the fused node: expansion, depthwise window, projection.
double flops(const ChainCase& c) {
  const Shape y = depthwise_shape(c);
  const double out_positions = static_cast<double>(c.batch * y[2] * y[3]);
  double total = 2.0 * out_positions * static_cast<double>(c.expanded * c.kernel * c.kernel);
  if (c.expand) {
    total += 2.0 * static_cast<double>(c.batch * c.height * c.width * c.channels * c.expanded);
  }
  if (c.projected > 0) total += 2.0 * out_positions * static_cast<double>(c.expanded * c.projected);
  return total;
}

bool same_bits_or_both_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

int mismatches(const std::vector<float>& actual, const std::vector<float>& expected, bool exact) {
  int count = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const bool same =
        exact ? same_bits_or_both_nan(actual[i], expected[i])
              : (std::isnan(actual[i]) && std::isnan(expected[i])) || actual[i] == expected[i] ||
                    std::fabs(actual[i] - expected[i]) <= 1e-5f + 1e-5f * std::fabs(expected[i]);
    count += same ? 0 : 1;
  }
  return count;
}

}  // namespace

TEST_CASE("a fused 1x1 + depthwise Conv gives the unfused nodes' bits") {
  const ChainCase cases[] = {
      {"3x3 stride 2 (MobileNetV2's expansion at 112x112)", 1, 4, 20, 101, 100, 3, 2, 1},
      {"3x3 stride 1, no biases", 1, 6, 36, 23, 60, 3, 1, 1, false, false},
      {"5x5 stride 1, a band per thread", 1, 3, 17, 9, 52, 5, 1, 2},
      {"5x5 stride 2, no pointwise bias", 1, 5, 16, 30, 104, 5, 2, 2, false, true},
      {"3x3 stride 1 without padding, batch 2", 2, 8, 24, 40, 56, 3, 1, 0},
      {"3x3 stride 2 with a projection", 1, 4, 20, 101, 100, 3, 2, 1, true, true, 7},
      {"3x3 stride 1 with a projection and a residual, batch 2", 2, 6, 36, 23, 60, 3, 1, 1, true,
       false, 6, true},
      {"3x3 stride 1, a projection, no expansion", 1, 32, 32, 30, 112, 3, 1, 1, true, true, 16,
       false, false},
      {"5x5 stride 2, a projection and no expansion, batch 2", 2, 12, 12, 21, 100, 5, 2, 2, true,
       false, 12, false, false},
  };
  for (const ChainCase& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const auto plain = load(build(c), "basic");
    const auto fused = load(build(c), "all");
    REQUIRE(fused->graph().nodes.size() == 1);
    REQUIRE(is_fused(fused->graph().nodes[0]));
    std::vector<float> input =
        wave(static_cast<size_t>(c.batch * c.channels * c.height * c.width), 0.1f);
    std::vector<float> special = input;
    special[5] = std::numeric_limits<float>::quiet_NaN();
    special[special.size() / 2] = std::numeric_limits<float>::infinity();
    special[special.size() - 7] = -std::numeric_limits<float>::infinity();
    for (const auto& x : {input, special}) {
      for (CpuIsa isa : {CpuIsa::kAuto, CpuIsa::kAvx2, CpuIsa::kPortable}) {
        CAPTURE(cpu_isa_name(isa));
        const Run expected = run(plain, c, 1, x, isa);
        for (int threads : {1, 2, 3}) {
          CAPTURE(threads);
          const Run actual = run(fused, c, threads, x, isa);
          const std::string path = std::string(c.expand ? "1x1 + " : "") + "depthwise" +
                                   (c.projected > 0 ? " + 1x1" : "") + " fused";
          CHECK_MESSAGE(actual.implementation.starts_with(path), actual.implementation);
          CHECK(actual.flops == doctest::Approx(flops(c)));
          // The expanded tensor (808 KB in the first case) is not in the plan; the fused node's
          // buffer (384 KB a thread, at most the whole map on the others) is.
          if (threads == 1 && c.height == 101) CHECK(actual.pool_bytes < expected.pool_bytes);
          CHECK(mismatches(actual.y, expected.y, isa != CpuIsa::kPortable) == 0);
        }
      }
    }
  }
}

TEST_CASE("1x1 + depthwise fusion leaves shared outputs, narrow maps and other windows alone") {
  const ChainCase base{"base", 1, 4, 16, 20, 120, 3, 1, 1};
  SUBCASE("the expanded tensor has a second reader") {
    Graph graph = build(base);
    const ValueId activated = graph.nodes[1].outputs[0];
    graph.outputs.push_back(activated);
    graph.values[static_cast<size_t>(activated)].is_graph_output = true;
    graph.rebuild_edges();
    const auto model = load(std::move(graph), "all");
    for (const Node& node : model->graph().nodes) CHECK_FALSE(is_fused(node));
  }
  SUBCASE("a projection with a stride, or whose residual comes later, stays a Conv") {
    ChainCase projected = base;
    projected.projected = 4;
    projected.residual = true;
    for (const char* change : {"none", "strides", "late residual"}) {
      CAPTURE(change);
      Graph graph = build(projected);
      Node& projection = graph.nodes[4];
      REQUIRE(projection.op_type == "Conv");
      if (std::string(change) == "strides") {
        projection.attributes.set("strides", ints_attr({2, 2}));
        for (size_t n = 4; n < graph.nodes.size(); ++n) {
          graph.values[static_cast<size_t>(graph.nodes[n].outputs[0])].shape = {1, 4, 10, 60};
        }
        graph.nodes[5].inputs[1] = graph.nodes[4].outputs[0];  // Add(projected, projected)
      } else if (std::string(change) == "late residual") {
        // The skip is x through an Identity-free Relu computed after the depthwise node.
        const ValueId late = graph.add_value(graph.values[0]);
        graph.values[static_cast<size_t>(late)].name = "late";
        graph.values[static_cast<size_t>(late)].kind = ValueKind::kActivation;
        Node relu;
        relu.name = "late_relu";
        relu.op_type = "Relu";
        relu.inputs = {graph.inputs[0]};
        relu.outputs = {late};
        graph.nodes.insert(graph.nodes.begin() + 4, relu);
        graph.nodes[6].inputs[1] = late;
      }
      graph.rebuild_edges();
      const auto model = load(std::move(graph), "all");
      const Node& first = model->graph().nodes[0];
      REQUIRE(is_fused(first));
      CHECK(first.inputs.size() == (std::string(change) == "none" ? 8 : 5));
    }
  }
  SUBCASE("an infinite depthwise weight or a -0 depthwise bias (paths differ on the padding)") {
    for (const char* name : {"w2", "b2"}) {
      CAPTURE(name);
      Graph graph = build(base);
      const Value& value = graph.values[static_cast<size_t>(graph.find_value(name))];
      float* data = graph.weights[static_cast<size_t>(value.weight_index)].as_mutable<float>();
      data[1] = std::string(name) == "w2" ? std::numeric_limits<float>::infinity() : -0.0f;
      const auto model = load(std::move(graph), "all");
      for (const Node& node : model->graph().nodes) CHECK_FALSE(is_fused(node));
    }
  }
  SUBCASE("depthwise rows of 48 or fewer (the channels-in-vector kernel's)") {
    ChainCase narrow = base;
    narrow.width = 48;
    const auto model = load(build(narrow), "all");
    CHECK(model->graph().nodes.size() == 2);
  }
  SUBCASE("a strided or padded first Conv, or auto_pad on the depthwise one") {
    for (const char* change : {"strides", "pads", "auto_pad"}) {
      CAPTURE(change);
      Graph graph = build(base);
      Node& pointwise = graph.nodes[0];
      Node& depthwise = graph.nodes[2];
      if (std::string(change) == "strides") {
        pointwise.attributes.set("strides", ints_attr({2, 2}));
        graph.values[static_cast<size_t>(pointwise.outputs[0])].shape = {1, 16, 10, 60};
        graph.values[static_cast<size_t>(graph.nodes[1].outputs[0])].shape = {1, 16, 10, 60};
        graph.values[static_cast<size_t>(depthwise.outputs[0])].shape = {1, 16, 10, 60};
        graph.values[static_cast<size_t>(graph.nodes[3].outputs[0])].shape = {1, 16, 10, 60};
      } else if (std::string(change) == "pads") {
        pointwise.attributes.set("pads", ints_attr({1, 1, 1, 1}));
        for (size_t n = 0; n < 4; ++n) {
          graph.values[static_cast<size_t>(graph.nodes[n].outputs[0])].shape = {1, 16, 22, 122};
        }
        depthwise.attributes.set("pads", ints_attr({1, 1, 1, 1}));
      } else {
        Attribute same;
        same.kind = Attribute::Kind::kString;
        same.s = "SAME_UPPER";
        depthwise.attributes.set("auto_pad", same);
        depthwise.attributes.set("pads", ints_attr({}));
      }
      graph.rebuild_edges();
      const auto model = load(std::move(graph), "all");
      for (const Node& node : model->graph().nodes) CHECK_FALSE(is_fused(node));
    }
  }
}

}  // namespace onepool::testing
