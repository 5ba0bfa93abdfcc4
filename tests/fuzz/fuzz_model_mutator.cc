// libFuzzer with a structure-aware mutator: inputs are serialized ModelProtos, and each mutation
// changes one field of a model that parses (a dim, an attribute, a node input, an op type, an
// initializer's dims or dtype, a node removed or repeated), so most inputs get past the parser
// and ONNX's checks to shape inference, constant folding, graph optimization, kernel preparation,
// planning and one run. Every stage must return a Status or succeed; a crash, a sanitizer report
// or an uncaught exception is a bug. Tensors are limited to 1 MiB each and a run to an 8 MiB pool,
// so memory and time per input stay bounded.
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/import/onnx_import.h"

namespace {

// A small valid model to start from when the input does not parse: Conv -> Relu -> MaxPool ->
// Reshape -> Gemm -> Softmax on x[1,2,8,8].
onnx::ModelProto seed_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name(std::string("seed"));
  auto* x = graph->add_input();
  x->set_name(std::string("x"));
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {1, 2, 8, 8}) {
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(dim);
  }
  auto* y = graph->add_output();
  y->set_name(std::string("y"));
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 2; ++i) y->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
    auto* tensor = graph->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    int64_t count = 1;
    for (int64_t dim : dims) {
      tensor->add_dims(dim);
      count *= dim;
    }
    for (int64_t i = 0; i < count; ++i) tensor->add_float_data(0.01f * static_cast<float>(i % 7));
  };
  weight("w", {2, 2, 3, 3});
  weight("g", {32, 4});
  auto* shape = graph->add_initializer();
  shape->set_name(std::string("shape"));
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(1);
  shape->add_int64_data(32);
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = graph->add_node();
    n->set_op_type(op);
    for (const auto& name : in) n->add_input(name);
    n->add_output(out);
    return n;
  };
  auto* conv = node("Conv", {"x", "w"}, "c");
  auto* pads = conv->add_attribute();
  pads->set_name(std::string("pads"));
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  node("Relu", {"c"}, "r");
  auto* pool = node("MaxPool", {"r"}, "p");
  auto* kernel = pool->add_attribute();
  kernel->set_name(std::string("kernel_shape"));
  kernel->set_type(onnx::AttributeProto::INTS);
  kernel->add_ints(2);
  kernel->add_ints(2);
  auto* strides = pool->add_attribute();
  *strides = *kernel;
  strides->set_name(std::string("strides"));
  node("Reshape", {"p", "shape"}, "f");
  node("Gemm", {"f", "g"}, "m");
  node("Softmax", {"m"}, "y");
  return model;
}

constexpr int64_t kInteresting[] = {
    0, 1, 2, 3, -1, -2, 7, 64, 1 << 20, int64_t{1} << 31, int64_t{1} << 40, INT64_MAX, INT64_MIN};
const char* const kOps[] = {"Relu",   "Conv",    "MaxPool",   "AveragePool",   "Reshape",
                            "Gemm",   "MatMul",  "Softmax",   "Transpose",     "Concat",
                            "Gather", "Slice",   "Pad",       "Resize",        "Expand",
                            "Tile",   "Split",   "ReduceMax", "ArgMax",        "Flatten",
                            "Add",    "Squeeze", "Unsqueeze", "Cast",          "Where",
                            "TopK",   "CumSum",  "LSTM",      "ConvTranspose", "Einsum"};
const char* const kAttributeNames[] = {"axis",         "axes",      "pads",  "strides", "perm",
                                       "kernel_shape", "dilations", "group", "to",      "keepdims"};

struct Mutator {
  std::mt19937_64 random;
  size_t pick(size_t n) { return n == 0 ? 0 : static_cast<size_t>(random() % n); }
  int64_t value() { return kInteresting[pick(std::size(kInteresting))]; }

  std::vector<std::string> names(const onnx::GraphProto& graph) {
    std::vector<std::string> all = {""};
    for (const auto& input : graph.input()) all.push_back(input.name());
    for (const auto& tensor : graph.initializer()) all.push_back(tensor.name());
    for (const auto& node : graph.node())
      all.insert(all.end(), node.output().begin(), node.output().end());
    return all;
  }

  void mutate_attribute(onnx::NodeProto* node) {
    if (node->attribute_size() == 0 || random() % 3 == 0) {
      auto* attribute = node->add_attribute();
      attribute->set_name(std::string(kAttributeNames[pick(std::size(kAttributeNames))]));
      attribute->set_type(random() % 2 ? onnx::AttributeProto::INTS : onnx::AttributeProto::INT);
      if (attribute->type() == onnx::AttributeProto::INT) attribute->set_i(value());
      for (size_t i = 0, n = pick(5); i < n && attribute->type() == onnx::AttributeProto::INTS;
           ++i) {
        attribute->add_ints(value());
      }
      return;
    }
    auto* attribute = node->mutable_attribute(static_cast<int>(pick(node->attribute_size())));
    switch (attribute->type()) {
      case onnx::AttributeProto::INT:
        attribute->set_i(value());
        break;
      case onnx::AttributeProto::FLOAT: {
        const float floats[] = {0.0f, -1.0f, 1e30f, std::numeric_limits<float>::quiet_NaN()};
        attribute->set_f(floats[pick(4)]);
        break;
      }
      case onnx::AttributeProto::INTS:
        if (attribute->ints_size() > 0 && random() % 4 != 0) {
          attribute->set_ints(static_cast<int>(pick(attribute->ints_size())), value());
        } else {
          attribute->add_ints(value());
        }
        break;
      default:
        attribute->set_type(onnx::AttributeProto::INT);
        attribute->set_i(value());
    }
  }

  void mutate(onnx::ModelProto* model) {
    auto* graph = model->mutable_graph();
    switch (random() % 8) {
      case 0: {  // a graph input's dim
        if (graph->input_size() == 0) return;
        auto* shape = graph->mutable_input(static_cast<int>(pick(graph->input_size())))
                          ->mutable_type()
                          ->mutable_tensor_type()
                          ->mutable_shape();
        if (shape->dim_size() == 0) return;
        shape->mutable_dim(static_cast<int>(pick(shape->dim_size())))->set_dim_value(value());
        return;
      }
      case 1:
      case 2:
        if (graph->node_size() > 0) {
          mutate_attribute(graph->mutable_node(static_cast<int>(pick(graph->node_size()))));
        }
        return;
      case 3: {  // a node input rewired
        if (graph->node_size() == 0) return;
        auto* node = graph->mutable_node(static_cast<int>(pick(graph->node_size())));
        const auto all = names(*graph);
        if (node->input_size() == 0 || random() % 4 == 0) {
          node->add_input(all[pick(all.size())]);
        } else {
          node->set_input(static_cast<int>(pick(node->input_size())), all[pick(all.size())]);
        }
        return;
      }
      case 4:  // another op type
        if (graph->node_size() > 0) {
          graph->mutable_node(static_cast<int>(pick(graph->node_size())))
              ->set_op_type(std::string(kOps[pick(std::size(kOps))]));
        }
        return;
      case 5: {  // an initializer's dims or dtype
        if (graph->initializer_size() == 0) return;
        auto* tensor =
            graph->mutable_initializer(static_cast<int>(pick(graph->initializer_size())));
        if (random() % 2 && tensor->dims_size() > 0) {
          tensor->set_dims(static_cast<int>(pick(tensor->dims_size())), value());
        } else {
          tensor->set_data_type(static_cast<int32_t>(pick(17)));
        }
        return;
      }
      case 6:  // a node removed
        if (graph->node_size() > 1) {
          graph->mutable_node()->DeleteSubrange(static_cast<int>(pick(graph->node_size())), 1);
        }
        return;
      default:  // a node repeated, writing a new tensor
        if (graph->node_size() > 0 && graph->node_size() < 64) {
          onnx::NodeProto copy = graph->node(static_cast<int>(pick(graph->node_size())));
          for (int i = 0; i < copy.output_size(); ++i) {
            copy.set_output(i, copy.output(i) + "_" + std::to_string(graph->node_size()));
          }
          *graph->add_node() = copy;
        }
    }
  }
};

// Loads, prepares, plans and runs once (on whatever the pool holds): each step may fail with a
// Status; none may crash.
void exercise(const std::string& bytes) {
  onepool::ImportOptions import_options;
  import_options.dims = {{"batch", 1}};
  auto graph = onepool::import_onnx_bytes(bytes, "", import_options);
  if (!graph) return;
  onepool::LoadOptions load_options;
  load_options.max_tensor_bytes = size_t{1} << 20;
  auto model = onepool::Model::from_graph(std::move(graph).value(), load_options);
  if (!model) return;
  onepool::SessionOptions session_options;
  session_options.threads = 1;
  auto session = onepool::Session::create(*model, session_options);
  if (!session) return;
  if ((*session)->plan().pool_bytes > (size_t{8} << 20)) return;  // keeps each run short
  (void)(*session)->run_in_place();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) model = seed_model();
  Mutator mutator{std::mt19937_64(seed)};
  for (int i = 0, n = 1 + static_cast<int>(seed % 3); i < n; ++i) mutator.mutate(&model);
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > max_size) {
    if (!seed_model().SerializeToString(&bytes) || bytes.size() > max_size) return size;
  }
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exercise(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
