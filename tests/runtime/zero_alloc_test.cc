// Proves that Session::run performs no heap allocation once the Session exists: global
// operator new and (outside AddressSanitizer builds) malloc/calloc/realloc are replaced by
// counting versions, and many runs of real models must count exactly 0.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <vector>

#include "common/allocation_counter.h"
#include "common/generated_models.h"
#include "onepool/onepool.h"

namespace {

struct Buffers {
  std::vector<std::vector<std::byte>> storage;
  std::vector<onepool::TensorView> inputs;
  std::vector<onepool::TensorView> outputs;
};

Buffers make_buffers(const onepool::Model& model) {
  Buffers buffers;
  buffers.storage.reserve(model.inputs().size() + model.outputs().size());
  auto add = [&](const onepool::TensorInfo& info, std::vector<onepool::TensorView>& views) {
    buffers.storage.emplace_back(static_cast<size_t>(info.shape.element_count()) *
                                 onepool::dtype_size(info.dtype));
    views.push_back({buffers.storage.back().data(), info.dtype, info.shape, {}});
  };
  for (const auto& info : model.inputs()) add(info, buffers.inputs);
  for (const auto& info : model.outputs()) add(info, buffers.outputs);
  return buffers;
}

// Loads `file` from the generated suite, warms up, then counts allocations over `runs` runs.
long allocations_during_runs(const std::string& file, int runs, bool has_batch_dim) {
  auto model = onepool_test::load_generated_model(file, has_batch_dim);
  onepool::SessionOptions options;
  options.threads = 2;
  auto session = onepool::Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  Buffers buffers = make_buffers(*model);
  for (int i = 0; i < 2; ++i) REQUIRE((*session)->run(buffers.inputs, buffers.outputs).is_ok());
  g_allocations = 0;
  g_counting = true;
  bool all_ok = true;
  for (int i = 0; i < runs; ++i) {
    all_ok = (*session)->run(buffers.inputs, buffers.outputs).is_ok() && all_ok;
  }
  g_counting = false;
  CHECK(all_ok);
  return g_allocations.load();
}

}  // namespace

// The counter itself works: one vector allocation while counting is 1 (or more), not 0.
TEST_CASE("the allocation counter sees allocations") {
  g_allocations = 0;
  g_counting = true;
  auto* p = new std::vector<int>(100);
  g_counting = false;
  delete p;
  CHECK(g_allocations.load() >= 1);
}

// An MLP (Gemm, Relu, Softmax): 50 runs, 0 allocations.
TEST_CASE("Session::run allocates nothing: MLP") {
  CHECK(allocations_during_runs("mlp.onnx", 50, true) == 0);
}

// MobileNetV2 (Conv with im2col workspaces, depthwise Conv, Clip, Add, GlobalAveragePool,
// Gemm): 10 runs, 0 allocations.
TEST_CASE("Session::run allocates nothing: MobileNetV2") {
  CHECK(allocations_during_runs("mobilenetv2.onnx", 10, false) == 0);
}

// float16 CNN (Cast in and out; every other node a float32 kernel behind the half adapter, its
// conversions in the planned workspace) and a bfloat16 MLP: 10 runs each, 0 allocations.
TEST_CASE("Session::run allocates nothing: float16 CNN and bfloat16 MLP") {
  CHECK(allocations_during_runs("cnn_fp16.onnx", 10, false) == 0);
  CHECK(allocations_during_runs("mlp_bf16.onnx", 10, false) == 0);
}

// int8: the QDQ CNN (QLinearConv / QLinearMatMul after the QDQ fusion, MaxPool, Add) and the
// dynamically quantized CNN and transformer block (DynamicQuantizeLinear, ConvInteger,
// MatMulInteger, LayerNormalization, Softmax): 10 runs each, 0 allocations.
TEST_CASE("Session::run allocates nothing: int8 QDQ and dynamically quantized models") {
  CHECK(allocations_during_runs("cnn_qdq_int8.onnx", 10, false) == 0);
  CHECK(allocations_during_runs("cnn_dynamic_int8.onnx", 10, false) == 0);
  CHECK(allocations_during_runs("transformer_dynamic_int8.onnx", 10, false) == 0);
}

// Control flow and recurrent layers: two If nodes with runtime conditions (each branch a nested
// plan inside the If's workspace; one runs an LSTM and a nested runtime If, the other a GRU),
// two Loops (a scanning for-loop, a while loop) and a reversed Scan: 10 runs each, 0 allocations.
TEST_CASE("Session::run allocates nothing: runtime If with LSTM and GRU branches, Loop, Scan") {
  CHECK(allocations_during_runs("if_runtime.onnx", 10, false) == 0);
  CHECK(allocations_during_runs("loop_runtime.onnx", 10, false) == 0);
  CHECK(allocations_during_runs("scan_runtime.onnx", 10, false) == 0);
}

// Outputs of data-dependent size (NonZero, Compress, Unique, NonMaxSuppression), planned at
// their bounds: the kernels sort and count in their planned workspaces, and the actual shapes
// go to fixed slots, so a run allocates nothing either.
TEST_CASE("Session::run allocates nothing: NonZero, Compress, Unique, NonMaxSuppression") {
  CHECK(allocations_during_runs("data_dependent_heads.onnx", 10, false) == 0);
}
