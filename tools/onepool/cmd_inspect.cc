// `onepool inspect MODEL.onnx`: the model's declared interface, opsets, op histogram, weights,
// and a ready-to-paste --shapes line.
#include <cstdio>
#include <iostream>
#include <memory>

#include "planner/core/byte_units.h"
#include "planner/import/model_info.h"
#include "tools/onepool/commands.h"

namespace onepool::cli {

namespace {

std::string type_text(const ModelIoInfo& io) {
  std::string dims;
  for (const auto& dim : io.dims) dims += str_cat(dims.empty() ? "" : ",", dim);
  return str_cat(dtype_name(io.dtype), "[", dims, "]");
}

void print_io(const char* title, const std::vector<ModelIoInfo>& ios) {
  std::cout << title << " (" << ios.size() << "):\n";
  for (const auto& io : ios) std::cout << "  " << io.name << "  " << type_text(io) << "\n";
}

void print_info(const ModelInfo& info) {
  std::cout << "model:        " << info.path << "\n";
  std::cout << "graph:        " << info.graph_name << "\n";
  std::cout << "producer:     " << (info.producer.empty() ? "(none)" : info.producer) << "\n";
  std::cout << "ir_version:   " << info.ir_version << "\n";
  std::cout << "opsets:      ";
  for (const auto& [domain, version] : info.opsets) {
    std::cout << " " << (domain.empty() ? "ai.onnx" : domain) << "=" << version;
  }
  std::cout << "\n";
  print_io("inputs", info.inputs);
  print_io("outputs", info.outputs);
  std::cout << "nodes:        " << info.node_count << "\n";
  std::cout << "initializers: " << info.initializer_count << ", "
            << format_bytes(info.initializer_bytes) << "\n";
  std::cout << "constants:    " << info.constant_node_count << " Constant nodes, "
            << format_bytes(info.constant_node_bytes) << "\n";
  std::cout << "ops (" << info.op_histogram.size() << " types):\n";
  for (const auto& [op, count] : info.op_histogram) {
    std::cout << "  " << op << "  " << count << "\n";
  }
  std::cout << "symbolic dims:";
  for (const auto& dim : info.symbolic_dims) std::cout << " " << dim;
  std::cout << (info.symbolic_dims.empty() ? " (none)\n" : "\n");
  std::cout << "--shapes=" << info.suggested_shapes << "\n";
  std::cout << "  from " << info.suggested_shapes_source << "\n";
}

}  // namespace

void register_inspect_command(CLI::App& app, int& exit_code) {
  auto model_path = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(
      "inspect", "Show a model's inputs, outputs, symbolic dims, ops and weights");
  command->add_option("model", *model_path, "MODEL.onnx")->required();
  command->callback([model_path, &exit_code] {
    auto info = inspect_onnx_file(*model_path);
    if (!info) {
      std::cerr << "error: " << info.status().message() << "\n";
      exit_code = 1;
      return;
    }
    print_info(*info);
    exit_code = 0;
  });
}

}  // namespace onepool::cli
