// TopK with a runtime K and Range with runtime scalars, their outputs planned at a user's bound
// (ImportOptions::bounds, `--bound`): the value inputs stay runtime inputs, each run returns the
// actual shape (Session::output_shape) with the elements written densely from the start, a run
// needing more than the bound fails naming the node and the bound, and without a bound the load
// error says a --bound is the alternative to binding the value.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/if_model_builder.h"

namespace onepool {

using namespace if_models;  // NOLINT(build/namespaces): the test helpers

namespace {

// A graph output of this dtype whose dims are symbolic (its length is data-dependent).
void add_unshaped_output(onnx::GraphProto* graph, const std::string& name, int32_t elem_type,
                         int rank) {
  auto* output = graph->add_output();
  output->set_name(name);
  auto* tensor = output->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  for (int axis = 0; axis < rank; ++axis) {
    tensor->mutable_shape()->add_dim()->set_dim_param(str_cat(name, "_", axis));
  }
}

// values, indices = TopK(x [rows, cols], k [1]) along `axis` (largest).
onnx::ModelProto topk_model(int64_t rows, int64_t cols, int64_t axis) {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  add_input(graph, "x", {rows, cols});
  add_input(graph, "k", {1}, onnx::TensorProto::INT64);
  auto* node = add_node(graph, "TopK", {"x", "k"}, {"values", "indices"}, "topk");
  auto* attribute = node->add_attribute();
  attribute->set_name(std::string("axis"));
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(axis);
  add_unshaped_output(graph, "values", onnx::TensorProto::FLOAT, 2);
  add_unshaped_output(graph, "indices", onnx::TensorProto::INT64, 2);
  return model;
}

// y = Range(start, limit, delta), int64 scalars.
onnx::ModelProto range_model() {
  onnx::ModelProto model = new_model();
  auto* graph = model.mutable_graph();
  for (const char* name : {"start", "limit", "delta"}) {
    add_input(graph, name, {}, onnx::TensorProto::INT64);
  }
  add_node(graph, "Range", {"start", "limit", "delta"}, {"y"}, "range");
  add_unshaped_output(graph, "y", onnx::TensorProto::INT64, 1);
  return model;
}

struct Loaded {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Session> session;
};

Expected<Loaded> load(const onnx::ModelProto& proto, const std::map<std::string, int64_t>& bounds) {
  ImportOptions options;
  options.bounds = bounds;
  ONEPOOL_ASSIGN_OR_RETURN(Graph graph, import_model(proto, options));
  Loaded loaded;
  ONEPOOL_ASSIGN_OR_RETURN(loaded.model, Model::from_graph(std::move(graph), LoadOptions{}));
  ONEPOOL_ASSIGN_OR_RETURN(loaded.session, Session::create(loaded.model, SessionOptions{}));
  return loaded;
}

// One run's outputs: each as raw bytes cut to its actual shape, and that shape.
struct Outputs {
  std::vector<Shape> shapes;
  std::vector<std::vector<std::byte>> bytes;

  template <class T>
  std::vector<T> values(size_t i) const {
    std::vector<T> out(bytes[i].size() / sizeof(T));
    std::memcpy(out.data(), bytes[i].data(), bytes[i].size());
    return out;
  }
};

Expected<Outputs> run(Loaded& loaded, std::vector<TensorView> inputs) {
  Outputs outputs;
  std::vector<TensorView> views;
  for (const TensorInfo& info : loaded.model->outputs()) {
    outputs.bytes.emplace_back(static_cast<size_t>(info.shape.element_count()) *
                               dtype_size(info.dtype));
    views.push_back({outputs.bytes.back().data(), info.dtype, info.shape, Device{}});
  }
  ONEPOOL_RETURN_IF_ERROR(loaded.session->run(inputs, views));
  for (size_t i = 0; i < views.size(); ++i) {
    outputs.shapes.push_back(loaded.session->output_shape(i));
    outputs.bytes[i].resize(static_cast<size_t>(outputs.shapes[i].element_count()) *
                            dtype_size(views[i].dtype));
  }
  return outputs;
}

}  // namespace

// x [2, 5], K at run time, values and indices planned at [2, 4] (--bound values=4).
TEST_CASE("TopK: a runtime K up to its --bound; beyond it a clear error") {
  auto loaded = load(topk_model(2, 5, 1), {{"values", 4}});
  REQUIRE_MESSAGE(loaded.has_value(), loaded.status().to_string());
  CHECK(loaded->model->outputs()[0].shape == Shape{2, 4});
  CHECK(loaded->model->outputs()[0].bound.find("at most 4 (--bound values=4)") !=
        std::string::npos);
  std::vector<float> x{5, 1, 4, 2, 3, -1, -5, -2, -4, -3};
  int64_t k = 2;
  const std::vector<TensorView> inputs = {{x.data(), DType::kFloat32, Shape{2, 5}, Device{}},
                                          {&k, DType::kInt64, Shape{1}, Device{}}};
  auto two = run(*loaded, inputs);
  REQUIRE_MESSAGE(two.has_value(), two.status().to_string());
  CHECK(two->shapes[0] == Shape{2, 2});
  CHECK(two->shapes[1] == Shape{2, 2});
  CHECK(two->values<float>(0) == std::vector<float>{5, 4, -1, -2});
  CHECK(two->values<int64_t>(1) == std::vector<int64_t>{0, 2, 0, 2});
  k = 4;
  auto four = run(*loaded, inputs);
  REQUIRE_MESSAGE(four.has_value(), four.status().to_string());
  CHECK(four->values<float>(0) == std::vector<float>{5, 4, 3, 2, -1, -2, -3, -4});
  k = 0;
  auto none = run(*loaded, inputs);
  REQUIRE_MESSAGE(none.has_value(), none.status().to_string());
  CHECK(none->shapes[0] == Shape{2, 0});
  k = 5;
  auto five = run(*loaded, inputs);
  REQUIRE_FALSE(five.has_value());
  CHECK(five.status().code() == StatusCode::kOutOfRange);
  CHECK(contains(five.status(),
                 "input 1 (K) is 5 at run time, the outputs are planned for at "
                 "most 4 (--bound)"));
  k = 6;
  CHECK(contains(run(*loaded, inputs).status(), "outside [0, 5] (the axis)"));
}

// Along the outer axis of x [3, 2] (inner dim 2): the rows written densely for K = 1.
TEST_CASE("TopK: a runtime K along an outer axis writes the actual shape densely") {
  auto loaded = load(topk_model(3, 2, 0), {{"indices", 2}});
  REQUIRE_MESSAGE(loaded.has_value(), loaded.status().to_string());
  CHECK(loaded->model->outputs()[1].shape == Shape{2, 2});
  std::vector<float> x{1, 6, 3, 4, 2, 5};
  int64_t k = 1;
  auto one = run(*loaded, {{x.data(), DType::kFloat32, Shape{3, 2}, Device{}},
                           {&k, DType::kInt64, Shape{1}, Device{}}});
  REQUIRE_MESSAGE(one.has_value(), one.status().to_string());
  CHECK(one->shapes[0] == Shape{1, 2});
  CHECK(one->values<float>(0) == std::vector<float>{3, 6});
  CHECK(one->values<int64_t>(1) == std::vector<int64_t>{1, 0});
}

TEST_CASE("Range: runtime scalars up to its --bound") {
  auto loaded = load(range_model(), {{"y", 10}});
  REQUIRE_MESSAGE(loaded.has_value(), loaded.status().to_string());
  CHECK(loaded->model->outputs()[0].shape == Shape{10});
  int64_t start = 0, limit = 7, delta = 2;
  const std::vector<TensorView> inputs = {{&start, DType::kInt64, Shape{}, Device{}},
                                          {&limit, DType::kInt64, Shape{}, Device{}},
                                          {&delta, DType::kInt64, Shape{}, Device{}}};
  auto evens = run(*loaded, inputs);
  REQUIRE_MESSAGE(evens.has_value(), evens.status().to_string());
  CHECK(evens->shapes[0] == Shape{4});
  CHECK(evens->values<int64_t>(0) == std::vector<int64_t>{0, 2, 4, 6});
  start = 5, limit = 0, delta = 1;
  auto empty = run(*loaded, inputs);
  REQUIRE_MESSAGE(empty.has_value(), empty.status().to_string());
  CHECK(empty->shapes[0] == Shape{0});
  start = 0, limit = 30;
  const auto over = run(*loaded, inputs);
  REQUIRE_FALSE(over.has_value());
  CHECK(over.status().code() == StatusCode::kOutOfRange);
  CHECK(contains(over.status(),
                 "start/limit/delta give 30 elements, the output is planned for "
                 "at most 10 (--bound)"));
}

TEST_CASE("TopK and Range without a --bound: the load error offers one") {
  CHECK(contains(import_model(topk_model(2, 5, 1)).status(),
                 "(or give its output a --bound: the value is then fed at run time)"));
  CHECK(contains(import_model(range_model()).status(),
                 "(or give its output a --bound: the value is then fed at run time)"));
  ImportOptions not_bounded;
  not_bounded.bounds = {{"x", 3}};
  CHECK(contains(import_model(topk_model(2, 5, 1), not_bounded).status(),
                 "--bound names 'x', which is not an output whose length a --bound can fix"));
}

}  // namespace onepool
