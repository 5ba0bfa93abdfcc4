// Window attributes are checked before ONNX shape inference, whose Conv / pooling inference
// divides by the strides (a stride of 0 was a SIGFPE inside the ONNX library). Every case is a
// one-node model with one bad attribute: each must fail with kInvalidModel naming the node, the
// attribute, the index, the value and the allowed range; the valid variants must import.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "planner/import/onnx_import.h"

namespace onepool {
namespace {

void set_shape(onnx::ValueInfoProto* info, const std::string& name,
               const std::vector<int64_t>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->mutable_shape()->add_dim()->set_dim_value(dim);
}

void add_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

// One node `op` on x[1,2,8,8] (and a weight w[2,2,3,3] for the convolutions) with the given
// ints attributes; kernel_shape [3,3] unless the attributes set it.
std::string window_model(const std::string& op,
                         const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("window");
  set_shape(graph->add_input(), "x", {1, 2, 8, 8});
  auto* y = graph->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int axis = 0; axis < 4; ++axis) {
    y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();  // unknown dims
  }
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name("window_0");
  node->add_input(std::string("x"));
  const bool is_conv = op == "Conv" || op == "ConvTranspose";
  if (is_conv) {
    node->add_input(std::string("w"));
    auto* w = graph->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : {2, 2, 3, 3}) w->add_dims(dim);
    for (int i = 0; i < 36; ++i) w->add_float_data(0.5f);
  }
  node->add_output(std::string("y"));
  bool has_kernel = false;
  for (const auto& [name, values] : ints) {
    add_ints(node, name, values);
    has_kernel = has_kernel || name == "kernel_shape";
  }
  if (!has_kernel && !is_conv) add_ints(node, "kernel_shape", {3, 3});
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

struct BadCase {
  const char* op;
  const char* attribute;
  std::vector<int64_t> values;
  const char* expected;  // a part of the message
};

}  // namespace

// 4 ops x strides {0, -1}, dilations {0, 2^40}, pads {-1} and kernel_shape {0}: 28 cases, each a
// clear kInvalidModel. Before the check, strides 0 killed the process with SIGFPE.
TEST_CASE("window attributes: zero, negative and huge values are clear errors") {
  const std::vector<BadCase> cases = {
      {"Conv", "strides", {0, 1}, "attribute 'strides'[0] is 0; it must be in [1, 2147483647]"},
      {"Conv", "strides", {1, -1}, "attribute 'strides'[1] is -1; it must be in [1, "},
      {"Conv", "dilations", {0, 1}, "attribute 'dilations'[0] is 0"},
      {"Conv", "dilations", {1, int64_t{1} << 40}, "attribute 'dilations'[1] is 1099511627776"},
      {"Conv", "pads", {0, -1, 0, 0}, "attribute 'pads'[1] is -1; it must be in [0, "},
      {"Conv", "kernel_shape", {0, 3}, "attribute 'kernel_shape'[0] is 0"},
      {"Conv", "kernel_shape", {3, 3, 3}, ""},  // rank mismatch: ONNX's own message
      {"MaxPool", "strides", {0, 0}, "attribute 'strides'[0] is 0"},
      {"MaxPool", "strides", {2, -3}, "attribute 'strides'[1] is -3"},
      {"MaxPool", "dilations", {0, 1}, "attribute 'dilations'[0] is 0"},
      {"MaxPool", "dilations", {int64_t{1} << 40, 1}, "attribute 'dilations'[0] is 1099511627776"},
      {"MaxPool", "pads", {-2, 0, 0, 0}, "attribute 'pads'[0] is -2"},
      {"MaxPool", "pads", {1, 1}, "attribute 'pads' has 2 values; expected 4"},
      {"MaxPool", "kernel_shape", {3, -1}, "attribute 'kernel_shape'[1] is -1"},
      {"AveragePool", "strides", {0, 1}, "attribute 'strides'[0] is 0"},
      {"AveragePool", "strides", {1, 0}, "attribute 'strides'[1] is 0"},
      {"AveragePool", "pads", {0, 0, 0, -1}, "attribute 'pads'[3] is -1"},
      {"AveragePool", "kernel_shape", {0, 0}, "attribute 'kernel_shape'[0] is 0"},
      {"AveragePool", "kernel_shape", {int64_t{1} << 40, 2}, "is 1099511627776"},
      {"LpPool", "strides", {0, 1}, "attribute 'strides'[0] is 0"},
      {"LpPool", "pads", {0, 0, -5, 0}, "attribute 'pads'[2] is -5"},
      {"LpPool", "kernel_shape", {0, 1}, "attribute 'kernel_shape'[0] is 0"},
      {"ConvTranspose", "strides", {0, 1}, "attribute 'strides'[0] is 0"},
      {"ConvTranspose", "dilations", {1, 0}, "attribute 'dilations'[1] is 0"},
      {"ConvTranspose", "pads", {-1, 0, 0, 0}, "attribute 'pads'[0] is -1"},
      {"ConvTranspose",
       "output_padding",
       {1, 0},
       "attribute 'output_padding'[0] is 1; it must be in [0, 1) (below the stride 1 or the "
       "dilation 1)"},
      {"ConvTranspose", "output_padding", {0, -1}, "attribute 'output_padding'[1] is -1"},
      {"ConvTranspose", "group", {}, "attribute 'group' is 0; it must be at least 1"},
  };
  for (const BadCase& bad : cases) {
    const std::string label = std::string(bad.op) + " " + bad.attribute;
    CAPTURE(label);
    std::string bytes;
    if (std::string(bad.attribute) == "group") {
      onnx::ModelProto model;
      model.ParseFromString(window_model(bad.op, {}));
      auto* group = model.mutable_graph()->mutable_node(0)->add_attribute();
      group->set_name("group");
      group->set_type(onnx::AttributeProto::INT);
      group->set_i(0);
      model.SerializeToString(&bytes);
    } else {
      bytes = window_model(bad.op, {{bad.attribute, bad.values}});
    }
    auto graph = import_onnx_bytes(bytes, "", {});
    REQUIRE_FALSE(graph.has_value());
    const std::string message = graph.status().message();
    CHECK_MESSAGE(graph.status().code() == StatusCode::kInvalidModel, message);
    if (std::string(bad.expected).empty()) continue;
    CHECK_MESSAGE(message.find(bad.expected) != std::string::npos, message);
    CHECK_MESSAGE(
        message.find(std::string("node 'window_0' (") + bad.op + ")") != std::string::npos,
        message);
  }
}

// The same ops with valid windows (stride 2, dilation 2, pads 1, output_padding below the
// stride) import with the expected output shapes.
TEST_CASE("window attributes: valid windows import") {
  struct GoodCase {
    const char* op;
    std::vector<std::pair<std::string, std::vector<int64_t>>> ints;
    std::vector<int64_t> expected_shape;
  };
  const std::vector<GoodCase> cases = {
      {"Conv", {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, {1, 2, 4, 4}},
      {"MaxPool", {{"dilations", {2, 2}}}, {1, 2, 4, 4}},
      {"AveragePool", {{"strides", {1, 1}}}, {1, 2, 6, 6}},
      {"ConvTranspose", {{"strides", {2, 2}}, {"output_padding", {1, 1}}}, {1, 2, 18, 18}},
  };
  for (const GoodCase& good : cases) {
    CAPTURE(std::string(good.op));
    auto graph = import_onnx_bytes(window_model(good.op, good.ints), "", {});
    REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
    const Value& y = graph->values[static_cast<size_t>(graph->outputs[0])];
    CHECK(y.shape.to_string() == Shape::from_dims(good.expected_shape)->to_string());
  }
}

// A stride of 0 inside an If branch is found too (ONNX shape inference recurses into branches).
TEST_CASE("window attributes: a bad stride inside a subgraph") {
  onnx::ModelProto inner;
  inner.ParseFromString(window_model("MaxPool", {{"strides", {0, 1}}}));
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("outer");
  set_shape(graph->add_input(), "x", {1, 2, 8, 8});
  auto* cond = graph->add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  auto* y = graph->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int axis = 0; axis < 4; ++axis) {
    y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();  // unknown dims
  }
  auto* node = graph->add_node();
  node->set_op_type("If");
  node->set_name("if_0");
  node->add_input(std::string("cond"));
  node->add_output(std::string("y"));
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attribute = node->add_attribute();
    attribute->set_name(branch);
    attribute->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto body = inner.graph();
    body.clear_input();
    *attribute->mutable_g() = body;
  }
  std::string bytes;
  model.SerializeToString(&bytes);
  auto imported = import_onnx_bytes(bytes, "", {});
  REQUIRE_FALSE(imported.has_value());
  CHECK(imported.status().code() == StatusCode::kInvalidModel);
  CHECK_MESSAGE(imported.status().message().find("node 'window_0' (MaxPool): attribute "
                                                 "'strides'[0] is 0") != std::string::npos,
                imported.status().message());
}

}  // namespace onepool
