// Weights the CPU kernels repack (convolution panels, a MatMul's constant B in strips) are packed
// once per Model and shared by its Sessions (runtime/packed_weight_cache.h): a second Session
// adds no packed copy, both give the same bits, and the copies go with the last Session.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/generated_models.h"
#include "common/pattern_run.h"
#include "onepool/onepool.h"
#include "runtime/packed_weight_cache.h"

namespace {

using onepool::Model;

std::unique_ptr<onepool::Session> make_session(const std::shared_ptr<const Model>& model) {
  onepool::SessionOptions options;
  options.threads = 2;
  auto session = onepool::Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  return std::move(session).value();
}

// y = MatMul(x [24, 64], W [64, 40]) with W an initializer: one constant B to pack.
std::string matmul_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("matmul");
  const auto describe = [](onnx::ValueInfoProto* info, const char* name, int64_t rows,
                           int64_t cols) {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    type->mutable_shape()->add_dim()->set_dim_value(rows);
    type->mutable_shape()->add_dim()->set_dim_value(cols);
  };
  describe(graph->add_input(), "x", 24, 64);
  describe(graph->add_output(), "y", 24, 40);
  auto* w = graph->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(64);
  w->add_dims(40);
  for (int i = 0; i < 64 * 40; ++i) w->add_float_data(static_cast<float>(i % 7) * 0.1f - 0.3f);
  auto* node = graph->add_node();
  node->set_op_type("MatMul");
  node->add_input(std::string("x"));
  node->add_input(std::string("W"));
  node->add_output(std::string("y"));
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

void check_shared(const std::shared_ptr<const Model>& model) {
  const onepool::PackedWeightCache& cache = model->packed_weights();
  CHECK(cache.live_count() == 0);
  auto first = make_session(model);
  const size_t packed = cache.live_count();
  CHECK(packed > 0);
  auto second = make_session(model);
  CHECK(cache.live_count() == packed);
  CHECK(onepool_test::run_on_pattern(*model, *first) ==
        onepool_test::run_on_pattern(*model, *second));
  first.reset();
  CHECK(cache.live_count() == packed);  // the second Session still reads them
  second.reset();
  CHECK(cache.live_count() == 0);
}

}  // namespace

TEST_CASE("convolution weights are packed once for every Session of a Model") {
  check_shared(onepool_test::load_generated_model("inception.onnx", false));
}

TEST_CASE("a MatMul's constant B is packed once for every Session of a Model") {
  const std::string bytes = matmul_model();
  auto model =
      Model::load_from_memory({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, {});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  check_shared(*model);
}
