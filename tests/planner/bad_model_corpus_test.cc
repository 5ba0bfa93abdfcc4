// The malformed-model corpus: families of small models, each broken in one way, generated here
// and run through the whole load path (import, checks, graph optimization, kernel preparation,
// planning). Every case must end in a Status — never a crash, an exception or kInternal — whose
// message holds the expected text: the node or tensor at fault and what is wrong with it. CI runs
// this file under ASan + UBSan.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/import/onnx_import.h"

namespace onepool {
namespace {

using Ints = std::vector<int64_t>;

// Builds a one-graph ModelProto; every string goes through std::string (protobuf's const char*
// overloads trip GCC 12's -Wrestrict).
class ProtoBuilder {
 public:
  explicit ProtoBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(opset);
    model_.mutable_graph()->set_name(std::string("corpus"));
  }
  ProtoBuilder& input(const std::string& name, const Ints& dims,
                      int32_t type = onnx::TensorProto::FLOAT) {
    describe(model_.mutable_graph()->add_input(), name, dims, type);
    return *this;
  }
  // An output of `rank` unknown dims (the checker wants a shape; inference fills the dims).
  ProtoBuilder& output(const std::string& name, int rank, int32_t type = onnx::TensorProto::FLOAT) {
    auto* info = model_.mutable_graph()->add_output();
    info->set_name(name);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int axis = 0; axis < rank; ++axis) shape->add_dim();
    return *this;
  }
  ProtoBuilder& floats(const std::string& name, const Ints& dims, const std::vector<float>& data) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims) tensor->add_dims(dim);
    for (float value : data) tensor->add_float_data(value);
    return *this;
  }
  ProtoBuilder& int64s(const std::string& name, const Ints& dims, const Ints& data) {
    auto* tensor = model_.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::INT64);
    for (int64_t dim : dims) tensor->add_dims(dim);
    for (int64_t value : data) tensor->add_int64_data(value);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* node = model_.mutable_graph()->add_node();
    node->set_op_type(op);
    node->set_name(name.empty() ? std::string("bad_node") : name);
    for (const auto& input : inputs) node->add_input(input);
    for (const auto& output : outputs) node->add_output(output);
    return *node;
  }
  onnx::ModelProto& proto() { return model_; }
  std::string bytes() const {
    std::string bytes;
    model_.SerializeToString(&bytes);
    return bytes;
  }

 private:
  static void describe(onnx::ValueInfoProto* info, const std::string& name, const Ints& dims,
                       int32_t type) {
    info->set_name(name);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t dim : dims) shape->add_dim()->set_dim_value(dim);
  }
  onnx::ModelProto model_;
};

void set_ints(onnx::NodeProto& node, const std::string& name, const Ints& values) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}

void set_int(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

struct CorpusCase {
  std::string family;
  std::string name;
  std::string bytes;
  std::vector<std::string> expected;  // every part must appear in the message
};

// The whole load path on one model: the first failing step's Status.
Status load_status(const std::string& bytes) {
  auto graph = import_onnx_bytes(bytes, "", {});
  if (!graph) return graph.status();
  auto model = Model::from_graph(std::move(graph).value(), LoadOptions{});
  if (!model) return model.status();
  auto session = Session::create(*model, SessionOptions{});
  return session.status();
}

// Family 1: window attributes of 5 ops x 4 attributes x 4 bad values = 80 cases.
void add_window_cases(std::vector<CorpusCase>& cases) {
  const std::vector<std::string> ops = {"Conv", "ConvTranspose", "MaxPool", "AveragePool",
                                        "LpPool"};
  const std::map<std::string, Ints> bad_values = {
      {"strides", {0, -1, int64_t{1} << 40, INT64_MIN}},
      {"dilations", {0, -3, int64_t{1} << 40, INT64_MAX}},
      {"kernel_shape", {0, -2, int64_t{1} << 33, INT64_MIN}},
      {"pads", {-1, -7, int64_t{1} << 40, INT64_MIN}},
  };
  for (const std::string& op : ops) {
    for (const auto& [attribute, values] : bad_values) {
      for (int64_t value : values) {
        ProtoBuilder b;
        b.input("x", {1, 2, 8, 8}).output("y", 4);
        const bool conv = op == "Conv" || op == "ConvTranspose";
        if (conv) b.floats("w", {2, 2, 3, 3}, std::vector<float>(36, 0.5f));
        auto& node = b.node(
            op, conv ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}, {"y"});
        const size_t count = attribute == "pads" ? 4 : 2;
        Ints list(count, attribute == "pads" ? 0 : 1);
        list[1] = value;  // axis 1 (or pads' second begin) is the bad one
        if (attribute == "kernel_shape") list[0] = 3;
        set_ints(node, attribute, list);
        if (attribute != "kernel_shape" && !conv) set_ints(node, "kernel_shape", {3, 3});
        cases.push_back({"window attributes",
                         str_cat(op, " ", attribute, " ", value),
                         b.bytes(),
                         {"node 'bad_node' (" + op + ")",
                          str_cat("attribute '", attribute, "'[1] is ", value)}});
      }
    }
  }
}

// Family 2: axis attributes out of range on x[2,3,4]: 8 ops x 4 values = 32 cases.
void add_axis_cases(std::vector<CorpusCase>& cases) {
  const Ints values = {5, -4, 100, INT64_MIN};
  const std::vector<std::string> ops = {"Softmax", "LogSoftmax", "Hardmax", "Flatten",
                                        "Concat",  "Gather",     "ArgMax",  "ArgMin"};
  for (const std::string& op : ops) {
    for (int64_t value : values) {
      ProtoBuilder b;
      b.input("x", {2, 3, 4})
          .output("y", op == "Flatten" ? 2 : 3,
                  op.rfind("Arg", 0) == 0 ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
      std::vector<std::string> inputs = {"x"};
      if (op == "Concat") inputs.push_back("x");
      if (op == "Gather") {
        b.int64s("indices", {1}, {0});
        inputs.push_back("indices");
      }
      set_int(b.node(op, inputs, {"y"}), "axis", value);
      cases.push_back(
          {"axis attributes", str_cat(op, " axis ", value), b.bytes(), {"bad_node", "axis"}});
    }
  }
}

// Family 3: graph structure.
void add_structure_cases(std::vector<CorpusCase>& cases) {
  auto add = [&](const std::string& name, ProtoBuilder& b, std::vector<std::string> expected) {
    cases.push_back({"graph structure", name, b.bytes(), std::move(expected)});
  };
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"y"}, {"y"});
    add("self loop", b, {"cycle of 1 node(s)", "bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"ghost"}, {"y"});
    add("dangling input", b, {"input tensor 'ghost'", "nothing produces it"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1).output("z", 1);
    b.node("Relu", {"x"}, {"y"}, "first");
    add("output nothing produces", b, {"graph output 'z' is not produced by any node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"}, "first");
    b.node("Neg", {"x"}, {"y"}, "second");
    add("two producers", b, {"output tensor 'y'", "second"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"x"}, "overwrite");
    b.node("Neg", {"x"}, {"y"}, "second");
    add("node writes a graph input", b, {"output tensor 'x' is already a graph input"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1).output("y", 1);
    b.node("Relu", {"x"}, {"y"});
    add("output declared twice", b, {"graph output 'y' is declared more than once"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"});
    add("input declared twice", b, {"'x'"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("NoSuchOp", {"x"}, {"y"});
    add("unknown op", b, {"NoSuchOp"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"}).set_domain(std::string("com.example"));
    add("unknown domain", b, {"com.example"});
  }
  {
    ProtoBuilder b(0);
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"});
    add("opset 0", b, {"version 0 of domain 'ai.onnx' is not a valid opset version"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x", "x"}, {"y"});
    add("too many inputs", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Add", {"x"}, {"y"});
    add("too few inputs", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"}).set_op_type(std::string(""));
    add("empty op type", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {1, -5}).output("y", 2);
    b.node("Relu", {"x"}, {"y"});
    add("negative input dim", b, {"input 'x' declares dim -5 at axis 1"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}, onnx::TensorProto::UNDEFINED).output("y", 1);
    b.node("Relu", {"x"}, {"y"});
    add("undefined input dtype", b, {"'x'"});
  }
  {
    ProtoBuilder b;
    b.input("x", {int64_t{1} << 31, int64_t{1} << 31, 16}).output("y", 1);
    b.node("Relu", {"x"}, {"y"});
    add("input of 2^66 elements", b, {"'x'"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4}).output("y", 1);
    b.node("Relu", {"x"}, {"y"});
    b.proto().set_ir_version(2);
    add("IR version 2", b, {"IR"});
  }
}

// Family 4: shapes and dtypes that do not fit together.
void add_shape_cases(std::vector<CorpusCase>& cases) {
  auto add = [&](const std::string& name, ProtoBuilder& b, std::vector<std::string> expected) {
    cases.push_back({"shapes and dtypes", name, b.bytes(), std::move(expected)});
  };
  {
    ProtoBuilder b;
    b.input("a", {2, 3}).input("b", {4, 5}).output("y", 2);
    b.node("MatMul", {"a", "b"}, {"y"});
    add("MatMul inner dims", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("a", {2, 3}).input("b", {4, 3}).output("y", 2);
    b.node("Add", {"a", "b"}, {"y"});
    add("Add not broadcastable", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("a", {2, 3}).input("b", {2, 4}).output("y", 2);
    set_int(b.node("Concat", {"a", "b"}, {"y"}), "axis", 0);
    add("Concat mismatched dims", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 3}).int64s("shape", {2}, {4, 4}).output("y", 2);
    b.node("Reshape", {"x", "shape"}, {"y"});
    add("Reshape to other element count", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 3}).int64s("shape", {2}, {-1, -1}).output("y", 2);
    b.node("Reshape", {"x", "shape"}, {"y"});
    add("Reshape with two -1", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 3}).int64s("shape", {2}, {3, 3}).output("y", 2);
    b.node("Expand", {"x", "shape"}, {"y"});
    add("Expand incompatible", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 3}).output("y", 2);
    set_ints(b.node("Transpose", {"x"}, {"y"}), "perm", {0, 0});
    add("Transpose repeated perm", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 3}).output("y", 2);
    set_ints(b.node("Transpose", {"x"}, {"y"}), "perm", {0, 5});
    add("Transpose perm out of range", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {4, 3}).int64s("indices", {1}, {9}).output("y", 2);
    b.node("Gather", {"x", "indices"}, {"y"});
    add("Gather constant index out of range", b,
        {"the model is invalid",
         "node 'bad_node' (Gather): index 9 at position 0 is out of range"});
  }
  {
    ProtoBuilder b;
    b.input("x", {1, 3, 8, 8})
        .floats("w", {4, 2, 3, 3}, std::vector<float>(72, 1.0f))
        .output("y", 4);
    b.node("Conv", {"x", "w"}, {"y"});
    add("Conv channel mismatch", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {1, 3, 8, 8})
        .floats("w", {4, 1, 3, 3}, std::vector<float>(36, 1.0f))
        .output("y", 4);
    set_int(b.node("Conv", {"x", "w"}, {"y"}), "group", 2);
    add("Conv group not dividing channels", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {1, 2, 4, 4}).output("y", 4);
    set_ints(b.node("MaxPool", {"x"}, {"y"}), "kernel_shape", {9, 9});
    add("pool kernel larger than the input", b,
        {"model is invalid", "kernel_shape[0] = 9", "holds 4", "must fit in the padded input"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 6}).int64s("split", {2}, {2, 2}).output("y", 2).output("z", 2);
    set_int(b.node("Split", {"x", "split"}, {"y", "z"}), "axis", 1);
    add("Split sizes not summing", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 6}).int64s("starts", {1}, {0}).int64s("ends", {1}, {4});
    b.int64s("axes", {1}, {1}).int64s("steps", {1}, {0}).output("y", 2);
    b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
    add("Slice step 0", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 6}).int64s("repeats", {2}, {1, -2}).output("y", 2);
    b.node("Tile", {"x", "repeats"}, {"y"});
    add("Tile negative repeats", b,
        {"model is invalid", "bad_node", "repeats[1] = -2 is negative"});
  }
  {
    ProtoBuilder b;
    b.int64s("shape", {2}, {3, -4}).output("y", 2);
    b.node("ConstantOfShape", {"shape"}, {"y"});
    add("ConstantOfShape negative dim", b, {"model is invalid", "shape[1] = -4 is negative"});
  }
  {
    ProtoBuilder b;
    b.input("x", {2, 3}).output("y", 2, onnx::TensorProto::INT64);
    auto& node = b.node("Cast", {"x"}, {"y"});
    set_int(node, "to", 12345);
    add("Cast to an unknown dtype", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("a", {2, 3}).input("b", {2, 3}, onnx::TensorProto::INT64).output("y", 2);
    b.node("Add", {"a", "b"}, {"y"});
    add("Add of float and int64", b, {"bad_node"});
  }
  {
    ProtoBuilder b;
    b.input("x", {1, 2, 3}).int64s("pads", {6}, {0, 0, 0, 0, 0, -9}).output("y", 3);
    b.node("Pad", {"x", "pads"}, {"y"});
    add("Pad removing more than the axis", b,
        {"model is invalid", "remove 9 elements from axis 2", "holds 3"});
  }
  {
    ProtoBuilder b;
    b.input("x", {1, 2}).int64s("pads", {4}, {0, 0, 0, int64_t{1} << 40}).output("y", 2);
    b.node("Pad", {"x", "pads"}, {"y"});
    add("Pad to 2^40 elements", b, {"node 'bad_node' (Pad)", "bytes"});
  }
  {
    ProtoBuilder b;
    b.input("x", {1, 1}).int64s("shape", {2}, {1 << 20, 1 << 20}).output("y", 2);
    b.node("Expand", {"x", "shape"}, {"y"});
    add("Expand to 2^40 elements", b, {"node 'bad_node' (Expand)", "bytes"});
  }
}

// Family 5: initializers whose data does not match their declaration.
void add_initializer_cases(std::vector<CorpusCase>& cases) {
  auto add = [&](const std::string& name, ProtoBuilder& b, std::vector<std::string> expected) {
    cases.push_back({"initializers", name, b.bytes(), std::move(expected)});
  };
  auto relu_of_weight = [](ProtoBuilder& b) {
    b.input("x", {4}).output("y", 1);
    b.node("Add", {"x", "w"}, {"y"});
  };
  {
    ProtoBuilder b;
    b.floats("w", {4}, {1, 2, 3});
    relu_of_weight(b);
    add("float_data shorter than dims", b, {"'w'"});
  }
  {
    ProtoBuilder b;
    b.floats("w", {4}, {1, 2, 3, 4, 5});
    relu_of_weight(b);
    add("float_data longer than dims", b, {"'w'"});
  }
  {
    ProtoBuilder b;
    b.floats("w", {4}, {});
    b.proto().mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(7, '\0'));
    relu_of_weight(b);
    add("raw_data of 7 bytes for 4 floats", b, {"'w'"});
  }
  {
    ProtoBuilder b;
    b.floats("w", {-4}, {1, 2, 3, 4});
    relu_of_weight(b);
    add("negative initializer dim", b, {"'w'"});
  }
  {
    ProtoBuilder b;
    b.floats("w", {4}, {1, 2, 3, 4});
    b.proto().mutable_graph()->mutable_initializer(0)->set_data_type(0);
    relu_of_weight(b);
    add("undefined initializer dtype", b, {"tensor name: w", "UNDEFINED"});
  }
  {
    ProtoBuilder b;
    b.floats("w", {int64_t{1} << 40}, {});
    relu_of_weight(b);
    add("initializer of 2^40 elements without data", b, {"tensor name: w"});
  }
  {
    ProtoBuilder b;
    b.floats("w", {4}, {});
    auto* tensor = b.proto().mutable_graph()->mutable_initializer(0);
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = tensor->add_external_data();
    entry->set_key(std::string("location"));
    entry->set_value(std::string("weights.bin"));
    relu_of_weight(b);
    add("external data with no model folder", b, {"'w'"});
  }
  {
    ProtoBuilder b;
    b.floats("w", {4}, {1, 2, 3, 4}).floats("w", {4}, {1, 2, 3, 4});
    relu_of_weight(b);
    add("initializer declared twice", b, {"w initializer name is not unique"});
  }
}

std::vector<CorpusCase> corpus() {
  std::vector<CorpusCase> cases;
  add_window_cases(cases);
  add_axis_cases(cases);
  add_structure_cases(cases);
  add_shape_cases(cases);
  add_initializer_cases(cases);
  return cases;
}

}  // namespace

// Each case: a Status that is not ok and not kInternal, with every expected part in its message.
// The counts per family are printed (run with -s to see them).
TEST_CASE("bad model corpus: every case is a clear error") {
  const std::vector<CorpusCase> cases = corpus();
  CHECK(cases.size() >= 150);
  std::map<std::string, int> per_family;
  for (const CorpusCase& c : cases) {
    const std::string label = c.family + ": " + c.name;
    CAPTURE(label);
    const Status status = load_status(c.bytes);
    CHECK_FALSE(status.is_ok());
    CHECK(status.code() != StatusCode::kInternal);
    for (const std::string& part : c.expected) {
      CHECK_MESSAGE(status.message().find(part) != std::string::npos, "expected '", part,
                    "' in: ", status.to_string());
    }
    ++per_family[c.family];
    if (std::getenv("ONEPOOL_CORPUS_VERBOSE") != nullptr) {
      MESSAGE(label, "\n    -> ", status.to_string());
    }
  }
  for (const auto& [family, count] : per_family) MESSAGE(family, ": ", count, " cases");
}

}  // namespace onepool
