// LoadOptions::logger and SessionOptions::logger: the caller's callback receives the import
// warnings, the optimization summary and the kernel of each node; Session::run logs nothing.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "onepool/onepool.h"
#include "planner/core/graph.h"

namespace {

using onepool::LogLevel;

// Every message a logger received, in order.
struct Messages {
  std::vector<std::pair<LogLevel, std::string>> entries;
  onepool::Logger logger() {
    return [this](LogLevel level, std::string_view message) {
      entries.emplace_back(level, std::string(message));
    };
  }
  // How many messages of `level` contain `text`.
  int count(LogLevel level, const std::string& text) const {
    int found = 0;
    for (const auto& [entry_level, message] : entries) {
      found += entry_level == level && message.find(text) != std::string::npos ? 1 : 0;
    }
    return found;
  }
};

// y = Relu(x), x float[1,4], declared with IR version 99 and opset 99 (newer than the ONNX
// library: imported with a warning, the checker skipped).
std::string newer_opset_model() {
  onnx::ModelProto model;
  model.set_ir_version(99);
  model.add_opset_import()->set_version(99);
  auto* graph = model.mutable_graph();
  graph->set_name("newer");
  for (auto* info : {graph->add_input(), graph->add_output()}) {
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->add_dim()->set_dim_value(1);
    shape->add_dim()->set_dim_value(4);
  }
  graph->mutable_input(0)->set_name("x");
  graph->mutable_output(0)->set_name("y");
  auto* node = graph->add_node();
  node->set_op_type("Relu");
  node->add_input(std::string("x"));
  node->add_output(std::string("y"));
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

std::string mlp_path() {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/mlp.onnx";
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing generated model ", path);
  return path;
}

}  // namespace

// The opset-99 model: exactly one kWarning, the same text as Model::warnings()[0] ("opset 99
// of domain 'ai.onnx'"), and one kInfo optimization summary ("nodes 1 -> 1").
TEST_CASE("LoadOptions::logger receives the import warning and the optimization summary") {
  const std::string bytes = newer_opset_model();
  Messages messages;
  onepool::LoadOptions options;
  options.logger = messages.logger();
  auto model = onepool::Model::load_from_memory(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  REQUIRE((*model)->warnings().size() == 1);
  CHECK(messages.count(LogLevel::kWarning, "") == 1);
  CHECK(messages.count(LogLevel::kWarning, (*model)->warnings()[0]) == 1);
  CHECK(messages.count(LogLevel::kWarning, "opset 99 of domain 'ai.onnx'") == 1);
  CHECK(messages.count(LogLevel::kInfo, "optimization: nodes 1 -> 1") == 1);
  CHECK(messages.count(LogLevel::kDebug, "load timings: import ") == 1);
}

// mlp.onnx (batch 1): Session::create logs one kDebug "kernel of node '...'" line per node and
// one kInfo "session on cpu" line; 10 runs add nothing (messages count stays the same).
TEST_CASE("SessionOptions::logger: kernels at create, nothing during run") {
  onepool::LoadOptions load;
  load.dims = {{"batch", 1}};
  auto model = onepool::Model::load(mlp_path(), load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  Messages messages;
  onepool::SessionOptions options;
  options.threads = 2;
  options.logger = messages.logger();
  auto session = onepool::Session::create(*model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  const size_t nodes = (*model)->graph().nodes.size();
  REQUIRE(nodes > 0);
  CHECK(messages.count(LogLevel::kDebug, "kernel of node '") == static_cast<int>(nodes));
  CHECK(messages.count(LogLevel::kInfo, "session on cpu: ") == 1);
  const size_t after_create = messages.entries.size();
  CHECK(after_create == nodes + 1);

  std::vector<std::vector<float>> storage;
  std::vector<onepool::TensorView> inputs;
  std::vector<onepool::TensorView> outputs;
  storage.reserve((*model)->inputs().size() + (*model)->outputs().size());
  for (const auto& info : (*model)->inputs()) {
    storage.emplace_back(info.shape.element_count(), 0.5f);
    inputs.push_back({storage.back().data(), info.dtype, info.shape, {}});
  }
  for (const auto& info : (*model)->outputs()) {
    storage.emplace_back(info.shape.element_count(), 0.0f);
    outputs.push_back({storage.back().data(), info.dtype, info.shape, {}});
  }
  for (int i = 0; i < 10; ++i) REQUIRE((*session)->run(inputs, outputs).is_ok());
  CHECK(messages.entries.size() == after_create);
}

// No logger (the default): a load with a warning and a Session still work, silently.
TEST_CASE("no logger is silent and harmless") {
  const std::string bytes = newer_opset_model();
  auto model = onepool::Model::load_from_memory(
      {reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, onepool::LoadOptions{});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  CHECK((*model)->warnings().size() == 1);
  auto session = onepool::Session::create(*model, onepool::SessionOptions{});
  CHECK(session.has_value());
}

// Each level has a name.
TEST_CASE("log_level_name") {
  CHECK(std::string(onepool::log_level_name(LogLevel::kDebug)) == "debug");
  CHECK(std::string(onepool::log_level_name(LogLevel::kInfo)) == "info");
  CHECK(std::string(onepool::log_level_name(LogLevel::kWarning)) == "warning");
}
