// What `onepool inspect` shows: the model as declared, before any shape binding.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"

namespace onepool {

struct ModelIoInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<std::string> dims;  // "1", "batch", or "?" for an unnamed unknown dim
};

struct ModelInfo {
  std::string path;
  std::string graph_name;
  std::string producer;  // "pytorch 2.1"
  int64_t ir_version = 0;
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain ("" = ai.onnx) → version
  std::vector<ModelIoInfo> inputs;                      // graph inputs that are not initializers
  std::vector<ModelIoInfo> outputs;
  std::map<std::string, int64_t> op_histogram;  // op type → node count
  int64_t node_count = 0;
  int64_t initializer_count = 0;
  int64_t initializer_bytes = 0;
  int64_t constant_node_count = 0;  // Constant nodes: weights too, after import
  int64_t constant_node_bytes = 0;
  std::vector<std::string> symbolic_dims;  // distinct symbolic dim names, in first-seen order
  std::string suggested_shapes;            // ready-to-paste --shapes value
  std::string suggested_shapes_source;     // test data, static dims, or "a guess (...)"
};

/// Reads a model's declared interface and op histogram. Does not bind or infer shapes.
Expected<ModelInfo> inspect_onnx_file(const std::string& path);

}  // namespace onepool
