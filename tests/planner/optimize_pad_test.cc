// Graph optimizer: a zero-padding Pad read only by a Conv merges into the Conv's pads
// (planner/optimize/fuse_pad.cc), and every Pad that would change the result stays.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "planner/optimize_test_util.h"

namespace onepool::testing {
namespace {

Attribute string_attr(std::string value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kString;
  attribute.s = std::move(value);
  return attribute;
}

// x [1,2,5,5] -> Pad -> p -> Conv (W [3,2,3,3], its own pads) -> y.
struct PadConv {
  std::vector<int64_t> pad_pads{0, 0, 1, 2, 0, 0, 0, 1};  // N, C, H, W begins, then ends
  std::vector<int64_t> conv_pads{0, 1, 1, 0};             // H, W begins, then ends
  std::string mode = "constant";
  float value = 0.0f;
  bool second_reader = false;
  std::string auto_pad = "NOTSET";
};

Graph pad_conv_graph(const PadConv& c) {
  GraphBuilder b(13);
  const ValueId x = b.input("x", {1, 2, 5, 5});
  const Shape padded{1 + c.pad_pads[0] + c.pad_pads[4], 2 + c.pad_pads[1] + c.pad_pads[5],
                     5 + c.pad_pads[2] + c.pad_pads[6], 5 + c.pad_pads[3] + c.pad_pads[7]};
  const ValueId p = b.value("p", padded);
  const ValueId y = b.value("y", {1, 3, 1, 1});  // the optimizer does not re-infer shapes
  Node& pad = b.node(
      "Pad", {x, b.int64_weight("pads", {8}, c.pad_pads), b.weight("value", {}, {c.value})}, {p});
  pad.attributes.set("mode", string_attr(c.mode));
  Node& conv = b.node("Conv", {p, b.weight("W", {3, 2, 3, 3}, std::vector<float>(54, 1.0f))}, {y});
  conv.attributes.set("pads", ints_attr(c.conv_pads));
  if (c.auto_pad != "NOTSET") conv.attributes.set("auto_pad", string_attr(c.auto_pad));
  b.output(y);
  if (c.second_reader) {
    const ValueId r = b.value("r", padded);
    b.node("Relu", {p}, {r});
    b.output(r);
  }
  return b.finish();
}

// Pad's H pads (1, 0) and W pads (2, 1) add to the Conv's (0, 1) and (1, 0): pads [1,3,1,1]
// on a Conv that reads x itself.
TEST_CASE("a zero Pad before a Conv merges into the Conv's pads") {
  Graph graph = pad_conv_graph(PadConv{});
  const OptimizeReport report = optimize_ok(graph, OptimizeLevel::kAll);
  CHECK(report.fused_pads == 1);
  REQUIRE(graph.nodes.size() == 1);
  const Node& conv = graph.nodes[0];
  CHECK(conv.op_type == "Conv");
  CHECK(name_of(graph, conv.inputs[0]) == "x");
  CHECK(conv.attributes.get_ints("pads") == std::vector<int64_t>{1, 3, 1, 1});
  CHECK(graph.find_value("p") == kNoValue);
  Graph basic = pad_conv_graph(PadConv{});
  CHECK(optimize_ok(basic, OptimizeLevel::kBasic).fused_pads == 0);
}

// Pads on the channel axis, a non-zero value, reflect mode, negative pads (a crop), a second
// reader of the padded tensor and a Conv with auto_pad: each keeps the Pad.
TEST_CASE("a Pad that the Conv's zero padding cannot express stays") {
  std::vector<PadConv> cases(6);
  cases[0].pad_pads = {0, 1, 1, 1, 0, 0, 1, 1};
  cases[1].value = 0.5f;
  cases[2].mode = "reflect";
  cases[3].pad_pads = {0, 0, -1, 1, 0, 0, 1, 1};
  cases[4].second_reader = true;
  cases[5].auto_pad = "SAME_UPPER";
  for (size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    Graph graph = pad_conv_graph(cases[i]);
    CHECK(optimize_ok(graph, OptimizeLevel::kAll).fused_pads == 0);
    CHECK(graph.nodes[0].op_type == "Pad");
  }
}

}  // namespace
}  // namespace onepool::testing
