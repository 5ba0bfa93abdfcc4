// Four threads import their first models at the same moment, in a fresh process: the ONNX
// library's lazily filled schema and version maps are set up once, before any import reads them
// (a ThreadSanitizer build reported 7-9 races here). Every import succeeds with the same graph.
// This file holds this one test so that the imports really are the process's first.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "planner/import/onnx_import.h"

namespace onepool {
namespace {

// x[1,4] -> Relu -> Sigmoid -> Softmax -> y, opset 13 (several schemas, shape inference).
std::string three_op_model() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("first_load");
  auto* x = graph->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {1, 4}) {
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(dim);
  }
  *graph->add_output() = *x;
  graph->mutable_output(0)->set_name("y");
  const std::vector<std::string> ops = {"Relu", "Sigmoid", "Softmax"};
  const std::vector<std::string> names = {"x", "t0", "t1", "y"};
  for (size_t i = 0; i < ops.size(); ++i) {
    auto* node = graph->add_node();
    node->set_op_type(ops[i]);
    node->add_input(names[i]);
    node->add_output(names[i + 1]);
  }
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

}  // namespace

TEST_CASE("concurrent first imports all succeed with the same graph") {
  const std::string bytes = three_op_model();
  constexpr int kThreads = 4;
  std::atomic<int> waiting{kThreads};
  std::vector<std::string> summaries(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      --waiting;
      while (waiting.load() > 0) {
      }  // start together
      auto graph = import_onnx_bytes(bytes, "", {});
      if (!graph) {
        summaries[static_cast<size_t>(t)] = graph.status().to_string();
        return;
      }
      for (const Node& node : graph->nodes) summaries[static_cast<size_t>(t)] += node.op_type + " ";
      const Value& y = graph->values[static_cast<size_t>(graph->outputs[0])];
      summaries[static_cast<size_t>(t)] += y.shape.to_string();
    });
  }
  for (auto& thread : threads) thread.join();
  for (const std::string& summary : summaries) CHECK(summary == "Relu Sigmoid Softmax [1,4]");
}

}  // namespace onepool
