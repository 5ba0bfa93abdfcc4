// The blocked depthwise path (conv_depthwise_blocked.cc: 16 channels on AVX-512, 8 on AVX2) and the
// masked flat path (conv_depthwise_masked.cc, AVX-512; there also Relu and LeakyRelu):
// Clip(Conv(x)) with the Clip fused gives
// the per-plane paths' bits (the portable instruction set takes neither), NaN, Inf and signed
// zeros in the input and an infinite weight (whose product with the padding's zeros is NaN)
// included (NaN at rows' ends, where a window's padding lies beside a neighbouring row), at 1 and 2
// threads, for channel counts below, at and past one block, 3x3 and 5x5 windows, stride 1 and 2,
// symmetric, one-sided and wider-than-the-window pads, single- and multi-band planes, square and
// oblong planes, planes that end in a partial vector. On a CPU with AVX-512 the Conv must have
// taken the path each case names; there large stride-2 planes take the stride-2 direct kernel
// (conv_depthwise_stride_two_avx512.cc, the padding skipped as the per-plane path skips it).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"
#include "runtime/cpu/cpu_isa.h"

namespace onepool::testing {
namespace {

struct DepthwiseCase {
  int64_t channels, height, width, kernel, stride;
  std::vector<int64_t> pads;  // top, left, bottom, right
  bool blocked;               // takes the blocked path (where it does not take the masked one)
  bool masked = false;        // takes the masked path on AVX-512
  bool inf_weight = false;    // the first channel's first tap is +Inf
  bool stride_two = false;    // takes the stride-2 direct path on AVX-512 (a plane too large for
                              // the masked one: the padding skipped, not summed as zeros)
};

int64_t out_dim(int64_t size, int64_t kernel, int64_t stride, int64_t before, int64_t after) {
  return (size + before + after - kernel) / stride + 1;
}

Shape output_shape(const DepthwiseCase& c) {
  return {1, c.channels, out_dim(c.height, c.kernel, c.stride, c.pads[0], c.pads[2]),
          out_dim(c.width, c.kernel, c.stride, c.pads[1], c.pads[3])};
}

std::vector<float> values(size_t count, uint32_t seed, float scale) {
  std::vector<float> result(count);
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    result[i] = scale * (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f);
  }
  return result;
}

// y = Clip(Conv(x, W, B, group = C), 0, 6), or Relu or LeakyRelu of it: the optimizer fuses the
// activation into the Conv.
std::shared_ptr<const Model> load(const DepthwiseCase& c, const std::string& activation = "Clip") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, c.channels, c.height, c.width});
  const auto taps = static_cast<size_t>(c.channels * c.kernel * c.kernel);
  std::vector<float> weights = values(taps, 7, 1.0f);
  if (c.inf_weight) weights[0] = std::numeric_limits<float>::infinity();
  const ValueId w = b.weight("w", {c.channels, 1, c.kernel, c.kernel}, std::move(weights));
  const ValueId bias =
      b.weight("b", {c.channels}, values(static_cast<size_t>(c.channels), 9, 2.0f));
  const ValueId conv = b.value("conv", output_shape(c));
  Node& node = b.node("Conv", {x, w, bias}, {conv});
  Attribute group;
  group.kind = Attribute::Kind::kInt;
  group.i = c.channels;
  node.attributes.set("group", group);
  node.attributes.set("kernel_shape", ints_attr({c.kernel, c.kernel}));
  node.attributes.set("strides", ints_attr({c.stride, c.stride}));
  node.attributes.set("pads", ints_attr(c.pads));
  const ValueId y = b.value("y", output_shape(c));
  if (activation == "Clip") {
    b.node("Clip", {conv, b.weight("lo", {}, {0.0f}), b.weight("hi", {}, {6.0f})}, {y});
  } else {
    b.node(activation, {conv}, {y});
  }
  b.output(y);
  auto model = Model::from_graph(b.finish(), LoadOptions{});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

std::vector<float> run(const std::shared_ptr<const Model>& model, const DepthwiseCase& c,
                       const std::vector<float>& input, int threads, CpuIsa isa,
                       std::string* implementation) {
  SessionOptions options;
  options.threads = threads;
  options.cpu_isa = isa;
  options.profile = true;
  auto session = Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  const Shape y_shape = output_shape(c);
  std::vector<float> output(static_cast<size_t>(y_shape[1] * y_shape[2] * y_shape[3]));
  TensorView in{const_cast<float*>(input.data()), DType::kFloat32,
                Shape{1, c.channels, c.height, c.width}, Device{}};
  TensorView y{output.data(), DType::kFloat32, y_shape, Device{}};
  const Status status = (*session)->run({&in, 1}, {&y, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  REQUIRE((*session)->profile().nodes.size() == 1);  // the Clip fused
  *implementation = (*session)->profile().nodes.back().implementation;
  return output;
}

// Random values with signed zeros, NaN and both infinities sprinkled in; in every third channel
// each row's last column NaN and in the next its first: a kernel that read a neighbouring row's
// column where the window reaches into the padding would give NaN where the padding's zeros give
// a number.
std::vector<float> input_of(const DepthwiseCase& c) {
  std::vector<float> x = values(static_cast<size_t>(c.channels * c.height * c.width), 11, 8.0f);
  for (size_t i = 0; i < x.size(); i += 23) x[i] = (i % 2 == 0) ? 0.0f : -0.0f;
  for (int64_t channel = 1; channel < c.channels; channel += 3) {
    for (int64_t row = 0; row < c.height; ++row) {
      const int64_t start = (channel * c.height + row) * c.width;
      x[static_cast<size_t>(start + c.width - 1)] = std::numeric_limits<float>::quiet_NaN();
      if (channel + 1 < c.channels) {
        x[static_cast<size_t>(start + c.height * c.width)] =
            std::numeric_limits<float>::quiet_NaN();
      }
    }
  }
  x[x.size() / 3] = std::numeric_limits<float>::quiet_NaN();
  x[x.size() / 2] = std::numeric_limits<float>::infinity();
  x[x.size() - 1] = -std::numeric_limits<float>::infinity();
  return x;
}

bool same_bits_or_both_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(float)) == 0;
}

TEST_CASE("blocked and masked depthwise convolutions give the per-plane paths' bits") {
  const CpuIsa detected = onepool::cpu::detected_cpu_isa();
  const std::vector<DepthwiseCase> cases = {
      {5, 7, 7, 3, 1, {1, 1, 1, 1}, true},                // under one block
      {16, 14, 14, 3, 1, {1, 1, 1, 1}, true, true},       // one full block
      {37, 14, 14, 3, 1, {1, 1, 1, 1}, true, true},       // two blocks and a tail
      {21, 9, 30, 3, 1, {1, 1, 1, 1}, true, true},        // rows of 30 (not a multiple of 16)
      {18, 28, 28, 3, 1, {1, 1, 1, 1}, true, true},       // 28x28: several bands
      {3, 17, 17, 3, 1, {1, 1, 1, 1}, true, true, true},  // a last vector of one position
      {2, 13, 13, 3, 1, {1, 1, 1, 1}, true},              // rows of 13: blocked
      {4, 20, 37, 3, 1, {1, 1, 1, 1}, false, true},       // oblong, rows of 37
      {2, 62, 62, 3, 1, {1, 1, 1, 1}, false, true},       // the largest masked plane
      {2, 63, 63, 3, 1, {1, 1, 1, 1}, false},             // past it: per-plane path
      {18, 7, 7, 3, 1, {0, 0, 0, 0}, true},               // no padding
      {18, 7, 7, 3, 1, {2, 2, 2, 2}, true},               // padding wider than the window's reach
      {18, 16, 16, 3, 1, {0, 0, 2, 2}, true},             // one-sided padding: not masked
      {20, 14, 14, 3, 2, {1, 1, 1, 1}, true},             // stride 2
      {20, 14, 14, 3, 2, {0, 0, 1, 1}, true},             // stride 2, TensorFlow's SAME padding
      {20, 15, 15, 3, 2, {1, 1, 1, 1}, true},             // odd plane: last input column unread
      {17, 56, 56, 3, 2, {1, 1, 1, 1}, true, true},       // stride 2, several bands
      {5, 28, 28, 3, 2, {1, 1, 1, 1}, true, true},        // stride 2, rows of 14 outputs
      {5, 28, 28, 3, 2, {0, 0, 1, 1}, true, true},        // stride 2, TensorFlow's SAME padding
      {4, 29, 29, 3, 2, {1, 1, 1, 1}, true, true},        // stride 2, odd plane
      {3, 30, 70, 3, 2, {1, 1, 1, 1}, true, true},        // stride 2, rows of 35: three vectors
      {3, 28, 28, 3, 2, {1, 1, 1, 1}, true, true, true},  // stride 2, Inf weight times padding
      {3, 28, 28, 3, 2, {2, 2, 2, 2}, true},              // stride 2, pads of 2: not masked
      {7, 60, 60, 3, 2, {1, 1, 1, 1}, true, true},        // stride 2, many one-row bands
      {7, 96, 96, 3, 2, {1, 1, 1, 1}, false, false, true, true},    // rows of 48, not a small plane
      {7, 112, 112, 3, 2, {1, 1, 1, 1}, false, false, true, true},  // stride-2 rows of 56
      {5, 70, 100, 3, 2, {0, 0, 1, 1}, false, false, false, true},  // SAME padding, rows of 50
      {4, 65, 66, 3, 2, {1, 1, 1, 1}, false, false, true, true},    // odd height, rows of 33
      {19, 14, 14, 5, 1, {2, 2, 2, 2}, true},                       // 5x5
      {19, 15, 15, 5, 2, {2, 2, 2, 2}, true},                       // 5x5 stride 2
      {18, 40, 40, 3, 1, {1, 1, 1, 1}, false, true},                // stride-1 rows of 40
      {3, 14, 14, 3, 1, {1, 1, 1, 1}, true, true, true},            // Inf weight times padding
  };
  // Each vector width this CPU has: AVX-512 blocks 16 channels, AVX2 8.
  std::vector<std::pair<CpuIsa, std::string>> widths;
  if (detected == CpuIsa::kAvx512) widths.emplace_back(CpuIsa::kAvx512, "avx512");
  if (detected == CpuIsa::kAvx512 || detected == CpuIsa::kAvx2) {
    widths.emplace_back(CpuIsa::kAvx2, "avx2");
  }
  MESSAGE("blocked widths checked here: ", widths.size());
  for (const DepthwiseCase& c : cases) {
    // The masked path applies Relu and Clip to each vector before its store, LeakyRelu in a pass.
    const std::vector<std::string> activations =
        c.masked ? std::vector<std::string>{"Clip", "Relu", "LeakyRelu"}
                 : std::vector<std::string>{"Clip"};
    for (const std::string& activation : activations) {
      CAPTURE(activation);
      CAPTURE(c.channels);
      CAPTURE(c.height);
      CAPTURE(c.width);
      CAPTURE(c.kernel);
      CAPTURE(c.stride);
      CAPTURE(c.pads[0]);
      CAPTURE(c.pads[1]);
      const auto model = load(c, activation);
      const std::vector<float> x = input_of(c);
      std::string implementation;
      const std::vector<float> expected = run(model, c, x, 1, CpuIsa::kPortable, &implementation);
      CHECK(implementation == "depthwise direct");
      for (const auto& width : widths) {
        const CpuIsa isa = width.first;
        const std::string& name = width.second;  // not a structured binding: CAPTURE's lambda
        CAPTURE(name);
        for (int threads : {1, 2}) {
          CAPTURE(threads);
          const std::vector<float> actual = run(model, c, x, threads, isa, &implementation);
          const bool avx512 = isa == CpuIsa::kAvx512;
          const std::string expected_path = c.masked && avx512       ? "depthwise masked " + name
                                            : c.blocked              ? "depthwise blocked " + name
                                            : c.stride_two && avx512 ? "depthwise stride-2 avx512"
                                                                     : "depthwise direct";
          CHECK(implementation == expected_path);
          REQUIRE(actual.size() == expected.size());
          int mismatches = 0;
          for (size_t i = 0; i < actual.size(); ++i) {
            if (!same_bits_or_both_nan(actual[i], expected[i]) && ++mismatches <= 3) {
              CAPTURE(i);
              CHECK(actual[i] == expected[i]);
            }
          }
          CHECK(mismatches == 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace onepool::testing
