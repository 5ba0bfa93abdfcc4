// A residual Add fused into the Conv (planner/optimize/fuse_residual.cc): on every Conv path
// (implicit GEMM at stride 1 and 2 on column tiles and on channel vectors, Winograd plain and
// dilated, im2col, with and without a bias), with the AVX-512, AVX2 and portable kernels, at 1 and
// 2 threads, Relu(Add(Conv(x), skip)) gives the unfused model's bits, NaN and Inf included (a NaN
// sends Winograd to its direct fallback).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"

namespace onepool::testing {
namespace {

struct ResidualCase {
  const char* name;
  const char* path;  // the fused Conv's implementation starts with this
  int64_t channels, out_channels, size, kernel, stride, pad;
  bool bias;
  int64_t dilation = 1;
  const char* avx512_path = nullptr;  // the path where the CPU has AVX-512, when it differs
};

Attribute ints(std::vector<int64_t> values) { return ints_attr(std::move(values)); }

int64_t output_size(const ResidualCase& c) {
  return (c.size + 2 * c.pad - c.dilation * (c.kernel - 1) - 1) / c.stride + 1;
}

std::vector<float> wave(size_t count, float scale) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = scale * static_cast<float>(static_cast<int>((i * 37 + 11) % 29) - 14);
  }
  return values;
}

// skip = Conv1x1(x, stride) first, then Relu(Add(Conv(x, W[, B]), skip)): the later Conv takes
// the skip as its residual.
Graph build(const ResidualCase& c) {
  GraphBuilder b;
  const int64_t out = output_size(c);
  const Shape y_shape = {1, c.out_channels, out, out};
  const ValueId x = b.input("x", {1, c.channels, c.size, c.size});
  const ValueId skip = b.value("skip", y_shape);
  Node& skip_conv =
      b.node("Conv",
             {x, b.weight("skip_w", {c.out_channels, c.channels, 1, 1},
                          wave(static_cast<size_t>(c.out_channels * c.channels), 0.03f))},
             {skip});
  skip_conv.attributes.set("strides", ints({c.stride, c.stride}));
  std::vector<ValueId> inputs = {
      x, b.weight(
             "w", {c.out_channels, c.channels, c.kernel, c.kernel},
             wave(static_cast<size_t>(c.out_channels * c.channels * c.kernel * c.kernel), 0.01f))};
  if (c.bias) {
    inputs.push_back(
        b.weight("b", {c.out_channels}, wave(static_cast<size_t>(c.out_channels), 0.05f)));
  }
  const ValueId conv = b.value("conv", y_shape);
  Node& main_conv = b.node("Conv", inputs, {conv});
  main_conv.attributes.set("strides", ints({c.stride, c.stride}));
  main_conv.attributes.set("pads", ints({c.pad, c.pad, c.pad, c.pad}));
  main_conv.attributes.set("dilations", ints({c.dilation, c.dilation}));
  const ValueId sum = b.value("sum", y_shape);
  b.node("Add", {conv, skip}, {sum});
  const ValueId y = b.value("y", y_shape);
  b.node("Relu", {sum}, {y});
  b.output(y);
  return b.finish();
}

std::shared_ptr<const Model> load(const ResidualCase& c, const char* level) {
  LoadOptions options;
  options.optimize = level;
  auto model = Model::from_graph(build(c), options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

// The fused model's last node (the Conv that took the residual) ran on `c.path`.
void check_path(const std::shared_ptr<const Model>& model, const ResidualCase& c,
                const std::vector<float>& input);

std::vector<float> run(const std::shared_ptr<const Model>& model, const ResidualCase& c,
                       int threads, const std::vector<float>& input, CpuIsa isa = CpuIsa::kAuto,
                       std::string* last_implementation = nullptr) {
  SessionOptions options;
  options.threads = threads;
  options.cpu_isa = isa;
  options.profile = last_implementation != nullptr;
  // The run's pool starts as NaNs: an output element a kernel failed to write reads NaN, never a
  // value an earlier run left in the same allocation.
  auto probe = Session::create(model, options);
  REQUIRE_MESSAGE(probe.has_value(), probe.status().to_string());
  const size_t pool_bytes = (*probe)->plan().pool_bytes;
  constexpr size_t kPoolAlignment = 256;
  std::vector<float> pool((pool_bytes + kPoolAlignment) / sizeof(float) + 1,
                          std::numeric_limits<float>::quiet_NaN());
  const auto address = reinterpret_cast<uintptr_t>(pool.data());
  options.pool =
      pool.data() + (kPoolAlignment - address % kPoolAlignment) % kPoolAlignment / sizeof(float);
  options.pool_capacity = pool_bytes;
  auto session = Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  const int64_t out = output_size(c);
  std::vector<float> output(static_cast<size_t>(c.out_channels * out * out));
  TensorView in{const_cast<float*>(input.data()), DType::kFloat32,
                Shape{1, c.channels, c.size, c.size}, Device{}};
  TensorView y{output.data(), DType::kFloat32, Shape{1, c.out_channels, out, out}, Device{}};
  const Status status = (*session)->run({&in, 1}, {&y, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  if (last_implementation != nullptr) {
    REQUIRE(!(*session)->profile().nodes.empty());
    *last_implementation = (*session)->profile().nodes.back().implementation;
  }
  return output;
}

void check_path(const std::shared_ptr<const Model>& model, const ResidualCase& c,
                const std::vector<float>& input) {
  std::string implementation;
  run(model, c, 1, input, CpuIsa::kAuto, &implementation);
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const char* path = avx512 && c.avx512_path != nullptr ? c.avx512_path : c.path;
  CHECK_MESSAGE(implementation.starts_with(path), implementation);
}

bool same_bits_or_both_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST_CASE("a fused residual Add gives the unfused bits on every Conv path") {
  const ResidualCase cases[] = {
      {"1x1 stride 1, 24 -> 16 (a projection: columns shared at two threads)", "implicit gemm", 24,
       16, 14, 1, 1, 0, true},
      {"3x3 stride 1", "winograd f(2x2,3x3)", 8, 8, 16, 3, 1, 1, true},
      {"3x3 stride 1, no bias", "winograd", 8, 8, 16, 3, 1, 1, false},
      {"3x3 stride 1 on 30x30 (F(4x4, 3x3))", "winograd f(4x4,3x3)", 8, 8, 30, 3, 1, 1, true},
      {"3x3 dilation 2", "winograd", 8, 8, 24, 3, 1, 2, true, 2},
      {"1x1 stride 2", "im2col", 16, 32, 14, 1, 2, 0, true},
      {"1x1 stride 2 onto 7x7, k = 256", "im2col", 256, 64, 14, 1, 2, 0, true, 1,
       "implicit gemm channels"},
      {"3x3 stride 2", "implicit gemm", 8, 16, 15, 3, 2, 1, true},
      {"3x3 stride 2 onto rows of 32, straight into Y", "implicit gemm", 8, 16, 64, 3, 2, 1, true},
      {"7x7 stride 2", "implicit gemm", 3, 8, 20, 7, 2, 3, false},
      {"5x5 on 12x12, k = 400", "implicit gemm", 16, 64, 12, 5, 1, 2, true, 1,
       "implicit gemm channels"},
      {"3x3 stride 2 onto 14x14, k = 288", "implicit gemm", 32, 64, 28, 3, 2, 1, false, 1,
       "implicit gemm channels"},
      // A 3x3 map keeps the portable path's OpenBLAS product in one call at two threads (split by
      // rows, OpenBLAS's Haswell kernels round some elements differently).
      {"1x1 on 3x3, k = 256, three 64-channel panels shared by (panel, run)", "implicit gemm", 256,
       160, 3, 1, 1, 0, true, 1, "implicit gemm channels"},
      {"1x1 on 14x14, k = 256, a 64-row and a 32-row panel shared by their weight", "implicit gemm",
       256, 96, 14, 1, 1, 0, true, 1, "implicit gemm channels"},
      {"1x1 on a 1x1 map (a squeeze-and-excitation block), k = 48", "implicit gemm", 48, 40, 1, 1,
       1, 0, true, 1, "implicit gemm channels"},
  };
  for (const ResidualCase& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const auto plain = load(c, "none");
    const auto fused = load(c, "all");
    REQUIRE(fused->graph().nodes.size() == 2);
    CHECK(fused->graph().nodes[1].inputs.size() == 4);
    std::vector<float> input = wave(static_cast<size_t>(c.channels * c.size * c.size), 0.1f);
    check_path(fused, c, input);
    std::vector<float> special = input;
    special[3] = std::numeric_limits<float>::quiet_NaN();
    special[special.size() / 2] = std::numeric_limits<float>::infinity();
    for (const auto& x : {input, special}) {
      for (CpuIsa isa : {CpuIsa::kAuto, CpuIsa::kAvx2, CpuIsa::kPortable}) {
        CAPTURE(cpu_isa_name(isa));
        // The unfused reference on AVX2 where the CPU has AVX-512: the same bits by design, and
        // not the AVX-512 paths (the channel vectors) the fused node runs.
        const std::vector<float> expected =
            run(plain, c, 1, x, isa == CpuIsa::kAuto ? CpuIsa::kAvx2 : isa);
        for (int threads : {1, 2}) {
          CAPTURE(threads);
          const std::vector<float> actual = run(fused, c, threads, x, isa);
          int mismatches = 0;
          for (size_t i = 0; i < actual.size(); ++i) {
            mismatches += same_bits_or_both_nan(actual[i], expected[i]) ? 0 : 1;
          }
          CHECK(mismatches == 0);
        }
      }
    }
  }
}

// Where the fused Conv writes each output element once, right after reading its residual (tile
// epilogues on column tiles whose k fits one block, or on channel vectors), the planner puts Y on
// the residual's bytes; Winograd and deeper column tiles keep their own. The run above (its pool
// first filled with NaN) already checks the bits of each case either way.
TEST_CASE("a fused residual's bytes hold the Conv's output where each output is written once") {
  struct InPlaceCase {
    ResidualCase conv;
    CpuIsa isa;
    bool in_place;
  };
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const InPlaceCase cases[] = {
      {{"1x1 stride 1, k = 24, column tiles", "", 24, 16, 14, 1, 1, 0, true}, CpuIsa::kAvx2, true},
      {{"1x1 stride 2, k = 16, im2col", "", 16, 32, 14, 1, 2, 0, true}, CpuIsa::kAvx2, true},
      {{"1x1 on 14x14, k = 256, column tiles in two blocks", "", 256, 96, 14, 1, 1, 0, true},
       CpuIsa::kAvx2,
       false},
      {{"1x1 on 14x14, k = 256, channel vectors", "", 256, 96, 14, 1, 1, 0, true},
       CpuIsa::kAuto,
       avx512},
      {{"3x3 stride 1, Winograd", "", 8, 8, 16, 3, 1, 1, true}, CpuIsa::kAvx2, false},
      {{"1x1 stride 1, k = 24, portable OpenBLAS", "", 24, 16, 14, 1, 1, 0, true},
       CpuIsa::kPortable,
       false},
  };
  for (const InPlaceCase& c : cases) {
    const std::string name = c.conv.name;
    CAPTURE(name);
    SessionOptions options;
    options.threads = 1;
    options.cpu_isa = c.isa;
    auto session = Session::create(load(c.conv, "all"), options);
    REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
    const Plan& plan = (*session)->plan();
    const Graph& graph = (*session)->model().graph();
    const int32_t y = plan.find_tensor(graph.find_value("y"));
    const int32_t skip = plan.find_tensor(graph.find_value("skip"));
    REQUIRE(y >= 0);
    REQUIRE(skip >= 0);
    const PlannedTensor& out = plan.tensors[static_cast<size_t>(y)];
    const PlannedTensor& residual = plan.tensors[static_cast<size_t>(skip)];
    CHECK((out.offset == residual.offset) == c.in_place);
  }
}

}  // namespace onepool::testing
