// The shared expectation tables (tests/gpu/op_expectations.h) and the parity cases
// (tests/gpu/parity_cases.h) checked on any machine, no device needed:
//   - on the CPU kernels: every parity case runs, table cases give the table's values, and the
//     ConvTranspose padding table matches a direct reference convolution;
//   - on the CUDA backend's host side (when it is built): its Mod and NaN-propagating Max / Min
//     arithmetic compiled for the host, its ConvTranspose window, every parity case prepares, and
//     every op of the CUDA registry has a parity case.
// The device runs of the same cases are in parity_test.cc.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "gpu/op_expectations.h"
#include "gpu/parity_cases.h"
#include "gpu/test_graphs.h"

#ifdef ONEPOOL_HAVE_CUDA
#include "runtime/cuda/cuda_kernel.h"
#include "runtime/cuda/kernels/scalar_ops.h"
#include "runtime/cuda/kernels/window.h"
#endif

namespace onepool {
namespace {

using namespace test_graphs;  // NOLINT(google-build-using-namespace): test helpers only

// Empty when `actual` equals `expected` (floats within atol + rtol * |expected|, NaN == NaN;
// every other dtype bit for bit).
std::string difference(const HostTensor& actual, const HostTensor& expected, double atol,
                       double rtol) {
  if (actual.dtype != expected.dtype || actual.data.size() != expected.data.size()) {
    return "dtype or size differs";
  }
  const size_t size = dtype_size(expected.dtype);
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    if (expected.dtype == DType::kFloat32) {
      const double a = actual.as<float>()[i];
      const double b = expected.as<float>()[i];
      if ((std::isnan(a) && std::isnan(b)) || a == b ||
          std::abs(a - b) <= atol + rtol * std::abs(b)) {
        continue;
      }
      return str_cat("element ", i, ": ", a, " vs expected ", b);
    }
    const size_t offset = static_cast<size_t>(i) * size;
    if (std::memcmp(actual.data.data() + offset, expected.data.data() + offset, size) != 0) {
      return str_cat("element ", i, " differs bitwise");
    }
  }
  return "";
}

Expected<std::vector<std::vector<HostTensor>>> run_cpu(const Case& c,
                                                       std::vector<std::vector<HostTensor>> sets) {
  ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, model_of(c));
  return run_sets(model, SessionOptions{}, sets);
}

}  // namespace

// Every parity case must be valid on the CPU (the reference the device is compared with), give
// its table values where it has them, and give a different output for its rotated inputs: the
// device test relies on that to tell a second run from a replay that did nothing.
TEST_CASE("every parity case runs on the CPU and matches its expectations") {
  const std::vector<Case> cases = parity_cases();
  int distinct = 0;
  std::string same;
  for (const Case& c : cases) {
    CAPTURE(c.label);
    std::vector<HostTensor> first = case_inputs(c);
    std::vector<HostTensor> second;
    for (const HostTensor& t : first) second.push_back(rotated(t));
    Expected<std::vector<std::vector<HostTensor>>> outputs = run_cpu(c, {first, second});
    CHECK_MESSAGE(outputs.has_value(), c.label, ": ", outputs.status().to_string());
    if (!outputs) continue;
    for (size_t k = 0; k < c.expected.size(); ++k) {
      const std::string diff = difference((*outputs)[0][k], c.expected[k], c.atol, c.rtol);
      CHECK_MESSAGE(diff.empty(), c.label, " output ", k, ": ", diff);
    }
    if ((*outputs)[0][0].data != (*outputs)[1][0].data) {
      ++distinct;
    } else {
      same += " '" + c.label + "'";
    }
  }
  // Rotation leaves a few outputs unchanged (all-equal values, Dropout's mask, ...); not many.
  MESSAGE(distinct, " of ", cases.size(), " cases change output with rotated inputs; same:", same);
  CHECK(distinct * 10 >= static_cast<int>(cases.size()) * 9);
}

// ONNX: Mod with fmod = 0 is defined for integers only; a float model is refused at creation.
TEST_CASE("float Mod with fmod 0 is refused by the CPU kernel") {
  Case c = make_case("Mod", {rnd({4}, 1), rnd({4}, 2, 1.0f, 2.0f)}, DType::kFloat32, {4},
                     {{"fmod", int_attr(0)}});
  Expected<std::vector<std::vector<HostTensor>>> outputs = run_cpu(c, {case_inputs(c)});
  REQUIRE_FALSE(outputs.has_value());
  CHECK_MESSAGE(outputs.status().message().find("fmod must be 1") != std::string::npos,
                outputs.status().to_string());
}

// Each ConvTranspose padding case (1-D, 2 -> 3 channels) against a direct scatter with the
// table's begin pad and output size: y[m, i * s + k * d - begin] += x[c, i] * w[c, m, k].
TEST_CASE("ConvTranspose padding table on the CPU kernel") {
  for (const expectations::ConvTransposePadCase& p : expectations::kConvTransposePadCases) {
    CAPTURE(p.name);
    Case c;
    for (const Case& candidate : parity_cases()) {
      if (candidate.label == std::string("ConvTranspose 1-D ") + p.name) c = candidate;
    }
    REQUIRE_MESSAGE(!c.op.empty(), "no parity case for ", p.name);
    Expected<std::vector<std::vector<HostTensor>>> outputs = run_cpu(c, {case_inputs(c)});
    REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
    const HostTensor& x = c.inputs[0]->tensor;
    const HostTensor& w = c.inputs[1]->tensor;
    const HostTensor& b = c.inputs[2]->tensor;
    HostTensor reference = zeros(DType::kFloat32, {1, 3, p.expected_out});
    for (int64_t m = 0; m < 3; ++m) {
      for (int64_t o = 0; o < p.expected_out; ++o)
        reference.as_mutable<float>()[m * p.expected_out + o] = b.as<float>()[m];
      for (int64_t ch = 0; ch < 2; ++ch) {
        for (int64_t i = 0; i < p.in; ++i) {
          for (int64_t k = 0; k < p.kernel; ++k) {
            const int64_t o = i * p.stride + k * p.dilation - p.expected_begin;
            if (o < 0 || o >= p.expected_out) continue;
            reference.as_mutable<float>()[m * p.expected_out + o] +=
                x.as<float>()[ch * p.in + i] * w.as<float>()[(ch * 3 + m) * p.kernel + k];
          }
        }
      }
    }
    const std::string diff = difference((*outputs)[0][0], reference, 1e-5, 1e-5);
    CHECK_MESSAGE(diff.empty(), p.name, ": ", diff);
  }
}

// A CPU Session has no CUDA graph: every count is zero.
TEST_CASE("cuda_graph_stats is empty on the CPU") {
  Case c = make_case("Relu", {rnd({4}, 1)}, DType::kFloat32, {4});
  Expected<std::shared_ptr<const Model>> model = model_of(c);
  REQUIRE(model.has_value());
  std::vector<std::vector<HostTensor>> sets = {case_inputs(c)};
  CudaGraphStats stats;
  stats.replays = -1;
  REQUIRE(run_sets(*model, SessionOptions{}, sets, &stats).has_value());
  CHECK_FALSE(stats.enabled);
  CHECK_FALSE(stats.captured);
  CHECK(stats.replays == 0);
  CHECK(stats.direct_runs == 0);
}

#ifdef ONEPOOL_HAVE_CUDA

// The device's Mod is mod_truncated / mod_floored (runtime/cuda/kernels/scalar_ops.h), the same
// source compiled here for the host.
TEST_CASE("CUDA Mod arithmetic, compiled for the host, matches the table") {
  for (const expectations::IntModCase& m : expectations::kIntModCases) {
    CAPTURE(m.a);
    CAPTURE(m.b);
    CAPTURE(m.fmod);
    const int64_t r =
        m.fmod != 0 ? cuda::mod_truncated<int64_t>(m.a, m.b) : cuda::mod_floored<int64_t>(m.a, m.b);
    CHECK(r == m.expected);
  }
  for (const expectations::FloatModCase& m : expectations::kFloatModCases) {
    CAPTURE(m.a);
    CAPTURE(m.b);
    CHECK(cuda::mod_truncated<float>(m.a, m.b) == m.expected);
  }
}

// The device reduction folds nan_propagating_max / _min from -inf / +inf in any order.
TEST_CASE("CUDA ReduceMax / ReduceMin combine, compiled for the host, matches the table") {
  for (const expectations::ReduceExtremaCase& r : expectations::kReduceExtremaCases) {
    CAPTURE(r.name);
    for (bool reversed : {false, true}) {
      float max = -expectations::kInf;
      float min = expectations::kInf;
      for (int k = 0; k < 4; ++k) {
        const float v = r.values[reversed ? 3 - k : k];
        max = cuda::nan_propagating_max(max, v);
        min = cuda::nan_propagating_min(min, v);
      }
      CHECK((std::isnan(r.expected_max) ? std::isnan(max) : max == r.expected_max));
      CHECK((std::isnan(r.expected_min) ? std::isnan(min) : min == r.expected_min));
    }
  }
}

// The CUDA ConvTranspose window gives the table's pads for every case (and the 2-D case's H
// axis maps the same way).
TEST_CASE("CUDA ConvTranspose window matches the padding table") {
  cuda::CudaBackendOptions options;
  for (const Case& c : parity_cases()) {
    if (c.op != "ConvTranspose") continue;
    CAPTURE(c.label);
    const Graph graph = single_node_graph(c);
    const cuda::CudaNodeContext context(graph, graph.nodes[0], options);
    const Shape& w = c.inputs[1]->tensor.shape;
    Expected<cuda::Window2d> window = cuda::read_window(context, &w, true);
    REQUIRE_MESSAGE(window.has_value(), window.status().to_string());
    for (const expectations::ConvTransposePadCase& p : expectations::kConvTransposePadCases) {
      if (c.label != std::string("ConvTranspose 1-D ") + p.name) continue;
      CHECK(window->out_w == p.expected_out);
      CHECK(window->p_w == p.expected_begin);
      CHECK(window->end_w == p.expected_end);
    }
    if (c.label == "ConvTranspose 2-D output_shape") {
      CHECK(window->p_h == 1);  // H: full 7, out 6
      CHECK(window->end_h == 0);
      CHECK(window->p_w == 1);  // W: full 9, out 8
      CHECK(window->end_w == 0);
    }
  }
}

// Preparation is host code: every parity case (every Where dtype, Dropout with its mask, ...)
// must be accepted, so that the device run tests kernels rather than refusals.
TEST_CASE("every parity case prepares for CUDA") {
  cuda::CudaBackendOptions options;
  for (const Case& c : parity_cases()) {
    CAPTURE(c.label);
    const Graph graph = single_node_graph(c);
    const cuda::CudaKernelFactory factory = cuda::CudaKernelRegistry::with_all_kernels().find(c.op);
    const bool registered = factory != nullptr;
    REQUIRE_MESSAGE(registered, c.op, " is not registered for CUDA");
    Expected<cuda::CudaPreparedKernel> prepared =
        factory(cuda::CudaNodeContext(graph, graph.nodes[0], options));
    CHECK_MESSAGE(prepared.has_value(), c.label, ": ", prepared.status().to_string());
  }
}

// ONNX: float Mod needs fmod = 1; the CUDA backend refuses fmod = 0 the way the CPU does.
TEST_CASE("float Mod with fmod 0 is refused by CUDA preparation") {
  const Case c =
      make_case("Mod", {rnd({4}, 1), rnd({4}, 2)}, DType::kFloat32, {4}, {{"fmod", int_attr(0)}});
  const Graph graph = single_node_graph(c);
  cuda::CudaBackendOptions options;
  Expected<cuda::CudaPreparedKernel> prepared = cuda::CudaKernelRegistry::with_all_kernels().find(
      "Mod")(cuda::CudaNodeContext(graph, graph.nodes[0], options));
  REQUIRE_FALSE(prepared.has_value());
  CHECK(prepared.status().code() == StatusCode::kInvalidModel);
}

// Native half kernels round once, like the float32 path on widened copies: where they would
// round more often (a chain of Sum steps, Mean's scaling) or read constants as float32 (Clip's
// bounds), the native factory refuses the node and the half adapter runs it in float32.
TEST_CASE("half nodes the native kernels would round differently take the float32 path") {
  cuda::CudaBackendOptions options;
  const auto half = [](uint32_t seed) {
    return var(parity_detail::random_halves(DType::kFloat16, Shape{4}, -1.0f, 1.0f, seed));
  };
  const std::vector<Case> refused = {
      make_case("Sum", {half(1), half(2), half(3)}, DType::kFloat16, {4}),
      make_case("Mean", {half(4), half(5)}, DType::kFloat16, {4}),
      make_case("Clip", {half(6)}, DType::kFloat16, {4}, {}, "no bounds")};
  for (const Case& c : refused) {
    CAPTURE(c.label);
    const Graph graph = single_node_graph(c);
    Expected<cuda::CudaPreparedKernel> prepared = cuda::CudaKernelRegistry::with_all_kernels().find(
        c.op)(cuda::CudaNodeContext(graph, graph.nodes[0], options));
    REQUIRE_FALSE(prepared.has_value());
    CHECK(prepared.status().code() == StatusCode::kUnsupported);
  }
}

// A new CUDA kernel without a parity case fails here, on every machine.
TEST_CASE("every registered CUDA op has a parity case") {
  std::set<std::string> covered;
  for (const Case& c : parity_cases()) covered.insert(c.op);
  std::string missing;
  for (const std::string& op : cuda::CudaKernelRegistry::with_all_kernels().op_types()) {
    if (covered.count(op) == 0) missing += " " + op;
  }
  CHECK_MESSAGE(missing.empty(), "CUDA ops without a parity case:", missing);
}

// The README's list of CUDA operators (between the cuda-ops markers) is the registry's.
TEST_CASE("the README lists exactly the CUDA backend's operators") {
  const char* source = std::getenv("ONEPOOL_SOURCE_DIR");
  REQUIRE(source != nullptr);
  std::ifstream file(std::string(source) + "/README.md");
  REQUIRE(file.good());
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t begin = text.find("<!-- cuda-ops:begin -->");
  const size_t end = text.find("<!-- cuda-ops:end -->");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::set<std::string> listed;
  for (size_t open = text.find('`', begin); open < end; open = text.find('`', open + 1)) {
    const size_t close = text.find('`', open + 1);
    listed.insert(text.substr(open + 1, close - open - 1));
    open = close;
  }
  const std::vector<std::string> ops = cuda::CudaKernelRegistry::with_all_kernels().op_types();
  const std::set<std::string> registered(ops.begin(), ops.end());
  std::string missing, extra;
  for (const std::string& op : registered) {
    if (listed.count(op) == 0) missing += " " + op;
  }
  for (const std::string& op : listed) {
    if (registered.count(op) == 0) extra += " " + op;
  }
  CHECK_MESSAGE(missing.empty(), "CUDA ops missing from the README:", missing);
  CHECK_MESSAGE(extra.empty(), "README lists ops CUDA does not have:", extra);
}

#endif  // ONEPOOL_HAVE_CUDA

}  // namespace onepool
