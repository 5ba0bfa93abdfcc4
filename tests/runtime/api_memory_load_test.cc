// Model::load_from_memory: the same import pipeline as Model::load on bytes the caller holds.
// The outputs match a file load bit for bit; every bad buffer is a Status naming the problem.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/pattern_run.h"
#include "onepool/onepool.h"

namespace {

using onepool::LoadOptions;
using onepool::Model;
using onepool::StatusCode;

std::string model_path(const std::string& file) {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/" + file;
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing generated model ", path);
  return path;
}

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

std::span<const std::byte> as_bytes(const std::string& text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

// Runs `model` once on inputs filled with a fixed pattern; returns every output's bytes.
std::vector<std::vector<std::byte>> run_once(std::shared_ptr<const Model> model) {
  onepool::SessionOptions options;
  options.threads = 2;
  auto session = onepool::Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  return onepool_test::run_on_pattern(*model, **session);
}

// y = Add(x, W), W float[4] stored in the external file "w.bin".
std::string external_data_model() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("external");
  for (auto* info : {graph->add_input(), graph->add_output()}) {
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    info->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  }
  graph->mutable_input(0)->set_name("x");
  graph->mutable_output(0)->set_name("y");
  auto* w = graph->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  auto* node = graph->add_node();
  node->set_op_type("Add");
  node->add_input(std::string("x"));
  node->add_input(std::string("W"));
  node->add_output(std::string("y"));
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

}  // namespace

// mlp.onnx (batch=1) and resnet18.onnx from a buffer: same inputs, outputs equal to a file
// load's bit for bit (memcmp), and the same weights_bytes.
TEST_CASE("load_from_memory gives the same outputs as load") {
  for (const char* file : {"mlp.onnx", "resnet18.onnx"}) {
    CAPTURE(file);
    LoadOptions options;
    options.dims = {{"batch", 1}};
    const std::string path = model_path(file);
    auto from_file = Model::load(path, options);
    REQUIRE_MESSAGE(from_file.has_value(), from_file.status().to_string());
    const std::vector<std::byte> bytes = read_bytes(path);
    auto from_memory = Model::load_from_memory(bytes, options);
    REQUIRE_MESSAGE(from_memory.has_value(), from_memory.status().to_string());
    CHECK((*from_memory)->weights_bytes() == (*from_file)->weights_bytes());
    const auto expected = run_once(*from_file);
    const auto got = run_once(*from_memory);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      REQUIRE(got[i].size() == expected[i].size());
      CHECK(std::memcmp(got[i].data(), expected[i].data(), got[i].size()) == 0);
    }
  }
}

// An empty span is the caller's mistake (kInvalidArgument), not a malformed model.
TEST_CASE("load_from_memory: an empty buffer") {
  auto model = Model::load_from_memory({}, LoadOptions{});
  REQUIRE_FALSE(model.has_value());
  CHECK(model.status().code() == StatusCode::kInvalidArgument);
  CHECK(model.status().message().find("the buffer is empty") != std::string::npos);
}

// Text and a truncated model are kInvalidModel, "the model buffer is not a valid ONNX model".
TEST_CASE("load_from_memory: bytes that are not a model") {
  const std::string text = "this is not an ONNX model, just some text";
  auto garbage = Model::load_from_memory(as_bytes(text), LoadOptions{});
  REQUIRE_FALSE(garbage.has_value());
  CHECK(garbage.status().code() == StatusCode::kInvalidModel);
  CHECK(garbage.status().message().find("the model buffer is not a valid ONNX model") !=
        std::string::npos);
  const std::vector<std::byte> bytes = read_bytes(model_path("mlp.onnx"));
  auto truncated = Model::load_from_memory(std::span(bytes).first(bytes.size() / 2), {});
  REQUIRE_FALSE(truncated.has_value());
  CHECK(truncated.status().code() == StatusCode::kInvalidModel);
}

// 2^31 bytes (one more than protobuf parses): kUnsupported naming the limit, checked before a
// byte is read (the mapping reserves address space only, PROT_NONE).
TEST_CASE("load_from_memory: a buffer above protobuf's 2 GiB limit") {
  const size_t size = size_t{1} << 31;
  void* address =
      mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(address != MAP_FAILED);
  auto model = Model::load_from_memory({static_cast<const std::byte*>(address), size}, {});
  munmap(address, size);
  REQUIRE_FALSE(model.has_value());
  CHECK(model.status().code() == StatusCode::kUnsupported);
  CHECK(model.status().message().find("2147483648 bytes") != std::string::npos);
  CHECK(model.status().message().find("2147483647") != std::string::npos);
}

// A tensor in an external file cannot be found without a folder: kInvalidModel naming the
// tensor 'W' and its file 'w.bin'.
TEST_CASE("load_from_memory: a model with external data") {
  const std::string bytes = external_data_model();
  auto model = Model::load_from_memory(as_bytes(bytes), LoadOptions{});
  REQUIRE_FALSE(model.has_value());
  CHECK(model.status().code() == StatusCode::kInvalidModel);
  const std::string message = model.status().message();
  CAPTURE(message);
  CHECK(message.find("tensor 'W'") != std::string::npos);
  CHECK(message.find("external file 'w.bin'") != std::string::npos);
  CHECK(message.find("loaded from memory") != std::string::npos);
}
