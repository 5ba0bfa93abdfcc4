// CUDA vs CPU parity: every case of tests/gpu/parity_cases.h (each registered CUDA op and each
// path, plus the shared expectation tables) and every model of the generated suite
// (${ONEPOOL_MODELS_DIR}/manifest.json), each with the CUDA graph on and off and two runs with
// different inputs, checking which path each Session reports; tensors large enough for the
// grid-stride loops to wrap; device memory stable over 100 runs, and no host allocation in
// Session::run.
//
// Without a usable device (no driver, no GPU, or a build without the CUDA backend) each test
// prints "no CUDA device: <reason>" and exits 77, which CTest reports as skipped. The cases
// themselves are checked on any machine by expectations_test.cc.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gpu/parity_cases.h"
#include "gpu/test_graphs.h"
#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/core/graph.h"
#include "planner/core/half_float.h"

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

using namespace test_graphs;  // NOLINT(google-build-using-namespace): test helpers only

// --- comparing -------------------------------------------------------------------------------

// Empty when equal: float32 within |a - b| <= atol + rtol * |b| (NaN == NaN), every other dtype
// bit for bit.
std::string compare(const HostTensor& actual, const HostTensor& expected, double atol,
                    double rtol) {
  if (actual.dtype != expected.dtype || actual.data.size() != expected.data.size()) {
    return "dtype or size differs";
  }
  const int64_t count = expected.element_count();
  const bool half = expected.dtype == DType::kFloat16 || expected.dtype == DType::kBFloat16;
  if (expected.dtype == DType::kFloat32 || half) {
    // Half outputs widened to float32: the GEMMs may sum in another order than the CPU, and one
    // float32 difference can round to neighbouring half values; the case's tolerance applies.
    const auto value = [&](const HostTensor& t, int64_t i) -> double {
      if (!half) return t.as<float>()[i];
      uint16_t bits = 0;
      std::memcpy(&bits, t.data.data() + static_cast<size_t>(i) * sizeof(bits), sizeof(bits));
      return expected.dtype == DType::kFloat16 ? half_bits_to_float(bits)
                                               : bfloat_bits_to_float(bits);
    };
    for (int64_t i = 0; i < count; ++i) {
      const double x = value(actual, i);
      const double y = value(expected, i);
      if (x == y || std::abs(x - y) <= atol + rtol * std::abs(y)) continue;
      if (std::isnan(x) && std::isnan(y)) continue;
      return str_cat("element ", i, ": cuda ", x, " vs ", y);
    }
    return "";
  }
  const size_t size = dtype_size(expected.dtype);
  for (int64_t i = 0; i < count; ++i) {
    const size_t offset = static_cast<size_t>(i) * size;
    if (std::memcmp(actual.data.data() + offset, expected.data.data() + offset, size) == 0) {
      continue;
    }
    const bool readable = expected.dtype == DType::kInt64 || expected.dtype == DType::kInt32 ||
                          expected.dtype == DType::kBool;
    if (!readable) return str_cat("element ", i, " differs bitwise");
    return str_cat("element ", i, ": cuda ", actual.int_at(i), " vs ", expected.int_at(i));
  }
  return "";
}

SessionOptions cuda_options(bool cuda_graph) {
  SessionOptions options;
  options.device = Device{DeviceKind::kCuda, 0};
  options.cuda_graph = cuda_graph;
  return options;
}

// Runs `model` on the CPU and then on cuda:0 with the CUDA graph on and off, two runs each with
// different inputs (input_sets[0], then [1]) into fresh 0xCD outputs, and compares run k with
// the CPU's run k: a replay that ran nothing, or ran with the first inputs, shows as a mismatch.
// Each Session must report the path it took: graph on, one capture and two replays; graph off,
// two direct runs. `expected` (run 0 only) comes from the shared tables. Every problem is a
// CHECK, so one failing case does not hide the next.
void check_parity(const std::shared_ptr<const Model>& model,
                  std::vector<std::vector<HostTensor>> input_sets, const std::string& label,
                  double atol, double rtol, const std::vector<HostTensor>& expected = {}) {
  Expected<std::vector<std::vector<HostTensor>>> cpu =
      run_sets(model, SessionOptions{}, input_sets);
  CHECK_MESSAGE(cpu.has_value(), label, " on cpu: ", cpu.status().to_string());
  if (!cpu) return;
  for (const bool graph : {true, false}) {
    const std::string mode = label + (graph ? " [cuda graph]" : " [direct]");
    CudaGraphStats stats;
    Expected<std::vector<std::vector<HostTensor>>> cuda =
        run_sets(model, cuda_options(graph), input_sets, &stats);
    CHECK_MESSAGE(cuda.has_value(), mode, ": ", cuda.status().to_string());
    if (!cuda) continue;
    const int64_t runs = static_cast<int64_t>(input_sets.size());
    if (graph) {
      CHECK_MESSAGE(stats.captured, mode, ": no graph captured: ", stats.fallback_reason);
      CHECK_MESSAGE(stats.replays == runs, mode, ": ", stats.replays, " replays of ", runs);
      CHECK_MESSAGE(stats.direct_runs == 0, mode, ": ", stats.direct_runs, " direct runs");
    } else {
      CHECK_MESSAGE(!stats.captured, mode, ": a graph was captured with cuda_graph off");
      CHECK_MESSAGE(stats.direct_runs == runs, mode, ": ", stats.direct_runs, " direct runs");
    }
    for (size_t run = 0; run < cuda->size(); ++run) {
      for (size_t i = 0; i < (*cpu)[run].size(); ++i) {
        const std::string diff = compare((*cuda)[run][i], (*cpu)[run][i], atol, rtol);
        CHECK_MESSAGE(diff.empty(), mode, " run ", run + 1, " output ", i, " vs cpu: ", diff);
      }
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string diff = compare((*cuda)[0][i], expected[i], atol, rtol);
      CHECK_MESSAGE(diff.empty(), mode, " output ", i, " vs the expectation table: ", diff);
    }
  }
}

// A case's inputs, then the same rotated by one element (new outputs from the same ranges).
std::vector<std::vector<HostTensor>> two_input_sets(std::vector<HostTensor> first) {
  std::vector<HostTensor> second;
  for (const HostTensor& t : first) second.push_back(rotated(t));
  return {std::move(first), std::move(second)};
}

void check_case(const Case& c) {
  Expected<std::shared_ptr<const Model>> model = model_of(c);
  CHECK_MESSAGE(model.has_value(), c.label, ": ", model.status().to_string());
  if (!model) return;
  check_parity(*model, two_input_sets(case_inputs(c)), c.label, c.atol, c.rtol, c.expected);
}

#ifdef ONEPOOL_HAVE_CUDA
// Floats in [-1, 1) from a cheap hash (large tensors: mt19937 would take seconds per GiB).
HostTensor pattern_floats(const Shape& shape, uint32_t seed) {
  HostTensor t = zeros(DType::kFloat32, shape);
  float* p = t.as_mutable<float>();
  for (int64_t i = 0; i < shape.element_count(); ++i) {
    const uint32_t h = (static_cast<uint32_t>(i) ^ seed) * 2654435761u;
    p[i] = static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return t;
}
#endif

}  // namespace

// Every case of tests/gpu/parity_cases.h (each registered CUDA op, each path, the shared
// expectation tables) on cuda:0 against the CPU, with the CUDA graph on and off.
TEST_CASE("every parity case, CUDA graph on and off") {
  require_device();
  const std::vector<Case> cases = parity_cases();
  MESSAGE(cases.size(), " cases, 2 modes, 2 runs each");
  for (const Case& c : cases) check_case(c);
}

// Sizes where the launch-size caps make the grid-stride loops wrap (elementwise: 65535 * 8
// blocks of 256 threads = 134,215,680 elements; row kernels: 65535 * 16 = 1,048,560 rows), and
// one tensor above 2^31 bytes (int64 offsets). Skipped (with a message) without the memory.
TEST_CASE("large tensors: grid-stride loops wrap, a tensor above 2^31 bytes") {
  require_device();
#ifdef ONEPOOL_HAVE_CUDA
  constexpr int64_t kWrapElements = int64_t{65535} * 8 * 256 + 12345;
  constexpr int64_t kWrapRows = int64_t{65535} * 16 + 51451;    // 1.1 million rows
  constexpr int64_t kHugeElements = (int64_t{1} << 29) + 4096;  // 2^31 + 16 KiB of float32
  const auto var_pattern = [](Shape s, uint32_t seed) { return var(pattern_floats(s, seed)); };
  std::vector<std::pair<Case, size_t>> cases;  // the case and the device bytes it needs
  cases.push_back({make_case("Add", {var_pattern({kWrapElements}, 1), var_pattern({1}, 2)},
                             DType::kFloat32, {kWrapElements}, {}, "wrapping broadcast"),
                   static_cast<size_t>(kWrapElements) * 4 * 3});
  cases.push_back(
      {make_case("ReduceSum", {var_pattern({kWrapRows, 3}, 3), constant(int64s({1}, {1}))},
                 DType::kFloat32, {kWrapRows, 1}, {}, "wrapping rows"),
       static_cast<size_t>(kWrapRows) * 4 * 4});
  cases.push_back({make_case("Softmax", {var_pattern({kWrapRows, 3}, 4)}, DType::kFloat32,
                             {kWrapRows, 3}, {}, "wrapping rows"),
                   static_cast<size_t>(kWrapRows) * 4 * 6});
  cases.push_back(
      {make_case("LayerNormalization",
                 {var_pattern({kWrapRows, 4}, 5), weight({4}, 6), weight({4}, 7)}, DType::kFloat32,
                 {kWrapRows, 4}, {{"axis", int_attr(-1)}}, "wrapping rows"),
       static_cast<size_t>(kWrapRows) * 4 * 8});
  cases.push_back({make_case("Relu", {var_pattern({kHugeElements}, 8)}, DType::kFloat32,
                             {kHugeElements}, {}, "above 2^31 bytes"),
                   static_cast<size_t>(kHugeElements) * 4 * 2});
  for (const auto& [c, bytes] : cases) {
    size_t free_bytes = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
    if (free_bytes < 2 * bytes) {
      MESSAGE(c.label, " skipped: needs ", bytes, " device bytes, ", free_bytes, " free");
      continue;
    }
    check_case(c);
  }
#endif
}

namespace {

// Random inputs for a manifest model: floats in [-1, 1), integers in input_ranges [lo, hi).
std::vector<HostTensor> model_inputs(const Model& model, const nlohmann::json& entry,
                                     uint32_t seed = 1000) {
  std::vector<HostTensor> inputs;
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
  if (entry.contains("bounds")) {  // a Loop's scan output length (--bound)
    for (const auto& [name, value] : entry["bounds"].items()) {
      options.bounds[name] = value.get<int64_t>();
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

// A model the manifest marks CPU-only: creating a CUDA Session must fail as kUnsupported,
// listing its nodes (never run something else silently).
void check_refused_on_cuda(const std::shared_ptr<const Model>& model, const std::string& name,
                           const std::string& reason) {
  Expected<std::unique_ptr<Session>> session = Session::create(model, cuda_options(true));
  CHECK_MESSAGE(!session.has_value(), name, " is CPU-only (", reason, ") but CUDA accepted it");
  if (!session) {
    CHECK_MESSAGE(session.status().code() == StatusCode::kUnsupported, name, ": ",
                  session.status().to_string());
  }
  MESSAGE(name, ": CPU only (", reason, "), refused on CUDA as expected");
}

}  // namespace

// Every generated model, CUDA vs CPU within 1e-3 absolute + 1e-3 relative (deep models
// accumulate float rounding differently on the two backends; half-precision models carry a
// wider parity_tolerance in the manifest), graph on and off, two runs with different random
// inputs; a model the manifest marks cpu_only must be refused on CUDA. One failing model does
// not stop the others.
TEST_CASE("model suite parity, CUDA graph on and off") {
  require_device();
  std::string dir;
  const std::optional<nlohmann::json> manifest = read_manifest(dir);
  REQUIRE_MESSAGE(manifest.has_value(), "ONEPOOL_MODELS_DIR/manifest.json not found");
  REQUIRE(manifest->contains("models"));
  for (const nlohmann::json& entry : (*manifest)["models"]) {
    const std::string name = entry["name"].get<std::string>();
    Expected<std::shared_ptr<const Model>> model = load_manifest_model(dir, entry);
    CHECK_MESSAGE(model.has_value(), name, ": ", model.status().to_string());
    if (!model) continue;
    if (entry.contains("cpu_only")) {
      check_refused_on_cuda(*model, name, entry["cpu_only"].get<std::string>());
      continue;
    }
    double atol = 1e-3, rtol = 1e-3;
    if (entry.contains("parity_tolerance")) {
      atol = entry["parity_tolerance"][0].get<double>();
      rtol = entry["parity_tolerance"][1].get<double>();
    }
    check_parity(*model, {model_inputs(**model, entry, 1000), model_inputs(**model, entry, 2000)},
                 name, atol, rtol);
  }
}

namespace {
// The generated suite's first model (manifest entry and loaded model).
struct FirstModel {
  nlohmann::json entry;
  std::shared_ptr<const Model> model;
};

FirstModel load_first_model() {
  std::string dir;
  const std::optional<nlohmann::json> manifest = read_manifest(dir);
  REQUIRE(manifest.has_value());
  FirstModel first{(*manifest)["models"][0], nullptr};
  Expected<std::shared_ptr<const Model>> model = load_manifest_model(dir, first.entry);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  first.model = *model;
  return first;
}
}  // namespace

// After warm-up, 100 runs leave the device's free memory unchanged and do no host allocation.
TEST_CASE("run allocates nothing") {
  require_device();
#ifdef ONEPOOL_HAVE_CUDA
  const FirstModel first = load_first_model();
  const nlohmann::json& entry = first.entry;
  const Expected<std::shared_ptr<const Model>> model = first.model;
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
  // What was measured is the replay path: one capture, 103 replays, nothing direct.
  const CudaGraphStats stats = (*session)->cuda_graph_stats();
  CHECK_MESSAGE(stats.captured, stats.fallback_reason);
  CHECK(stats.replays == 103);
  CHECK(stats.direct_runs == 0);
#endif
}

#ifdef ONEPOOL_HAVE_CUDA
namespace {

// Device buffers (cudaMalloc: 256-byte aligned) for `tensors`, holding their bytes.
struct DeviceTensors {
  std::vector<void*> buffers;
  std::vector<TensorView> views;
  DeviceTensors() = default;
  DeviceTensors(const DeviceTensors&) = delete;
  DeviceTensors& operator=(const DeviceTensors&) = delete;
  ~DeviceTensors() {
    for (void* buffer : buffers) (void)cudaFree(buffer);
  }
  void add(const HostTensor& tensor) {
    void* buffer = nullptr;
    REQUIRE(cudaMalloc(&buffer, std::max<size_t>(tensor.data.size(), 1)) == cudaSuccess);
    buffers.push_back(buffer);
    REQUIRE(cudaMemcpy(buffer, tensor.data.data(), tensor.data.size(), cudaMemcpyHostToDevice) ==
            cudaSuccess);
    views.push_back({buffer, tensor.dtype, tensor.shape, Device{DeviceKind::kCuda, 0}});
  }
};

std::vector<HostTensor> download(const DeviceTensors& device, std::vector<HostTensor> host) {
  for (size_t i = 0; i < host.size(); ++i) {
    REQUIRE(cudaMemcpy(host[i].data.data(), device.buffers[i], host[i].data.size(),
                       cudaMemcpyDeviceToHost) == cudaSuccess);
  }
  return host;
}

}  // namespace
#endif

// External inputs and outputs in device buffers: the kernels read and write them in place, the
// outputs are bit-identical to a pooled CUDA Session's, a host buffer is refused, and moving to
// other buffers recaptures the CUDA graph once.
TEST_CASE("external inputs and outputs in device memory") {
  require_device();
#ifdef ONEPOOL_HAVE_CUDA
  const FirstModel first = load_first_model();
  const nlohmann::json& entry = first.entry;
  const Expected<std::shared_ptr<const Model>> model = first.model;
  SessionOptions options;
  options.device = Device{DeviceKind::kCuda, 0};
  std::vector<HostTensor> inputs = model_inputs(**model, entry, 3000);
  std::vector<std::vector<HostTensor>> sets = {inputs};
  Expected<std::vector<std::vector<HostTensor>>> pooled = run_sets(*model, options, sets);
  REQUIRE_MESSAGE(pooled.has_value(), pooled.status().to_string());

  options.plan.external_inputs = true;
  options.plan.external_outputs = true;
  Expected<std::unique_ptr<Session>> session = Session::create(*model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<HostTensor> host_outputs = allocate_outputs(**model);
  std::vector<TensorView> host_in = views_of(inputs);
  std::vector<TensorView> host_out = views_of(host_outputs);
  const Status on_host = (*session)->run(host_in, host_out);
  CHECK(on_host.message().find("must be on cuda:0") != std::string::npos);
  for (int round = 0; round < 2; ++round) {
    DeviceTensors device_in, device_out;
    for (const HostTensor& tensor : inputs) device_in.add(tensor);
    for (const HostTensor& tensor : allocate_outputs(**model)) device_out.add(tensor);
    for (int run = 0; run < 3; ++run) {
      const Status status = (*session)->run(device_in.views, device_out.views);
      REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    }
    const std::vector<HostTensor> got = download(device_out, allocate_outputs(**model));
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].data == (*pooled)[0][i].data);
    CHECK((*session)->output_view(0).data == device_out.views[0].data);
  }
  const CudaGraphStats stats = (*session)->cuda_graph_stats();
  CHECK(stats.recaptures == 1);
  std::printf("external device I/O: %lld replays, %lld recaptures\n",
              static_cast<long long>(stats.replays), static_cast<long long>(stats.recaptures));
#endif
}

}  // namespace onepool
