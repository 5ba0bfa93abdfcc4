// Tests for the ONNX importer (planner/import/onnx_import.h) and TensorProto files
// (tensor_proto.h).
#include "planner/import/onnx_import.h"

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/cpu_folding.h"
#include "planner/import/import_tensor.h"
#include "planner/import/tensor_proto.h"

using onepool::testing::with_cpu_folding;

namespace onepool {
namespace {

namespace fs = std::filesystem;
const std::string kNodeTests = "/usr/share/libonnx-testdata/data/node";

// A ModelProto with one default-domain opset and an empty graph.
onnx::ModelProto new_model(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name("onnx_import_test");
  model.add_opset_import()->set_version(opset);
  model.mutable_graph()->set_name("test");
  return model;
}

// dims: numbers are fixed dims, anything else a symbolic dim name.
void add_value_info(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
                    const std::vector<std::string>& dims, bool with_shape = true) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  if (!with_shape) return;
  auto* shape = tensor->mutable_shape();
  for (const auto& dim : dims) {
    if (dim.find_first_not_of("0123456789") == std::string::npos) {
      shape->add_dim()->set_dim_value(std::stoll(dim));
    } else {
      shape->add_dim()->set_dim_param(dim);
    }
  }
}

onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  for (const auto& input : inputs) node->add_input(input);
  for (const auto& output : outputs) node->add_output(output);
  return node;
}

void add_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

onnx::TensorProto* add_int64s(onnx::GraphProto* graph, const std::string& name,
                              const std::vector<int64_t>& values, bool scalar = false) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values) tensor->add_int64_data(value);
  return tensor;
}

onnx::TensorProto* add_floats(onnx::GraphProto* graph, const std::string& name,
                              const std::vector<float>& values) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (float value : values) tensor->add_float_data(value);
  return tensor;
}

std::vector<int64_t> weight_ints(const Graph& graph, ValueId id) {
  REQUIRE(id != kNoValue);
  REQUIRE(graph.values[static_cast<size_t>(id)].kind == ValueKind::kWeight);
  const HostTensor& tensor = graph.weight(id);
  std::vector<int64_t> values;
  for (int64_t i = 0; i < tensor.element_count(); ++i) values.push_back(tensor.int_at(i));
  return values;
}

std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

ValueId id_of(const Graph& graph, const std::string& name) {
  const ValueId id = graph.find_value(name);
  REQUIRE_MESSAGE(id != kNoValue, "no value named ", name);
  return id;
}

// A fresh empty folder under the system temp dir, removed by the destructor.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::temp_directory_path() / ("onepool_import_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

// ONNX node test: Conv of x[1,1,7,5] with W[1,1,3,3], strides 2, pads 1 → y[1,1,4,3]. Both x and W
// are graph inputs (no initializers), the single node is unnamed ("Conv_0"), opset 11.
TEST_CASE("import: ONNX node test conv_with_strides_padding") {
  auto graph = import_onnx_file(kNodeTests + "/test_conv_with_strides_padding/model.onnx",
                                with_cpu_folding());
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  CHECK(graph->opset == 11);
  REQUIRE(graph->inputs.size() == 2);
  CHECK(graph->values[static_cast<size_t>(graph->inputs[0])].shape == Shape{1, 1, 7, 5});
  CHECK(graph->values[static_cast<size_t>(graph->inputs[1])].shape == Shape{1, 1, 3, 3});
  CHECK(graph->weights.empty());
  REQUIRE(graph->nodes.size() == 1);
  const Node& conv = graph->nodes[0];
  CHECK(conv.name == "Conv_0");
  CHECK(conv.op_type == "Conv");
  CHECK(conv.attributes.get_ints("strides") == std::vector<int64_t>{2, 2});
  CHECK(conv.attributes.get_ints("pads") == std::vector<int64_t>{1, 1, 1, 1});
  REQUIRE(graph->outputs.size() == 1);
  const Value& y = graph->values[static_cast<size_t>(graph->outputs[0])];
  CHECK(y.name == "y");
  CHECK(y.shape == Shape{1, 1, 4, 3});
  CHECK(y.dtype == DType::kFloat32);
  CHECK(y.is_graph_output);
  CHECK(y.producer == 0);
  CHECK(graph->values[static_cast<size_t>(graph->inputs[0])].consumers == std::vector<NodeId>{0});
}

// Every test_reshape_* node test imports and its output shape equals the shape stored in
// test_data_set_0/output_0.pb (e.g. reordered_all_dims: [2,3,4] → [4,2,3]). Its `shape` input
// is a shape input, bound to the values of test_data_set_0/input_1.pb.
TEST_CASE("import: ONNX node tests test_reshape_* match their reference output shapes") {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kNodeTests)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("test_reshape_", 0) != 0) continue;
    CAPTURE(name);
    auto shape = read_tensor_proto_file((entry.path() / "test_data_set_0/input_1.pb").string());
    REQUIRE(shape.has_value());
    ImportOptions options;
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < shape->second.element_count(); ++i) {
      dims.push_back(shape->second.int_at(i));
    }
    options.shape_input_values["shape"] = dims;
    auto graph =
        import_onnx_file((entry.path() / "model.onnx").string(), with_cpu_folding(options));
    REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
    auto expected = read_tensor_proto_file((entry.path() / "test_data_set_0/output_0.pb").string());
    REQUIRE(expected.has_value());
    REQUIRE(graph->nodes.size() == 1);
    CHECK(graph->nodes[0].op_type == "Reshape");
    CHECK(graph->values[static_cast<size_t>(graph->outputs[0])].shape == expected->second.shape);
    ++checked;
  }
  CHECK(checked >= 10);
}

// input_0.pb of conv_with_strides_padding is x = arange(35) as float [1,1,7,5]; raw bytes.
TEST_CASE("tensor_proto: read an ONNX test .pb and round-trip through a file") {
  auto x = read_tensor_proto_file(kNodeTests +
                                  "/test_conv_with_strides_padding/test_data_set_0/input_0.pb");
  REQUIRE_MESSAGE(x.has_value(), x.status().to_string());
  CHECK(x->first == "x");
  CHECK(x->second.dtype == DType::kFloat32);
  CHECK(x->second.shape == Shape{1, 1, 7, 5});
  CHECK(x->second.float_at(0) == 0.0);
  CHECK(x->second.float_at(34) == 34.0);
  TempDir dir("pb");
  const std::string path = (dir.path / "copy.pb").string();
  REQUIRE(write_tensor_proto_file(path, "x2", x->second).is_ok());
  auto copy = read_tensor_proto_file(path);
  REQUIRE(copy.has_value());
  CHECK(copy->first == "x2");
  CHECK(copy->second.shape == x->second.shape);
  CHECK(copy->second.data == x->second.data);
  CHECK(read_tensor_proto_file((dir.path / "missing.pb").string()).status().code() ==
        StatusCode::kNotFound);
}

// Typed fields: int8 {-3, 5} and bool {1, 0, 1} and float16 {0x3C00 = 1.0} come packed in
// int32_data; uint32 {7} in uint64_data; double {2.5} in double_data. A count mismatch fails.
TEST_CASE("tensor_proto: typed fields, including int32_data packing") {
  onnx::TensorProto proto;
  proto.set_name("t");
  proto.set_data_type(onnx::TensorProto::INT8);
  proto.add_dims(2);
  proto.add_int32_data(-3);
  proto.add_int32_data(5);
  auto int8 = host_tensor_from_proto(proto);
  REQUIRE(int8.has_value());
  CHECK(int8->data.size() == 2);
  CHECK(int8->int_at(0) == -3);
  CHECK(int8->int_at(1) == 5);

  proto.set_data_type(onnx::TensorProto::BOOL);
  proto.set_dims(0, 3);
  proto.clear_int32_data();
  for (int v : {1, 0, 1}) proto.add_int32_data(v);
  auto boolean = host_tensor_from_proto(proto);
  REQUIRE(boolean.has_value());
  CHECK(boolean->int_at(0) == 1);
  CHECK(boolean->int_at(1) == 0);
  CHECK(boolean->int_at(2) == 1);

  proto.set_data_type(onnx::TensorProto::FLOAT16);
  proto.set_dims(0, 1);
  proto.clear_int32_data();
  proto.add_int32_data(0x3C00);
  auto half = host_tensor_from_proto(proto);
  REQUIRE(half.has_value());
  CHECK(half->as<uint16_t>()[0] == 0x3C00);

  onnx::TensorProto u32;
  u32.set_data_type(onnx::TensorProto::UINT32);
  u32.add_uint64_data(7);
  auto scalar = host_tensor_from_proto(u32);
  REQUIRE(scalar.has_value());
  CHECK(scalar->shape.rank() == 0);
  CHECK(scalar->int_at(0) == 7);

  onnx::TensorProto f64;
  f64.set_data_type(onnx::TensorProto::DOUBLE);
  f64.add_dims(1);
  f64.add_double_data(2.5);
  CHECK(host_tensor_from_proto(f64)->float_at(0) == 2.5);
  f64.set_dims(0, 2);
  CHECK(host_tensor_from_proto(f64).status().code() == StatusCode::kInvalidModel);
}

namespace {
// x[batch,3,4] → Shape → Gather(0) → Unsqueeze → Concat with [-1] → Reshape(x) → y[batch,12].
onnx::ModelProto shape_chain_model() {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_value_info(graph->add_input(), "x", onnx::TensorProto::FLOAT, {"batch", "3", "4"});
  add_value_info(graph->add_output(), "y", onnx::TensorProto::FLOAT, {"n", "m"});
  add_int64s(graph, "zero", {0}, true);
  add_int64s(graph, "axes", {0});
  add_int64s(graph, "minus_one", {-1});
  add_node(graph, "Shape", {"x"}, {"s"});
  add_int_attribute(add_node(graph, "Gather", {"s", "zero"}, {"b"}), "axis", 0);
  add_node(graph, "Unsqueeze", {"b", "axes"}, {"bu"});
  add_int_attribute(add_node(graph, "Concat", {"bu", "minus_one"}, {"target"}), "axis", 0);
  add_node(graph, "Reshape", {"x", "target"}, {"y"})->set_name("reshape");
  return model;
}
}  // namespace

// With batch=5 the chain folds to the constant [5,-1]: only Reshape remains, y is [5,12], and the
// folded target is the only weight (zero, axes and minus_one are no longer read).
TEST_CASE("import: Shape→Gather→Unsqueeze→Concat→Reshape folds with a symbolic batch") {
  ImportOptions options;
  options.dims = {{"batch", 5}};
  auto graph = import_onnx_bytes(serialize(shape_chain_model()), "", with_cpu_folding(options));
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  REQUIRE(graph->nodes.size() == 1);
  const Node& reshape = graph->nodes[0];
  CHECK(reshape.name == "reshape");
  CHECK(weight_ints(*graph, reshape.input(1)) == std::vector<int64_t>{5, -1});
  CHECK(graph->weights.size() == 1);
  CHECK(graph->values[static_cast<size_t>(id_of(*graph, "y"))].shape == Shape{5, 12});
  const Value& x = graph->values[static_cast<size_t>(id_of(*graph, "x"))];
  CHECK(x.shape == Shape{5, 3, 4});
  CHECK(x.kind == ValueKind::kGraphInput);
  CHECK(x.declared_dims == std::vector<std::string>{"batch", "3", "4"});
}

// --shapes x:2x3x4 binds batch through the full shape: y is [2,12]. With folding off, all five
// nodes stay (data propagation alone may still resolve y, so only the node count is checked).
TEST_CASE("import: the same chain bound by --shapes, and with folding disabled") {
  ImportOptions options;
  options.input_shapes = {{"x", {2, 3, 4}}};
  auto graph = import_onnx_bytes(serialize(shape_chain_model()), "", with_cpu_folding(options));
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  CHECK(graph->values[static_cast<size_t>(id_of(*graph, "y"))].shape == Shape{2, 12});
  CHECK(graph->nodes.size() == 1);
  options.fold_constants = false;
  auto unfolded = import_onnx_bytes(serialize(shape_chain_model()), "", with_cpu_folding(options));
  if (unfolded.has_value()) CHECK(unfolded->nodes.size() == 5);
}

// Import has no arithmetic of its own: without an evaluator only Shape folds (from x's static
// shape), so the Gather/Unsqueeze/Concat nodes stay and Reshape's target is not constant (y's
// shape comes from data propagation, or the import says it is unknown). The evaluator the
// runtime passes (the CPU kernels) folds the whole chain, and is called once per folded node.
TEST_CASE("import: folding beyond Shape and Size runs only through the caller's evaluator") {
  ImportOptions options;
  options.input_shapes = {{"x", {2, 3, 4}}};
  auto bare = import_onnx_bytes(serialize(shape_chain_model()), "", options);
  if (bare.has_value()) {
    CHECK(bare->nodes.size() == 4);  // Gather, Unsqueeze, Concat, Reshape: Shape folded
    CHECK(bare->values[static_cast<size_t>(id_of(*bare, "target"))].kind != ValueKind::kWeight);
  }
  int calls = 0;
  options.fold_evaluator = [&calls](const Graph& graph) {
    ++calls;
    return cpu::evaluate_single_node_graph(graph);
  };
  auto folded = import_onnx_bytes(serialize(shape_chain_model()), "", options);
  REQUIRE_MESSAGE(folded.has_value(), folded.status().to_string());
  CHECK(folded->nodes.size() == 1);
  CHECK(calls == 3);  // Gather, Unsqueeze, Concat
  CHECK(weight_ints(*folded, folded->nodes[0].input(1)) == std::vector<int64_t>{2, -1});
}

// A kernel that rejects the constants (a Gather index out of range) fails the import with the
// kernel's message and the node's name, as any malformed node does.
TEST_CASE("import: a kernel error while folding names the node") {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_floats(graph, "data", {10, 20, 30});  // float: ONNX's data propagation does not look
  add_int64s(graph, "index", {5});
  add_node(graph, "Gather", {"data", "index"}, {"picked"})->set_name("bad_gather");
  add_node(graph, "Abs", {"picked"}, {"y"});
  add_value_info(graph->add_output(), "y", onnx::TensorProto::FLOAT, {"1"});
  auto imported = import_onnx_bytes(serialize(model), "", with_cpu_folding());
  REQUIRE_FALSE(imported.has_value());
  INFO(imported.status().to_string());
  CHECK(imported.status().message().find("bad_gather") != std::string::npos);
  CHECK(imported.status().message().find("constant folding") != std::string::npos);
}

// A constant whose inferred size overflows int64 (2^62 x 4 elements) is never handed to a kernel:
// the node stays, and the import fails naming the tensor's overflowing shape.
TEST_CASE("import: folding refuses an output whose element count overflows") {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_int64s(graph, "huge", {int64_t{1} << 62, 4});
  add_node(graph, "ConstantOfShape", {"huge"}, {"filled"});
  add_node(graph, "Abs", {"filled"}, {"y"});
  add_value_info(graph->add_output(), "y", onnx::TensorProto::FLOAT, {"?", "?"});
  auto imported = import_onnx_bytes(serialize(model), "", with_cpu_folding());
  if (imported.has_value()) {
    CHECK(imported->values[static_cast<size_t>(id_of(*imported, "filled"))].kind !=
          ValueKind::kWeight);
  } else {
    INFO(imported.status().to_string());
    CHECK(imported.status().message().find("constant folding: node") == std::string::npos);
  }
}

namespace {
// One Abs per folded chain so each folded constant stays in the graph as Abs's weight input.
void add_abs_output(onnx::GraphProto* graph, const std::string& folded, int rank) {
  add_node(graph, "Abs", {folded}, {folded + "_abs"});
  std::vector<std::string> dims;
  for (int axis = 0; axis < rank; ++axis) dims.push_back(folded + std::to_string(axis));
  add_value_info(graph->add_output(), folded + "_abs", onnx::TensorProto::INT64, dims);
}
}  // namespace

// Host evaluators, each checked through the weight that feeds an Abs:
//   Range(1,10,3) = [1,4,7]; ConstantOfShape([2,3], 7) = six 7s; Slice([10..50], -4:end:2) =
//   [20,40]; Where([1,2,3]==[1,0,3], [10,20,30], [-1]) = [10,-1,30]; Cast([1.7,-2.5]) = [1,-2];
//   [7,-7] / 2 = [3,-3]; ReduceProd([[2,3],[4,5]], axis 1) = [6,20]; Expand([1,2], [2,2]) =
//   [1,2,1,2]; Size of the 2-element constant [2,3] = 2.
TEST_CASE("import: host evaluators of the foldable ops") {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_value_info(graph->add_input(), "unused", onnx::TensorProto::FLOAT, {"1"});
  add_int64s(graph, "one", {1}, true);
  add_int64s(graph, "ten", {10}, true);
  add_int64s(graph, "three", {3}, true);
  add_node(graph, "Range", {"one", "ten", "three"}, {"range"});
  add_int64s(graph, "shape23", {2, 3});
  auto* cos = add_node(graph, "ConstantOfShape", {"shape23"}, {"filled"});
  auto* value = cos->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(7);
  add_int64s(graph, "data", {10, 20, 30, 40, 50});
  add_int64s(graph, "starts", {-4});
  add_int64s(graph, "ends", {std::numeric_limits<int64_t>::max()});
  add_int64s(graph, "axes0", {0});
  add_int64s(graph, "steps", {2});
  add_node(graph, "Slice", {"data", "starts", "ends", "axes0", "steps"}, {"sliced"});
  add_int64s(graph, "a", {1, 2, 3});
  add_int64s(graph, "b", {1, 0, 3});
  add_node(graph, "Equal", {"a", "b"}, {"eq"});
  add_int64s(graph, "tens", {10, 20, 30});
  add_int64s(graph, "minus", {-1});
  add_node(graph, "Where", {"eq", "tens", "minus"}, {"picked"});
  add_floats(graph, "reals", {1.7f, -2.5f});
  add_int_attribute(add_node(graph, "Cast", {"reals"}, {"cast"}), "to", onnx::TensorProto::INT64);
  add_int64s(graph, "num", {7, -7});
  add_int64s(graph, "two", {2}, true);
  add_node(graph, "Div", {"num", "two"}, {"quot"});
  add_int64s(graph, "matrix", {2, 3, 4, 5})->set_dims(0, 2);
  graph->mutable_initializer(graph->initializer_size() - 1)->add_dims(2);
  auto* prod = add_node(graph, "ReduceProd", {"matrix"}, {"prod"});
  add_int_attribute(prod, "keepdims", 0);
  auto* axes = prod->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(1);
  add_int64s(graph, "pair", {1, 2});
  add_int64s(graph, "shape22", {2, 2});
  add_node(graph, "Expand", {"pair", "shape22"}, {"expanded"});
  add_node(graph, "Size", {"shape23"}, {"size"});
  const std::pair<const char*, int> outputs[] = {{"range", 1},  {"filled", 2},   {"sliced", 1},
                                                 {"picked", 1}, {"cast", 1},     {"quot", 1},
                                                 {"prod", 1},   {"expanded", 2}, {"size", 0}};
  for (const auto& [name, rank] : outputs) add_abs_output(graph, name, rank);
  auto imported = import_onnx_bytes(serialize(model), "", with_cpu_folding());
  REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
  CHECK(imported->nodes.size() == 9);  // only the Abs nodes remain
  const Graph& g = *imported;
  CHECK(weight_ints(g, id_of(g, "range")) == std::vector<int64_t>{1, 4, 7});
  CHECK(weight_ints(g, id_of(g, "filled")) == std::vector<int64_t>(6, 7));
  CHECK(g.values[static_cast<size_t>(id_of(g, "filled"))].shape == Shape{2, 3});
  CHECK(weight_ints(g, id_of(g, "sliced")) == std::vector<int64_t>{20, 40});
  CHECK(weight_ints(g, id_of(g, "picked")) == std::vector<int64_t>{10, -1, 30});
  CHECK(weight_ints(g, id_of(g, "cast")) == std::vector<int64_t>{1, -2});
  CHECK(weight_ints(g, id_of(g, "quot")) == std::vector<int64_t>{3, -3});
  CHECK(weight_ints(g, id_of(g, "prod")) == std::vector<int64_t>{6, 20});
  CHECK(weight_ints(g, id_of(g, "expanded")) == std::vector<int64_t>{1, 2, 1, 2});
  CHECK(weight_ints(g, id_of(g, "size")) == std::vector<int64_t>{2});
  CHECK(g.values[static_cast<size_t>(id_of(g, "prod_abs"))].shape == Shape{2});
}

// Initializer W listed as a graph input too is a weight (not a caller input); a Constant node
// (value_float 6) is a weight; Clip's omitted min input ("") is kNoValue.
TEST_CASE("import: initializer-inputs and Constant nodes are weights; omitted inputs") {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_value_info(graph->add_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  add_value_info(graph->add_input(), "W", onnx::TensorProto::FLOAT, {"2"});
  add_floats(graph, "W", {1.5f, -2.0f});
  auto* constant = add_node(graph, "Constant", {}, {"max"});
  auto* attribute = constant->add_attribute();
  attribute->set_name("value_float");
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(6.0f);
  add_node(graph, "Add", {"x", "W"}, {"sum"});
  add_node(graph, "Clip", {"sum", "", "max"}, {"y"});
  add_value_info(graph->add_output(), "y", onnx::TensorProto::FLOAT, {"n"});
  auto imported = import_onnx_bytes(serialize(model), "", with_cpu_folding());
  REQUIRE_MESSAGE(imported.has_value(), imported.status().to_string());
  const Graph& g = *imported;
  REQUIRE(g.inputs.size() == 1);
  CHECK(g.values[static_cast<size_t>(g.inputs[0])].name == "x");
  CHECK(g.weights.size() == 2);
  const ValueId w = id_of(g, "W");
  CHECK(g.values[static_cast<size_t>(w)].kind == ValueKind::kWeight);
  CHECK(g.weight(w).float_at(1) == -2.0);
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[1].input(1) == kNoValue);
  CHECK(g.weight(g.nodes[1].input(2)).float_at(0) == 6.0);
  CHECK(g.values[static_cast<size_t>(id_of(g, "y"))].shape == Shape{2});
}

namespace {
// y = Add(x, W) with W float[4] stored externally at `location` (offset 8, length 16).
onnx::ModelProto external_model(const std::string& location, int64_t length = 16) {
  onnx::ModelProto model = new_model(13);
  auto* graph = model.mutable_graph();
  add_value_info(graph->add_input(), "x", onnx::TensorProto::FLOAT, {"4"});
  add_value_info(graph->add_output(), "y", onnx::TensorProto::FLOAT, {"4"});
  auto* w = graph->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  const std::pair<const char*, std::string> entries[] = {
      {"location", location}, {"offset", "8"}, {"length", std::to_string(length)}};
  for (const auto& [key, value] : entries) {
    auto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  add_node(graph, "Add", {"x", "W"}, {"y"});
  return model;
}

std::string float_bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}
}  // namespace

// weights.bin holds 2 padding floats, W = [1,2,3,4] at offset 8, then 2 more floats; data/w.bin
// (a sub-folder) works the same. "../w.bin" leaves the folder, "/tmp/w.bin" is absolute, length 20
// is not the 16 bytes float[4] needs, and length 400 runs past the end of the file.
TEST_CASE("import: external data inside and escaping the model folder") {
  TempDir dir("external");
  fs::create_directories(dir.path / "data");
  const std::string payload = float_bytes({-1, -1, 1, 2, 3, 4, 9, 9});
  write_file(dir.path / "weights.bin", payload);
  write_file(dir.path / "data" / "w.bin", payload);
  write_file(dir.path.parent_path() / "w.bin", payload);
  for (const char* location : {"weights.bin", "data/w.bin", "./data/../weights.bin"}) {
    CAPTURE(location);
    const fs::path model_path = dir.path / "model.onnx";
    write_file(model_path, serialize(external_model(location)));
    auto graph = import_onnx_file(model_path.string(), with_cpu_folding());
    REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
    const HostTensor& w = graph->weight(id_of(*graph, "W"));
    CHECK(w.float_at(0) == 1.0);
    CHECK(w.float_at(3) == 4.0);
  }
  const std::pair<onnx::ModelProto, const char*> bad[] = {
      {external_model("../w.bin"), "leaves the model's folder"},
      {external_model("data/../../w.bin"), "leaves the model's folder"},
      {external_model((dir.path / "weights.bin").string()), "is absolute"},
      {external_model("weights.bin", 20), "differs from the 16 bytes"},
      {external_model("weights.bin", 400), "beyond the end"},
      {external_model("nothing.bin"), "does not exist"},
  };
  for (const auto& [model, expected_text] : bad) {
    const std::string expected = expected_text;  // clang 14 cannot capture a binding
    CAPTURE(expected);
    write_file(dir.path / "model.onnx", serialize(model));
    auto graph = import_onnx_file((dir.path / "model.onnx").string(), with_cpu_folding());
    REQUIRE_FALSE(graph.has_value());
    CAPTURE(graph.status().message());
    CHECK(graph.status().message().find(expected) != std::string::npos);
    CHECK(graph.status().message().find("tensor 'W'") != std::string::npos);
  }
  fs::remove(dir.path.parent_path() / "w.bin");
  // From memory (no folder) external data is refused.
  auto from_memory =
      import_onnx_bytes(serialize(external_model("weights.bin")), "", with_cpu_folding());
  CHECK(from_memory.status().message().find("cannot read") != std::string::npos);
}

// PaddleOCR det (x:1x3x640x640) and cls (x:1x3x48x192) import fully static when present:
// det output [1,1,640,640], cls output [1,2].
TEST_CASE("import: real PaddleOCR models in ONEPOOL_CACHE_DIR") {
  const char* cache = std::getenv("ONEPOOL_CACHE_DIR");
  const std::pair<const char*, std::vector<int64_t>> models[] = {{"ocr_det.onnx", {1, 3, 640, 640}},
                                                                 {"ocr_cls.onnx", {1, 3, 48, 192}}};
  const Shape outputs[] = {Shape{1, 1, 640, 640}, Shape{1, 2}};
  for (size_t i = 0; i < 2; ++i) {
    const fs::path path = fs::path(cache == nullptr ? "" : cache) / "models" / models[i].first;
    if (cache == nullptr || !fs::exists(path)) {
      MESSAGE("skipping: ", path.string(), " not present");
      continue;
    }
    CAPTURE(path.string());
    ImportOptions options;
    options.input_shapes = {{"x", models[i].second}};
    auto graph = import_onnx_file(path.string(), with_cpu_folding(options));
    REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
    CHECK(graph->values[static_cast<size_t>(graph->outputs[0])].shape == outputs[i]);
    CHECK(graph->weights.size() > 50);
    for (const Node& node : graph->nodes) CHECK(node.op_type != "Constant");
  }
}

}  // namespace onepool
