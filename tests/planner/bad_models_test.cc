// The importer on bad input: every case fails with a Status whose message says what and where,
// never an exception or a crash.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "planner/import/onnx_import.h"

namespace onepool {
namespace {

namespace fs = std::filesystem;

onnx::ModelProto new_model() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  model.mutable_graph()->set_name("bad");
  return model;
}

void add_io(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
            const std::vector<std::string>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const auto& dim : dims) {
    if (dim.find_first_not_of("0123456789") == std::string::npos) {
      shape->add_dim()->set_dim_value(std::stoll(dim));
    } else {
      shape->add_dim()->set_dim_param(dim);
    }
  }
}

void add_node(onnx::GraphProto* graph, const std::string& op, const std::string& input,
              const std::string& output) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->add_input(input);
  node->add_output(output);
}

// y = Relu(x), x[dims...] float (or `elem_type`).
onnx::ModelProto relu_model(const std::vector<std::string>& dims,
                            int32_t elem_type = onnx::TensorProto::FLOAT) {
  onnx::ModelProto model = new_model();
  add_io(model.mutable_graph()->add_input(), "x", elem_type, dims);
  add_io(model.mutable_graph()->add_output(), "y", elem_type, dims);
  add_node(model.mutable_graph(), "Relu", "x", "y");
  return model;
}

std::string serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

Status import_status(const onnx::ModelProto& model, const ImportOptions& options = {}) {
  return import_onnx_bytes(serialize(model), "", options).status();
}

// True when the message holds `text`; prints the whole status otherwise, to debug a failure.
bool contains(const Status& status, const std::string& text) {
  const bool found = status.message().find(text) != std::string::npos;
  if (!found) MESSAGE("looking for '", text, "' in: ", status.to_string());
  return found;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::temp_directory_path() / ("onepool_bad_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return (path / name).string();
  }
};

}  // namespace

// A path that does not exist: kNotFound naming the file.
TEST_CASE("bad model: missing file") {
  auto graph = import_onnx_file("/nonexistent/model.onnx", {});
  CHECK(graph.status().code() == StatusCode::kNotFound);
  CHECK(contains(graph.status(), "/nonexistent/model.onnx"));
}

// A 0-byte file: "'…/empty.onnx' is not a valid ONNX model: it is empty".
TEST_CASE("bad model: empty file") {
  TempDir dir("empty");
  const std::string path = dir.write("empty.onnx", "");
  auto graph = import_onnx_file(path, {});
  CHECK(graph.status().code() == StatusCode::kInvalidModel);
  CHECK(contains(graph.status(), "empty.onnx' is not a valid ONNX model"));
  CHECK(contains(graph.status(), "empty"));
}

// Text and random bytes are not a model.
TEST_CASE("bad model: garbage bytes") {
  TempDir dir("garbage");
  const std::string texts[] = {"hello, this is not a model\n",
                               std::string("\xff\xfe\x00\x01\x7f", 5), std::string(1000, '\x08')};
  for (const auto& text : texts) {
    const std::string path = dir.write("garbage.onnx", text);
    auto graph = import_onnx_file(path, {});
    CHECK(graph.status().code() == StatusCode::kInvalidModel);
    CHECK(contains(graph.status(), "garbage.onnx' is not a valid ONNX model"));
  }
}

// The first half of a valid model's bytes cuts inside the graph field: protobuf rejects it.
TEST_CASE("bad model: truncated model") {
  TempDir dir("truncated");
  const std::string bytes = serialize(relu_model({"1", "4"}));
  REQUIRE(import_onnx_bytes(bytes, "", {}).has_value());
  const std::string path = dir.write("cut.onnx", bytes.substr(0, bytes.size() / 2));
  auto graph = import_onnx_file(path, {});
  CHECK(graph.status().code() == StatusCode::kInvalidModel);
  CHECK(contains(graph.status(), "cut.onnx' is not a valid ONNX model"));
}

// a = Relu(b), b = Relu(a): a real cycle; the message names both nodes, producer first,
// starting from the node listed first.
TEST_CASE("bad model: cycle") {
  onnx::ModelProto model = new_model();
  add_io(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"1"});
  add_io(model.mutable_graph()->add_output(), "a", onnx::TensorProto::FLOAT, {"1"});
  add_node(model.mutable_graph(), "Relu", "b", "a");
  add_node(model.mutable_graph(), "Relu", "a", "b");
  const Status status = import_status(model);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status,
                 "the graph has a cycle of 2 node(s): node 'Relu_0' (Relu) -> node "
                 "'Relu_1' (Relu) -> node 'Relu_0' (Relu)"));
}

// x -> Relu_0 -> t -> Relu_1 -> u -> Relu_2 -> v, and Relu_3 reads v and writes the output; the
// cycle is Relu_1 -> Relu_2 -> Relu_3 -> Relu_1 if Relu_1 reads Relu_3's output instead of t.
// Relu_0 is not on the cycle and is not named.
TEST_CASE("bad model: a cycle of three behind a valid node names only the three") {
  onnx::ModelProto model = new_model();
  add_io(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"1"});
  add_io(model.mutable_graph()->add_output(), "w", onnx::TensorProto::FLOAT, {"1"});
  add_node(model.mutable_graph(), "Relu", "x", "t");
  add_node(model.mutable_graph(), "Relu", "w", "u");
  add_node(model.mutable_graph(), "Relu", "u", "v");
  add_node(model.mutable_graph(), "Relu", "v", "w");
  const Status status = import_status(model);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status,
                 "cycle of 3 node(s): node 'Relu_1' (Relu) -> node 'Relu_2' (Relu) -> "
                 "node 'Relu_3' (Relu) -> node 'Relu_1' (Relu)"));
  CHECK_FALSE(contains(status, "Relu_0"));
}

// A node that reads its own output is a cycle of one.
TEST_CASE("bad model: a node reading its own output") {
  onnx::ModelProto model = new_model();
  add_io(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"1"});
  add_io(model.mutable_graph()->add_output(), "a", onnx::TensorProto::FLOAT, {"1"});
  add_node(model.mutable_graph(), "Relu", "a", "a");
  const Status status = import_status(model);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status, "cycle of 1 node(s): node 'Relu_0' (Relu) -> node 'Relu_0' (Relu)"));
}

// Nodes listed consumer first (y = Relu(t) before t = Neg(x)) import in producer-first order;
// a third node that was already in a valid place (z = Abs(x), listed first) stays first.
TEST_CASE("import: nodes listed out of order are sorted, keeping the valid order") {
  onnx::ModelProto model = new_model();
  add_io(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  add_io(model.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, {"2"});
  add_io(model.mutable_graph()->add_output(), "z", onnx::TensorProto::FLOAT, {"2"});
  add_node(model.mutable_graph(), "Abs", "x", "z");
  add_node(model.mutable_graph(), "Relu", "t", "y");
  add_node(model.mutable_graph(), "Neg", "x", "t");
  auto graph = import_onnx_bytes(serialize(model), "", {});
  REQUIRE(graph.has_value());
  REQUIRE(graph->nodes.size() == 3);
  CHECK(graph->nodes[0].op_type == "Abs");
  CHECK(graph->nodes[1].op_type == "Neg");
  CHECK(graph->nodes[2].op_type == "Relu");
}

// Relu reads 'ghost', which nothing produces.
TEST_CASE("bad model: dangling input") {
  onnx::ModelProto model = relu_model({"1"});
  model.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
  const Status status = import_status(model);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status, "input tensor 'ghost'"));
  CHECK(contains(status, "nothing produces it"));
}

// x[batch,3,height,?] and mask[batch,seq]: five unbound dims, all listed, and a --shapes line
// that guesses them as `inspect` does (batch 1, image sides 224, other dims 1) and says so.
TEST_CASE("bad model: unbound symbolic dims are all listed with a --shapes line") {
  onnx::ModelProto model = relu_model({"batch", "3", "height", "?"});
  model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(3)
      ->clear_dim_param();
  add_io(model.mutable_graph()->add_input(), "mask", onnx::TensorProto::FLOAT, {"batch", "seq"});
  const Status status = import_status(model);
  CHECK(status.code() == StatusCode::kInvalidArgument);
  CHECK(contains(status, "5 symbolic dim(s) are unbound"));
  CHECK(contains(status, "input 'x' axis 0 'batch'"));
  CHECK(contains(status, "input 'x' axis 2 'height'"));
  CHECK(contains(status, "input 'x' axis 3 '?'"));
  CHECK(contains(status, "input 'mask' axis 0 'batch'"));
  CHECK(contains(status, "input 'mask' axis 1 'seq'"));
  CHECK(
      contains(status, "--shapes x:1x3x224x224,mask:1x1 (from a guess (batch 1, image sides 224"));
  // Binding only batch leaves height, ? and seq; the line shows batch's value.
  ImportOptions options;
  options.dims = {{"batch", 4}};
  const Status partial = import_status(model, options);
  CHECK(contains(partial, "3 symbolic dim(s) are unbound"));
  CHECK(contains(partial, "--shapes x:4x3x224x224,mask:4x1"));
}

// --dim batch=0, --shapes x:[-1,3] and x:[0,3]: dims must be positive.
TEST_CASE("bad model: dims <= 0") {
  onnx::ModelProto model = relu_model({"batch", "3"});
  ImportOptions zero_dim;
  zero_dim.dims = {{"batch", 0}};
  CHECK(contains(import_status(model, zero_dim), "must be positive"));
  for (int64_t bad : {-1, 0}) {
    ImportOptions options;
    options.input_shapes = {{"x", {bad, 3}}};
    const Status status = import_status(model, options);
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK(contains(status, "input 'x': axis 0 dim"));
  }
}

// Mismatches name input, axis, expected and given: rank 3 vs declared 2; axis 1 fixed to 3.
TEST_CASE("bad model: --shapes disagrees with the model, or names no input") {
  onnx::ModelProto model = relu_model({"batch", "3"});
  ImportOptions rank;
  rank.input_shapes = {{"x", {1, 3, 5}}};
  CHECK(contains(import_status(model, rank), "input 'x': expected rank 2"));
  ImportOptions fixed;
  fixed.input_shapes = {{"x", {1, 4}}};
  CHECK(
      contains(import_status(model, fixed), "axis 1 is fixed to 3 in the model, --shapes gives 4"));
  ImportOptions unknown;
  unknown.input_shapes = {{"image", {1, 3}}};
  const Status status = import_status(model, unknown);
  CHECK(contains(status, "'image', which is not a graph input; inputs: 'x'"));
  ImportOptions unknown_dim;
  unknown_dim.dims = {{"seq", 3}};
  CHECK(contains(import_status(model, unknown_dim), "--dim 'seq' is not a symbolic dim"));
}

// x[1,100000000000,100000000000] float: 4e22 bytes overflows 64 bits.
TEST_CASE("bad model: byte size overflow") {
  const Status status = import_status(relu_model({"1", "100000000000", "100000000000"}));
  CHECK(status.code() == StatusCode::kOutOfRange);
  CHECK(contains(status, "input 'x'"));
  ImportOptions options;
  options.dims = {{"n", 100000000000}};
  CHECK(import_status(relu_model({"n", "n", "4"}), options).code() == StatusCode::kOutOfRange);
}

// A string input is kUnsupported and names the input and dtype.
TEST_CASE("bad model: unsupported dtype") {
  const Status status = import_status(relu_model({"2"}, onnx::TensorProto::STRING));
  CHECK(status.code() == StatusCode::kUnsupported);
  CHECK(contains(status, "input 'x': dtype STRING is not supported"));
  const Status complex = import_status(relu_model({"2"}, onnx::TensorProto::COMPLEX64));
  CHECK(complex.code() == StatusCode::kUnsupported);
  CHECK(contains(complex, "COMPLEX64"));
}

// An initializer whose external data location is "../../etc/passwd" is refused before any read.
TEST_CASE("bad model: escaping external data") {
  TempDir dir("escape");
  onnx::ModelProto model = relu_model({"2"});
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value("../../etc/passwd");
  const std::string path = dir.write("escape.onnx", serialize(model));
  const Status status = import_onnx_file(path, {}).status();
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status, "tensor 'w'"));
  CHECK(contains(status, "leaves the model's folder"));
}

// An op ONNX cannot infer (custom domain) leaves 'z' unknown: one error names it and its node.
TEST_CASE("bad model: a tensor with no inferable shape is listed with its producer") {
  onnx::ModelProto model = relu_model({"2"});
  auto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto* node = model.mutable_graph()->add_node();
  node->set_op_type("Mystery");
  node->set_domain("com.example");
  node->add_input("y");
  node->add_output("z");
  const Status status = import_status(model);
  CHECK(status.code() == StatusCode::kUnsupported);
  CHECK(contains(status, "1 tensor(s) have no known dtype and static shape"));
  CHECK(contains(status, "tensor 'z' (from node 'Mystery_1' (Mystery)): unknown dtype and shape"));
}

// Graph outputs y, y: the second declaration is an error (it ran before); inputs x, x likewise
// (the checker is off for a model newer than the library, so OnePool checks this itself).
TEST_CASE("bad model: a graph output or input declared twice") {
  onnx::ModelProto outputs = relu_model({"1", "4"});
  *outputs.mutable_graph()->add_output() = outputs.graph().output(0);
  Status status = import_status(outputs);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status, "graph output 'y' is declared more than once"));
  onnx::ModelProto inputs = relu_model({"1", "4"});
  inputs.set_ir_version(99);
  *inputs.mutable_graph()->add_input() = inputs.graph().input(0);
  status = import_status(inputs);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status, "graph input 'x' is declared more than once"));
}

// opset 0 is no opset at all, whatever the IR version says.
TEST_CASE("bad model: opset version 0") {
  onnx::ModelProto model = relu_model({"1", "4"});
  model.set_ir_version(99);
  model.mutable_opset_import(0)->set_version(0);
  const Status status = import_status(model);
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status, "version 0 of domain 'ai.onnx' is not a valid opset version"));
}

// IR 99 and opset 99: imported (OnePool's own checks pass) with a warning naming both versions;
// a current model has no warning.
TEST_CASE("import: a model newer than the ONNX library imports with a warning") {
  onnx::ModelProto model = relu_model({"1", "4"});
  model.set_ir_version(99);
  model.mutable_opset_import(0)->set_version(99);
  auto graph = import_onnx_bytes(serialize(model), "", {});
  REQUIRE_MESSAGE(graph.has_value(), graph.status().to_string());
  REQUIRE(graph->import_warnings.size() == 1);
  const std::string& warning = graph->import_warnings[0];
  CHECK(warning.find("IR version 99") != std::string::npos);
  CHECK(warning.find("opset 99 of domain 'ai.onnx'") != std::string::npos);
  CHECK(warning.find("the ONNX checker is skipped") != std::string::npos);
  auto current = import_onnx_bytes(serialize(relu_model({"1", "4"})), "", {});
  REQUIRE(current.has_value());
  CHECK(current->import_warnings.empty());
}

// An input dim of -5 is a malformed model, not an unbound symbolic dim named '?'.
TEST_CASE("bad model: a negative input dim") {
  onnx::ModelProto model = relu_model({"1", "4"});
  model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(-5);
  const Status status = import_status(model, {});
  CHECK(status.code() == StatusCode::kInvalidModel);
  CHECK(contains(status, "input 'x' declares dim -5 at axis 1"));
}

// Every model of the generated suite imports or fails with a message, never kInternal.
TEST_CASE("bad model: the generated model suite in ONEPOOL_MODELS_DIR") {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  if (dir == nullptr || !fs::is_directory(dir)) {
    MESSAGE("skipping: ONEPOOL_MODELS_DIR is not set or does not exist");
    return;
  }
  int seen = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    CAPTURE(entry.path().string());
    auto graph = import_onnx_file(entry.path().string(), {});
    if (!graph.has_value()) {
      CHECK(graph.status().code() != StatusCode::kInternal);
      CHECK_FALSE(graph.status().message().empty());
    }
    ++seen;
  }
  MESSAGE("imported ", seen, " models from ", std::string(dir));
}

}  // namespace onepool
