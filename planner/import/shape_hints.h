// `inspect`'s ready-to-paste --shapes line and where it came from: the shapes of the test data
// stored beside the model (ONNX model-zoo layout, test_data_set_0/input_N.pb), else the model's
// static dims, else a guess that says it is one (a symbolic batch dim as 1, the symbolic height
// and width of an image-like input as 224, any other symbolic dim as 1).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onepool {

struct ShapeSuggestion {
  std::string shapes;  // name:1x3x224x224[,name:...]
  std::string source;  // "test data beside the model (...)", "static dims", "a guess: ..."
};

/// `inputs`: the graph's caller inputs (not initializers), in order; `model_path` locates the
/// test data. A test tensor file over 1 GiB, unreadable or not a TensorProto is ignored (the
/// suggestion then comes from the model).
ShapeSuggestion suggest_input_shapes(const std::vector<const onnx::ValueInfoProto*>& inputs,
                                     const std::string& model_path);

}  // namespace onepool
