// CUDA vs CPU parity: every CUDA op family on hand-built single-node graphs, every model of the
// generated suite (${ONEPOOL_MODELS_DIR}/manifest.json), device memory stable over 100 runs, and
// no host allocation in Session::run.
//
// Without a usable device (no driver, no GPU, or a build without the CUDA backend) each test
// prints "no CUDA device: <reason>" and exits 77, which CTest reports as skipped.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/graph.h"

#ifdef ONEPOOL_HAVE_CUDA
#include <cuda_runtime.h>

#include "runtime/cuda/cuda_device.h"
#endif

// --- host allocation counter: counts operator new while `g_counting` is set -------------------
namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

// The replacements pair malloc with free; GCC 12 cannot see that through inlining and warns.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace onepool {
namespace {

// Exits 77 (CTest skip) with the reason when cuda:0 cannot be used.
void require_device() {
#ifdef ONEPOOL_HAVE_CUDA
  const Status status = cuda::check_cuda_device(Device{DeviceKind::kCuda, 0});
  if (status.is_ok()) return;
  std::printf("no CUDA device: %s\n", status.message().c_str());
#else
  std::printf("no CUDA device: this OnePool was built without the CUDA backend\n");
#endif
  std::fflush(stdout);
  std::exit(77);
}

// --- tensors and graphs ---------------------------------------------------------------------

HostTensor random_floats(Shape shape, float lo, float hi, uint32_t seed) {
  HostTensor t{DType::kFloat32, shape, {}};
  t.data.resize(static_cast<size_t>(shape.element_count()) * sizeof(float));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < shape.element_count(); ++i) t.as_mutable<float>()[i] = dist(rng);
  return t;
}

HostTensor int64s(Shape shape, std::vector<int64_t> values) {
  HostTensor t{DType::kInt64, shape, {}};
  t.data.resize(values.size() * sizeof(int64_t));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

HostTensor random_ints(DType dtype, Shape shape, int64_t lo, int64_t hi, uint32_t seed) {
  HostTensor t{dtype, shape, {}};
  t.data.resize(static_cast<size_t>(shape.element_count()) * dtype_size(dtype));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi - 1);
  for (int64_t i = 0; i < shape.element_count(); ++i) {
    const int64_t v = dist(rng);
    if (dtype == DType::kInt64) t.as_mutable<int64_t>()[i] = v;
    if (dtype == DType::kInt32) t.as_mutable<int32_t>()[i] = static_cast<int32_t>(v);
    if (dtype == DType::kBool) t.as_mutable<bool>()[i] = v != 0;
  }
  return t;
}

struct In {
  HostTensor tensor;
  bool constant = false;
};

struct Case {
  std::string op;
  std::vector<std::optional<In>> inputs;
  std::vector<std::pair<DType, Shape>> outputs;
  AttributeMap attributes;
};

Attribute int_attr(int64_t v) { Attribute a; a.kind = Attribute::Kind::kInt; a.i = v; return a; }
Attribute float_attr(float v) { Attribute a; a.kind = Attribute::Kind::kFloat; a.f = v; return a; }
Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a; a.kind = Attribute::Kind::kInts; a.ints = std::move(v); return a;
}
Attribute string_attr(std::string v) {
  Attribute a; a.kind = Attribute::Kind::kString; a.s = std::move(v); return a;
}

Graph single_node_graph(const Case& c) {
  Graph graph;
  graph.opset = 17;
  Node node;
  node.name = "test_" + c.op;
  node.op_type = c.op;
  node.attributes = c.attributes;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i]) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    Value value;
    value.name = "input_" + std::to_string(i);
    value.dtype = c.inputs[i]->tensor.dtype;
    value.shape = c.inputs[i]->tensor.shape;
    value.kind = c.inputs[i]->constant ? ValueKind::kWeight : ValueKind::kGraphInput;
    if (c.inputs[i]->constant) {
      value.weight_index = static_cast<int32_t>(graph.weights.size());
      graph.weights.push_back(c.inputs[i]->tensor);
    }
    const ValueId id = graph.add_value(value);
    if (!c.inputs[i]->constant) graph.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    Value value;
    value.name = "output_" + std::to_string(i);
    value.dtype = c.outputs[i].first;
    value.shape = c.outputs[i].second;
    value.is_graph_output = true;
    const ValueId id = graph.add_value(value);
    graph.outputs.push_back(id);
    node.outputs.push_back(id);
  }
  graph.nodes.push_back(node);
  graph.rebuild_edges();
  return graph;
}

// --- running and comparing --------------------------------------------------------------------

std::vector<HostTensor> allocate_outputs(const Model& model) {
  std::vector<HostTensor> outputs;
  for (const TensorInfo& info : model.outputs()) {
    HostTensor t{info.dtype, info.shape, {}};
    t.data.assign(static_cast<size_t>(info.shape.element_count()) * dtype_size(info.dtype),
                  std::byte{0xCD});
    outputs.push_back(std::move(t));
  }
  return outputs;
}

std::vector<TensorView> views_of(std::vector<HostTensor>& tensors) {
  std::vector<TensorView> views;
  for (HostTensor& t : tensors) views.push_back(TensorView{t.data.data(), t.dtype, t.shape, {}});
  return views;
}

Expected<std::vector<HostTensor>> run_on(std::shared_ptr<const Model> model, Device device,
                                         std::vector<HostTensor>& inputs) {
  SessionOptions options;
  options.device = device;
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(model, options));
  std::vector<HostTensor> outputs = allocate_outputs(*model);
  std::vector<TensorView> in = views_of(inputs);
  std::vector<TensorView> out = views_of(outputs);
  ONEPOOL_RETURN_IF_ERROR(session->run(in, out));
  ONEPOOL_RETURN_IF_ERROR(session->run(in, out));  // second run: the CUDA graph replay path
  return outputs;
}

// Empty when equal within |a - b| <= atol + rtol * |b| (exact for integers and bools).
std::string compare(const HostTensor& cuda, const HostTensor& cpu, double atol, double rtol) {
  if (cuda.dtype != cpu.dtype || cuda.data.size() != cpu.data.size()) return "dtype/size differ";
  const int64_t count = cpu.shape.element_count();
  for (int64_t i = 0; i < count; ++i) {
    const double a = cuda.float_at(i);
    const double b = cpu.float_at(i);
    const bool exact = cpu.dtype != DType::kFloat32;
    const bool both_nan = std::isnan(a) && std::isnan(b);
    if (both_nan || (exact ? a == b : std::abs(a - b) <= atol + rtol * std::abs(b))) continue;
    return str_cat("element ", i, ": cuda ", a, " vs cpu ", b);
  }
  return "";
}

void check_parity(std::shared_ptr<const Model> model, std::vector<HostTensor> inputs,
                  const std::string& label, double atol, double rtol) {
  CAPTURE(label);
  Expected<std::vector<HostTensor>> cpu = run_on(model, Device{}, inputs);
  REQUIRE_MESSAGE(cpu.has_value(), cpu.status().to_string());
  Expected<std::vector<HostTensor>> cuda = run_on(model, Device{DeviceKind::kCuda, 0}, inputs);
  REQUIRE_MESSAGE(cuda.has_value(), cuda.status().to_string());
  for (size_t i = 0; i < cpu->size(); ++i) {
    const std::string difference = compare((*cuda)[i], (*cpu)[i], atol, rtol);
    CHECK_MESSAGE(difference.empty(), label, " output ", i, ": ", difference);
  }
}

void check_case(const Case& c) {
  LoadOptions options;
  options.optimize = "none";
  Expected<std::shared_ptr<const Model>> model = Model::from_graph(single_node_graph(c), options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  std::vector<HostTensor> inputs;
  for (const auto& in : c.inputs) {
    if (in && !in->constant) inputs.push_back(in->tensor);
  }
  check_parity(*model, std::move(inputs), c.op, 1e-4, 1e-3);
}

In var(HostTensor t) { return In{std::move(t), false}; }
In constant(HostTensor t) { return In{std::move(t), true}; }
In rnd(Shape s, uint32_t seed = 1, float lo = -1.0f, float hi = 1.0f) {
  return var(random_floats(s, lo, hi, seed));
}
// A constant (weight) input with values in [-1, 1).
In weight(Shape s, uint32_t seed) { return constant(random_floats(s, -1.0f, 1.0f, seed)); }

Case make_case(std::string op, std::vector<std::optional<In>> inputs, DType dtype, Shape out,
               std::vector<std::pair<std::string, Attribute>> attributes = {}) {
  Case c{std::move(op), std::move(inputs), {{dtype, out}}, {}};
  for (auto& [name, value] : attributes) c.attributes.set(name, value);
  return c;
}

constexpr DType kF = DType::kFloat32;

}  // namespace

// Binary ops broadcast [2,3,4] against [3,1]; comparisons give bool; Where picks by a mask.
TEST_CASE("elementwise parity") {
  require_device();
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    check_case(make_case(op, {rnd({2, 3, 4}, 1), rnd({3, 1}, 2, 0.5f, 2.0f)}, kF, {2, 3, 4}));
  }
  check_case(make_case("Pow", {rnd({2, 3, 4}, 1, 0.1f, 2.0f), rnd({4}, 2)}, kF, {2, 3, 4}));
  for (const char* op : {"Equal", "Less", "Greater"}) {
    check_case(make_case(op, {var(random_ints(DType::kInt64, {2, 5}, 0, 3, 3)),
                              var(random_ints(DType::kInt64, {5}, 0, 3, 4))},
                         DType::kBool, {2, 5}));
  }
  for (const char* op : {"And", "Or"}) {
    check_case(make_case(op, {var(random_ints(DType::kBool, {4, 3}, 0, 2, 5)),
                              var(random_ints(DType::kBool, {1, 3}, 0, 2, 6))},
                         DType::kBool, {4, 3}));
  }
  check_case(make_case("Where", {var(random_ints(DType::kBool, {3, 1}, 0, 2, 7)),
                                 rnd({3, 4}, 8), rnd({4}, 9)}, kF, {3, 4}));
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "HardSwish"}) {
    check_case(make_case(op, {rnd({2, 3, 5}, 10, -3.0f, 3.0f)}, kF, {2, 3, 5}));
  }
  for (const char* op : {"Log", "Sqrt"}) {
    check_case(make_case(op, {rnd({7, 3}, 11, 0.1f, 4.0f)}, kF, {7, 3}));
  }
  check_case(make_case("LeakyRelu", {rnd({10}, 12)}, kF, {10}, {{"alpha", float_attr(0.2f)}}));
  check_case(make_case("HardSigmoid", {rnd({10}, 13, -4, 4)}, kF, {10},
                       {{"alpha", float_attr(0.3f)}, {"beta", float_attr(0.4f)}}));
  HostTensor lo{kF, Shape{}, std::vector<std::byte>(4)}, hi = lo;
  *lo.as_mutable<float>() = -0.5f;
  *hi.as_mutable<float>() = 0.25f;
  check_case(make_case("Clip", {rnd({3, 4}, 14), constant(lo), constant(hi)}, kF, {3, 4}));
  check_case(make_case("Cast", {rnd({6}, 15, -5, 5)}, DType::kInt64, {6},
                       {{"to", int_attr(7)}}));
  check_case(make_case("Cast", {var(random_ints(DType::kInt64, {6}, -9, 9, 16))}, kF, {6},
                       {{"to", int_attr(1)}}));
  check_case(make_case("Cast", {rnd({6}, 17)}, DType::kBool, {6}, {{"to", int_attr(9)}}));
}

// Reductions over inner, outer and mixed axes; Softmax along the last and a middle axis.
TEST_CASE("reduce parity") {
  require_device();
  check_case(make_case("ReduceMean", {rnd({2, 3, 4}, 20)}, kF, {2, 1, 4},
                       {{"axes", ints_attr({1})}}));
  check_case(make_case("ReduceSum", {rnd({2, 3, 4}, 21), constant(int64s({2}, {0, 2}))}, kF,
                       {3}, {{"keepdims", int_attr(0)}}));
  check_case(make_case("ReduceMax", {rnd({4, 300}, 22)}, kF, {4, 1}, {{"axes", ints_attr({-1})}}));
  check_case(make_case("Softmax", {rnd({3, 5, 70}, 23, -5, 5)}, kF, {3, 5, 70}));
  check_case(make_case("Softmax", {rnd({3, 5, 7}, 24, -5, 5)}, kF, {3, 5, 7},
                       {{"axis", int_attr(1)}}));
  check_case(make_case("LayerNormalization",
                       {rnd({4, 6, 32}, 25), constant(random_floats({32}, 0.5f, 1.5f, 26)),
                        weight({32}, 27)},
                       kF, {4, 6, 32}, {{"axis", int_attr(-1)}, {"epsilon", float_attr(1e-5f)}}));
}

// 3x3/2 pad 1 max pooling, 2x2/2 average with and without pad counting, global average.
TEST_CASE("pool parity") {
  require_device();
  check_case(make_case("MaxPool", {rnd({2, 3, 9, 9}, 30)}, kF, {2, 3, 5, 5},
                       {{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})},
                        {"pads", ints_attr({1, 1, 1, 1})}}));
  check_case(make_case("AveragePool", {rnd({1, 2, 8, 8}, 31)}, kF, {1, 2, 4, 4},
                       {{"kernel_shape", ints_attr({2, 2})}, {"strides", ints_attr({2, 2})}}));
  check_case(make_case("AveragePool", {rnd({1, 2, 7, 7}, 32)}, kF, {1, 2, 4, 4},
                       {{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})},
                        {"pads", ints_attr({1, 1, 1, 1})}, {"count_include_pad", int_attr(1)}}));
  check_case(make_case("GlobalAveragePool", {rnd({2, 8, 7, 7}, 33)}, kF, {2, 8, 1, 1}));
}

// im2col + GEMM (3x3 pad 1 with bias and a fused Relu; grouped stride 2), direct 1x1 GEMM,
// depthwise, and ConvTranspose 3x3/2 with output padding.
TEST_CASE("conv parity") {
  require_device();
  check_case(make_case("Conv", {rnd({2, 4, 9, 9}, 40), weight({8, 4, 3, 3}, 41),
                                weight({8}, 42)},
                       kF, {2, 8, 9, 9},
                       {{"pads", ints_attr({1, 1, 1, 1})},
                        {"onepool_activation", string_attr("Relu")}}));
  check_case(make_case("Conv", {rnd({1, 4, 10, 10}, 43), weight({6, 2, 3, 3}, 44)},
                       kF, {1, 6, 4, 4}, {{"group", int_attr(2)}, {"strides", ints_attr({2, 2})}}));
  check_case(make_case("Conv", {rnd({3, 16, 5, 5}, 45), weight({8, 16, 1, 1}, 46)},
                       kF, {3, 8, 5, 5}));
  check_case(make_case("Conv", {rnd({2, 6, 8, 8}, 47), weight({6, 1, 3, 3}, 48),
                                weight({6}, 49)},
                       kF, {2, 6, 8, 8},
                       {{"group", int_attr(6)}, {"pads", ints_attr({1, 1, 1, 1})}}));
  check_case(make_case("ConvTranspose",
                       {rnd({1, 4, 5, 5}, 50), weight({4, 3, 3, 3}, 51),
                        weight({3}, 52)},
                       kF, {1, 3, 10, 10},
                       {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})},
                        {"output_padding", ints_attr({1, 1})}}));
}

// MatMul with a 2-D weight (batch folded into M), equal batches, broadcast batches; Gemm with
// transB, alpha, beta and a row bias.
TEST_CASE("matmul parity") {
  require_device();
  check_case(make_case("MatMul", {rnd({2, 3, 4, 5}, 60), weight({5, 6}, 61)},
                       kF, {2, 3, 4, 6}));
  check_case(make_case("MatMul", {rnd({2, 4, 5}, 62), rnd({2, 5, 3}, 63)}, kF, {2, 4, 3}));
  check_case(make_case("MatMul", {rnd({2, 1, 4, 5}, 64), rnd({3, 5, 2}, 65)}, kF, {2, 3, 4, 2}));
  check_case(make_case("MatMul", {rnd({5}, 66), rnd({5, 3}, 67)}, kF, {3}));
  check_case(make_case("Gemm", {rnd({4, 7}, 68), weight({5, 7}, 69),
                                weight({5}, 70)},
                       kF, {4, 5},
                       {{"transB", int_attr(1)}, {"alpha", float_attr(0.5f)},
                        {"beta", float_attr(2.0f)}}));
}

// Data movement: each op against the CPU reference on small odd shapes.
TEST_CASE("data parity") {
  require_device();
  check_case(make_case("Transpose", {rnd({2, 3, 4, 5}, 80)}, kF, {5, 2, 4, 3},
                       {{"perm", ints_attr({3, 0, 2, 1})}}));
  {
    Case concat = make_case("Concat", {rnd({2, 3, 4}, 81), rnd({2, 1, 4}, 82)}, kF, {2, 4, 4},
                            {{"axis", int_attr(1)}});
    check_case(concat);
  }
  {
    Case split = make_case("Split", {rnd({2, 6, 3}, 83), constant(int64s({2}, {2, 4}))}, kF,
                           {2, 2, 3}, {{"axis", int_attr(1)}});
    split.outputs.push_back({kF, Shape{2, 4, 3}});
    check_case(split);
  }
  check_case(make_case("Slice", {rnd({5, 7}, 84), constant(int64s({2}, {4, 1})),
                                 constant(int64s({2}, {0, 7})), constant(int64s({2}, {0, 1})),
                                 constant(int64s({2}, {-2, 2}))},
                       kF, {2, 3}));
  check_case(make_case("Gather", {rnd({3, 5, 2}, 85), constant(int64s({2, 2}, {4, -1, 0, 2}))},
                       kF, {3, 2, 2, 2}, {{"axis", int_attr(1)}}));
  check_case(make_case("Pad", {rnd({2, 3, 4}, 86), constant(int64s({6}, {0, 1, 2, 0, 2, 1}))},
                       kF, {2, 6, 7}, {{"mode", string_attr("reflect")}}));
  check_case(make_case("Pad", {rnd({2, 3}, 87), constant(int64s({4}, {1, 0, 0, 2}))}, kF, {3, 5}));
  check_case(make_case("Expand", {rnd({3, 1}, 88), constant(int64s({3}, {2, 3, 4}))}, kF,
                       {2, 3, 4}));
  check_case(make_case("Tile", {rnd({2, 3}, 89), constant(int64s({2}, {2, 3}))}, kF, {4, 9}));
  check_case(make_case("Reshape", {rnd({2, 3, 4}, 90), constant(int64s({2}, {6, 4}))}, kF,
                       {6, 4}));
  HostTensor scales{kF, Shape{4}, std::vector<std::byte>(16)};
  const float s[] = {1.0f, 1.0f, 2.0f, 2.0f};
  std::memcpy(scales.data.data(), s, sizeof(s));
  check_case(make_case("Resize", {rnd({1, 2, 3, 4}, 91), std::nullopt, constant(scales)}, kF,
                       {1, 2, 6, 8}, {{"mode", string_attr("nearest")}}));
  check_case(make_case("Resize", {rnd({1, 2, 3, 4}, 92), std::nullopt, constant(scales)}, kF,
                       {1, 2, 6, 8}, {{"mode", string_attr("linear")}}));
  check_case(make_case("BatchNormalization",
                       {rnd({2, 3, 4, 4}, 93), constant(random_floats({3}, 0.5f, 1.5f, 94)),
                        weight({3}, 95),
                        weight({3}, 96),
                        constant(random_floats({3}, 0.5f, 2.0f, 97))},
                       kF, {2, 3, 4, 4}));
}

namespace {

// Random inputs for a manifest model: floats in [-1, 1), integers in input_ranges [lo, hi).
std::vector<HostTensor> model_inputs(const Model& model, const nlohmann::json& entry) {
  std::vector<HostTensor> inputs;
  uint32_t seed = 1000;
  for (const TensorInfo& info : model.inputs()) {
    if (info.dtype == DType::kFloat32) {
      inputs.push_back(random_floats(info.shape, -1.0f, 1.0f, seed++));
      continue;
    }
    int64_t lo = 0, hi = 2;
    if (entry.contains("input_ranges") && entry["input_ranges"].contains(info.name)) {
      lo = entry["input_ranges"][info.name][0].get<int64_t>();
      hi = entry["input_ranges"][info.name][1].get<int64_t>();
    }
    inputs.push_back(random_ints(info.dtype, info.shape, lo, hi, seed++));
  }
  return inputs;
}

Expected<std::shared_ptr<const Model>> load_manifest_model(const std::string& dir,
                                                           const nlohmann::json& entry) {
  LoadOptions options;
  if (entry.contains("dims")) {
    for (const auto& [name, value] : entry["dims"].items()) {
      options.dims.emplace_back(name, value.get<int64_t>());
    }
  }
  return Model::load(dir + "/" + entry["file"].get<std::string>(), options);
}

std::optional<nlohmann::json> read_manifest(std::string& dir) {
  const char* env = std::getenv("ONEPOOL_MODELS_DIR");
  if (env == nullptr) return std::nullopt;
  dir = env;
  std::ifstream file(dir + "/manifest.json");
  if (!file) return std::nullopt;
  return nlohmann::json::parse(file, nullptr, false);
}

}  // namespace

// Every generated model, random inputs, CUDA vs CPU within 1e-3 absolute + 1e-3 relative
// (deep models accumulate float rounding differently on the two backends).
TEST_CASE("model suite parity") {
  require_device();
  std::string dir;
  const std::optional<nlohmann::json> manifest = read_manifest(dir);
  REQUIRE_MESSAGE(manifest.has_value(), "ONEPOOL_MODELS_DIR/manifest.json not found");
  REQUIRE(manifest->contains("models"));
  for (const nlohmann::json& entry : (*manifest)["models"]) {
    const std::string name = entry["name"].get<std::string>();
    Expected<std::shared_ptr<const Model>> model = load_manifest_model(dir, entry);
    REQUIRE_MESSAGE(model.has_value(), name, ": ", model.status().to_string());
    check_parity(*model, model_inputs(**model, entry), name, 1e-3, 1e-3);
  }
}

// After warm-up, 100 runs leave the device's free memory unchanged and do no host allocation.
TEST_CASE("run allocates nothing") {
  require_device();
#ifdef ONEPOOL_HAVE_CUDA
  std::string dir;
  const std::optional<nlohmann::json> manifest = read_manifest(dir);
  REQUIRE(manifest.has_value());
  const nlohmann::json& entry = (*manifest)["models"][0];
  Expected<std::shared_ptr<const Model>> model = load_manifest_model(dir, entry);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  SessionOptions options;
  options.device = Device{DeviceKind::kCuda, 0};
  Expected<std::unique_ptr<Session>> session = Session::create(*model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<HostTensor> inputs = model_inputs(**model, entry);
  std::vector<HostTensor> outputs = allocate_outputs(**model);
  std::vector<TensorView> in = views_of(inputs);
  std::vector<TensorView> out = views_of(outputs);
  for (int i = 0; i < 3; ++i) REQUIRE((*session)->run(in, out).is_ok());  // warm-up + capture
  size_t free_before = 0, free_after = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
  g_allocations = 0;
  g_counting = true;
  bool all_ok = true;
  for (int i = 0; i < 100; ++i) all_ok = (*session)->run(in, out).is_ok() && all_ok;
  g_counting = false;
  REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
  CHECK(all_ok);
  CHECK(g_allocations.load() == 0);
  CHECK(free_after == free_before);
#endif
}

}  // namespace onepool
