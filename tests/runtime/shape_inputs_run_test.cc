// Shape inputs at run time: a Session of a model whose ReduceSum axes is a graph input bound at
// load (Model::shape_inputs()) runs with or without that input in the feed; a fed value must
// equal the bound one. A DynamicSession keys its specializations on the fed values too.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onepool/dynamic_session.h"
#include "onepool/onepool.h"

using namespace onepool;

namespace {

void add_io(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
            int32_t elem_type, const std::vector<std::string>& dims) {
  auto* info = list->Add();
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const auto& dim : dims) {
    if (dim.find_first_not_of("0123456789") == std::string::npos) {
      shape->add_dim()->set_dim_value(std::stoll(dim));
    } else {
      shape->add_dim()->set_dim_param(dim);
    }
  }
}

// axes [1] int64 (graph input 0), data [3,2,2] float (graph input 1) → ReduceSum (keepdims) →
// reduced, declared with symbolic dims (its shape follows the axes). Axes first, so the
// ONNX-style feed order differs from Model::inputs().
std::string write_reduce_sum_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("reduce_sum_axes_input");
  add_io(graph->mutable_input(), "axes", onnx::TensorProto::INT64, {"1"});
  add_io(graph->mutable_input(), "data", onnx::TensorProto::FLOAT, {"3", "2", "2"});
  add_io(graph->mutable_output(), "reduced", onnx::TensorProto::FLOAT, {"a", "b", "c"});
  auto* node = graph->add_node();
  node->set_op_type(std::string("ReduceSum"));
  node->add_input(std::string("data"));
  node->add_input(std::string("axes"));
  node->add_output(std::string("reduced"));
  const auto path = std::filesystem::temp_directory_path() /
                    str_cat("onepool_shape_inputs_", ::getpid(), ".onnx");
  std::ofstream out(path, std::ios::binary);
  REQUIRE(model.SerializeToOstream(&out));
  return path.string();
}

// data = 0..11 as [3,2,2].
std::vector<float> data_values() {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  return data;
}

std::shared_ptr<const Model> load_with_axes(const std::string& path, int64_t axis) {
  LoadOptions options;
  options.shape_input_values["axes"] = std::vector<int64_t>{axis};
  auto model = Model::load(path, options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

std::unique_ptr<Session> session_of(std::shared_ptr<const Model> model) {
  SessionOptions options;
  options.threads = 1;
  auto session = Session::create(std::move(model), options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  return std::move(session).value();
}

}  // namespace

// axes bound to [1]: Model::inputs() is just data; reduced is [3,1,2] = pairwise sums of
// data rows: [0+2, 1+3, 4+6, 5+7, 8+10, 9+11] = [2,4,10,12,18,20]. The ONNX-style feed
// (axes, data) gives the same; the axes input needs no pool bytes (one input in the plan).
TEST_CASE("Session: a bound shape input may be fed or left out") {
  const std::string path = write_reduce_sum_model();
  auto model = load_with_axes(path, 1);
  REQUIRE(model->inputs().size() == 1);
  CHECK(model->inputs()[0].name == "data");
  REQUIRE(model->shape_inputs().size() == 1);
  const ShapeInputInfo& axes_info = model->shape_inputs()[0];
  CHECK(axes_info.info.name == "axes");
  CHECK(axes_info.model_position == 0);
  CHECK(std::get<std::vector<int64_t>>(axes_info.values) == std::vector<int64_t>{1});
  REQUIRE(model->outputs()[0].shape == Shape{3, 1, 2});
  auto session = session_of(model);
  std::vector<float> data = data_values();
  std::vector<float> reduced(6, -1.0f);
  const TensorView data_view{data.data(), DType::kFloat32, Shape{3, 2, 2}, Device{}};
  const TensorView out{reduced.data(), DType::kFloat32, Shape{3, 1, 2}, Device{}};
  const std::vector<float> expected{2, 4, 10, 12, 18, 20};
  REQUIRE(session->run({&data_view, 1}, {&out, 1}).is_ok());
  CHECK(reduced == expected);
  int64_t axes = 1;
  const TensorView axes_view{&axes, DType::kInt64, Shape{1}, Device{}};
  const std::vector<TensorView> full{axes_view, data_view};
  std::fill(reduced.begin(), reduced.end(), -1.0f);
  const Status status = session->run(full, {&out, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  CHECK(reduced == expected);
  std::filesystem::remove(path);
}

// Feeding axes [0] to a Session bound to [1] is an error naming the input and both values; a
// feed of the wrong count names both counts it accepts.
TEST_CASE("Session: a fed shape input that differs from its bound value is an error") {
  const std::string path = write_reduce_sum_model();
  auto session = session_of(load_with_axes(path, 1));
  std::vector<float> data = data_values();
  std::vector<float> reduced(6);
  int64_t axes = 0;
  const TensorView axes_view{&axes, DType::kInt64, Shape{1}, Device{}};
  const TensorView data_view{data.data(), DType::kFloat32, Shape{3, 2, 2}, Device{}};
  const TensorView out{reduced.data(), DType::kFloat32, Shape{3, 1, 2}, Device{}};
  const std::vector<TensorView> full{axes_view, data_view};
  const Status differs = session->run(full, {&out, 1});
  REQUIRE_FALSE(differs.is_ok());
  CHECK(differs.code() == StatusCode::kInvalidArgument);
  CHECK(differs.message().rfind("input 'axes': bound to [1] at load, got [0]", 0) == 0);
  const std::vector<TensorView> three{axes_view, data_view, data_view};
  const Status count = session->run(three, {&out, 1});
  REQUIRE_FALSE(count.is_ok());
  CHECK(count.message() == "expected 1 inputs (or 2 with the shape inputs), got 3");
  std::filesystem::remove(path);
}

// A DynamicSession created with axes [1] serves axes [0] too when the feed carries it: a new
// specialization ([1,2,2] = column sums: [0+4+8, 1+5+9, 2+6+10, 3+7+11] = [12,15,18,21]); axes
// [1] again is a cache hit, as is a feed without the shape input (the creation value).
TEST_CASE("DynamicSession: shape input values key the specialization cache") {
  const std::string path = write_reduce_sum_model();
  DynamicSessionOptions options;
  options.mode = PoolMode::kDynamic;
  options.session.threads = 1;
  options.load.shape_input_values["axes"] = std::vector<int64_t>{1};
  auto created = DynamicSession::create(path, options);
  REQUIRE_MESSAGE(created.has_value(), created.status().to_string());
  DynamicSession& session = **created;
  REQUIRE(session.inputs().size() == 1);
  REQUIRE(session.shape_inputs().size() == 1);
  std::vector<float> data = data_values();
  const TensorView data_view{data.data(), DType::kFloat32, Shape{3, 2, 2}, Device{}};
  int64_t axes = 0;
  const TensorView axes_view{&axes, DType::kInt64, Shape{1}, Device{}};
  const std::vector<TensorView> full{axes_view, data_view};

  auto infos = session.output_infos(full);
  REQUIRE_MESSAGE(infos.has_value(), infos.status().to_string());
  REQUIRE((*infos)[0].shape == Shape{1, 2, 2});
  std::vector<float> columns(4);
  const TensorView columns_view{columns.data(), DType::kFloat32, Shape{1, 2, 2}, Device{}};
  REQUIRE(session.run(full, {&columns_view, 1}).is_ok());
  CHECK(columns == std::vector<float>{12, 15, 18, 21});
  const int64_t misses = session.stats().cache_misses;

  axes = 1;
  std::vector<float> rows(6);
  const TensorView rows_view{rows.data(), DType::kFloat32, Shape{3, 1, 2}, Device{}};
  REQUIRE(session.run(full, {&rows_view, 1}).is_ok());
  CHECK(rows == std::vector<float>{2, 4, 10, 12, 18, 20});
  REQUIRE(session.run({&data_view, 1}, {&rows_view, 1}).is_ok());
  axes = 0;
  REQUIRE(session.run(full, {&columns_view, 1}).is_ok());
  CHECK(columns == std::vector<float>{12, 15, 18, 21});
  CHECK(session.stats().cache_misses == misses + 1);  // axes [1] once, then hits
  CHECK(session.last_specialization().cache_hit);
  std::filesystem::remove(path);
}

// The model needs axes: loading without a value fails and says how to give one.
TEST_CASE("Model::load: a shape input without a value") {
  const std::string path = write_reduce_sum_model();
  auto model = Model::load(path, LoadOptions{});
  REQUIRE_FALSE(model.has_value());
  CHECK(model.status().message().find("input 'axes': node 'ReduceSum_0' (ReduceSum) input 1 "
                                      "(axes) needs its value") != std::string::npos);
  CHECK(model.status().message().find("--values axes:") != std::string::npos);
  std::filesystem::remove(path);
}
