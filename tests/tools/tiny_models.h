// Tiny ONNX models written by tests that drive the CLI: small enough that a run takes about a
// microsecond, and with pools of known size.
#pragma once

#include <onnx/onnx_pb.h>

#include <fstream>
#include <string>
#include <vector>

namespace onepool::test {

inline void add_float_io(onnx::ValueInfoProto* info, const std::string& name,
                         const std::vector<std::string>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (const std::string& dim : dims) {
    auto* added = tensor->mutable_shape()->add_dim();
    if (!dim.empty() && dim[0] >= '0' && dim[0] <= '9') {
      added->set_dim_value(std::stoll(dim));
    } else {
      added->set_dim_param(dim);
    }
  }
}

/// y = Relu(x), x and y float32 of `dims` (numbers fixed, names symbolic), written to `path`
/// (strings as std::string: protobuf's const char* overloads trip GCC 12's -Wrestrict).
/// With dims {"1", "32"}: x and y take 128 bytes each, 256 aligned: a 512-byte pool.
inline void write_relu_model(const std::string& path, const std::vector<std::string>& dims) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(std::string("relu"));
  add_float_io(graph->add_input(), "x", dims);
  add_float_io(graph->add_output(), "y", dims);
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(std::string("Relu"));
  node->add_input(std::string("x"));
  node->add_output(std::string("y"));
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
}

}  // namespace onepool::test
