// SessionOptions::cpu_isa: a Session limited to AVX2 or to the portable kernels runs them on a
// CPU that has more (so a machine with AVX-512 checks the paths an AVX2-only machine takes), the
// GEMM micro-kernels give the same bits on every ISA, and a set the CPU lacks is refused.
#include "runtime/cpu/cpu_isa.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/generated_models.h"
#include "onepool/onepool.h"

namespace {

using onepool::CpuIsa;

using onepool_test::load_generated_model;

// Inputs in [0, 1) from a fixed sequence, so every Session reads the same values.
std::vector<std::vector<float>> fixed_inputs(const onepool::Model& model) {
  std::vector<std::vector<float>> inputs;
  uint32_t state = 12345;
  for (const auto& info : model.inputs()) {
    REQUIRE(info.dtype == onepool::DType::kFloat32);
    std::vector<float> values(static_cast<size_t>(info.shape.element_count()));
    for (float& v : values) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<float>(state >> 8) / 16777216.0f;
    }
    inputs.push_back(std::move(values));
  }
  return inputs;
}

struct IsaRun {
  std::vector<std::vector<float>> outputs;
  std::vector<std::string> implementations;
};

// One run of `model` at `threads` threads with the kernels limited to `isa`.
IsaRun run_with_isa(const std::shared_ptr<const onepool::Model>& shared, CpuIsa isa, int threads) {
  const onepool::Model& model = *shared;
  onepool::SessionOptions options;
  options.threads = threads;
  options.cpu_isa = isa;
  options.profile = true;
  auto session = onepool::Session::create(shared, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<std::vector<float>> inputs = fixed_inputs(model);
  std::vector<onepool::TensorView> input_views;
  for (size_t i = 0; i < inputs.size(); ++i) {
    input_views.push_back(
        {inputs[i].data(), onepool::DType::kFloat32, model.inputs()[i].shape, {}});
  }
  IsaRun result;
  std::vector<onepool::TensorView> output_views;
  for (const auto& info : model.outputs()) {
    result.outputs.emplace_back(static_cast<size_t>(info.shape.element_count()));
  }
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    output_views.push_back(
        {result.outputs[i].data(), onepool::DType::kFloat32, model.outputs()[i].shape, {}});
  }
  const onepool::Status status = (*session)->run(input_views, output_views);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  for (const auto& node : (*session)->profile().nodes) {
    result.implementations.push_back(node.implementation);
  }
  return result;
}

bool mentions(const std::vector<std::string>& implementations, const std::string& word) {
  for (const auto& text : implementations) {
    if (text.find(word) != std::string::npos) return true;
  }
  return false;
}

double max_abs_difference(const IsaRun& a, const IsaRun& b) {
  double worst = 0;
  for (size_t o = 0; o < a.outputs.size(); ++o) {
    for (size_t i = 0; i < a.outputs[o].size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(a.outputs[o][i]) - b.outputs[o][i]));
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("cpu_isa names parse back and an unknown name lists the choices") {
  for (CpuIsa isa : {CpuIsa::kAuto, CpuIsa::kAvx512, CpuIsa::kAvx2, CpuIsa::kPortable}) {
    auto parsed = onepool::parse_cpu_isa(onepool::cpu_isa_name(isa));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == isa);
  }
  auto bad = onepool::parse_cpu_isa("sse9");
  REQUIRE(!bad.has_value());
  CHECK(bad.status().code() == onepool::StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("'sse9'") != std::string::npos);
  CHECK(bad.status().message().find("avx2") != std::string::npos);
}

TEST_CASE("a Session limited to an instruction set the CPU lacks is refused at create") {
  const CpuIsa detected = onepool::cpu::detected_cpu_isa();
  MESSAGE("this CPU: ", onepool::cpu_isa_name(detected));
  auto model = load_generated_model("mlp.onnx", true);
  for (CpuIsa wider : {CpuIsa::kAvx512, CpuIsa::kAvx2}) {
    const bool has =
        detected == CpuIsa::kAvx512 || (detected == CpuIsa::kAvx2 && wider == CpuIsa::kAvx2);
    onepool::SessionOptions options;
    options.cpu_isa = wider;
    auto session = onepool::Session::create(model, options);
    CHECK(session.has_value() == has);
    if (!has) {
      CHECK(session.status().code() == onepool::StatusCode::kUnsupported);
      CHECK(session.status().message().find(onepool::cpu_isa_name(wider)) != std::string::npos);
    }
  }
  CHECK(onepool::cpu::resolve_cpu_isa(CpuIsa::kPortable).value() == CpuIsa::kPortable);
  CHECK(onepool::cpu::resolve_cpu_isa(CpuIsa::kAuto).value() == detected);
}

// Convolutions of every path (implicit GEMM, im2col, 1x1, depthwise) and a classifier head: the
// AVX2 kernels give the widest kernels' bits; the portable ones (1x1 convs then on OpenBLAS)
// agree to rounding.
TEST_CASE("mobilenetv2 and inception limited to AVX2 or portable kernels") {
  const CpuIsa detected = onepool::cpu::detected_cpu_isa();
  for (const char* file : {"mobilenetv2.onnx", "inception.onnx"}) {
    CAPTURE(file);
    auto model = load_generated_model(file, false);
    const IsaRun widest = run_with_isa(model, CpuIsa::kAuto, 2);
    if (detected != CpuIsa::kPortable) {
      const IsaRun avx2 = run_with_isa(model, CpuIsa::kAvx2, 2);
      CHECK(mentions(avx2.implementations, "gemm avx2"));
      CHECK_FALSE(mentions(avx2.implementations, "avx512"));
      CHECK(avx2.outputs == widest.outputs);
      // Inception's 1x1 and strided convolutions with k >= 256 run on channel vectors there.
      if (detected == CpuIsa::kAvx512 && std::string(file) == "inception.onnx") {
        CHECK(mentions(widest.implementations, "gemm channels avx512"));
      }
    }
    const IsaRun portable = run_with_isa(model, CpuIsa::kPortable, 3);
    CHECK(mentions(portable.implementations, "gemm portable"));
    CHECK_FALSE(mentions(portable.implementations, "avx2"));
    CHECK_FALSE(mentions(portable.implementations, "avx512"));
    CHECK(max_abs_difference(portable, widest) < 1e-4);
  }
}
