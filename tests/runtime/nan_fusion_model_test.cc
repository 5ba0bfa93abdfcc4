// NaN and Inf through a whole model: the graph optimizer fuses activations into Conv
// epilogues, and the fused model must give the unfused model's bits (a fused Relu turned an
// all-NaN input into a confident answer where the unfused model said NaN).
//
// Every rewrite of planner/optimize (and the weight folding at load) has a pattern below, run with
// --optimize none, basic and all on inputs with NaN, +Inf and -Inf sprinkled in. Rewrites that
// keep the arithmetic (an activation epilogue, a bias Add after a bias-free Conv, Identity
// removal, a folded Transpose) must give the same bits; rewrites that change it (BatchNorm folded
// into the weights, two biases summed, MatMul + Add as one Gemm, the decomposed GELU as one Gelu)
// must give NaN and each infinity exactly where the unfused model does, and nearby finite values.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"

namespace onepool::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool same_bits_or_both_nan(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// NaN where the other is NaN, the same infinity, finite values within 1e-5 relative.
bool same_specials_and_close(float a, float b) {
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
    return same_bits_or_both_nan(a, b);
  }
  return std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b));
}

// Deterministic weights: multiples of `scale` in [-5, 5] * scale, an exact zero every 11.
std::vector<float> ramp(size_t count, float scale = 0.2f) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>(static_cast<int>((i * 7) % 11) - 5) * scale;
  }
  return values;
}

std::vector<float> positive_ramp(size_t count) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = 0.5f + 0.25f * static_cast<float>(i);
  return values;
}

size_t element_count(const Shape& shape) { return static_cast<size_t>(shape.element_count()); }

// Producers the optimizer hangs an epilogue on. Conv x [1,2,4,4] and ConvTranspose x [1,2,3,3]
// give [1,3,4,4] (1x1 and 2x2 kernels: a NaN pixel stays local); Gemm and MatMul x [4,6] give
// [4,5]. Optional bias on Conv.
ValueId add_conv(GraphBuilder& b, ValueId x, bool bias = false) {
  std::vector<ValueId> inputs = {x, b.weight("conv_w", {3, 2, 1, 1}, ramp(6))};
  if (bias) inputs.push_back(b.weight("conv_b", {3}, {0.3f, -0.6f, 0.9f}));
  const ValueId y = b.value("conv_out", {1, 3, 4, 4});
  b.node("Conv", inputs, {y});
  return y;
}

ValueId add_conv_transpose(GraphBuilder& b, ValueId x) {
  const ValueId w = b.weight("convt_w", {2, 3, 2, 2}, ramp(24));
  const ValueId y = b.value("convt_out", {1, 3, 4, 4});
  b.node("ConvTranspose", {x, w}, {y});
  return y;
}

ValueId add_gemm(GraphBuilder& b, ValueId x) {
  const ValueId w = b.weight("gemm_w", {6, 5}, ramp(30));
  const ValueId c = b.weight("gemm_c", {5}, ramp(5, 0.1f));
  const ValueId y = b.value("gemm_out", {4, 5});
  b.node("Gemm", {x, w, c}, {y});
  return y;
}

ValueId add_matmul(GraphBuilder& b, ValueId x) {
  const ValueId w = b.weight("matmul_w", {6, 5}, ramp(30));
  const ValueId y = b.value("matmul_out", {4, 5});
  b.node("MatMul", {x, w}, {y});
  return y;
}

struct Producer {
  const char* name;
  Shape input;
  Shape output;
  ValueId (*add)(GraphBuilder&, ValueId);
};

const Producer kProducers[] = {
    {"Conv", {1, 2, 4, 4}, {1, 3, 4, 4}, [](GraphBuilder& b, ValueId x) { return add_conv(b, x); }},
    {"ConvTranspose", {1, 2, 3, 3}, {1, 3, 4, 4}, add_conv_transpose},
    {"Gemm", {4, 6}, {4, 5}, add_gemm},
    {"MatMul", {4, 6}, {4, 5}, add_matmul},
};

// Adds activation `kind` after x of `shape` ("HardSigmoidMul": the exporters' x * HardSigmoid(x)).
ValueId add_activation(GraphBuilder& b, const std::string& kind, ValueId x, const Shape& shape) {
  const ValueId y = b.value(kind + "_out", shape);
  if (kind.starts_with("Clip")) {
    // "ClipInverted": min > max gives max everywhere; "ClipNanMin": a NaN bound gives NaN.
    const float low_value = kind == "ClipInverted" ? 1.5f : kind == "ClipNanMin" ? kNan : -0.5f;
    const ValueId low = b.weight("clip_low", {}, {low_value});
    const ValueId high = b.weight("clip_high", {}, {kind == "ClipInverted" ? -0.5f : 1.5f});
    b.node("Clip", {x, low, high}, {y});
    return y;
  }
  if (kind == "HardSigmoidMul") {
    const ValueId gate = b.value("gate", shape);
    b.node("HardSigmoid", {x}, {gate}).attributes.set("alpha", float_attr(0.25f));
    b.node("Mul", {x, gate}, {y});
    return y;
  }
  Node& node = b.node(kind, {x}, {y});
  if (kind == "LeakyRelu") node.attributes.set("alpha", float_attr(0.1f));
  if (kind == "HardSigmoid") {
    node.attributes.set("alpha", float_attr(0.25f));
    node.attributes.set("beta", float_attr(0.4f));
  }
  return y;
}

const char* const kActivations[] = {"Relu",      "Sigmoid",      "HardSwish",
                                    "LeakyRelu", "HardSigmoid",  "HardSigmoidMul",
                                    "Clip",      "ClipInverted", "ClipNanMin"};

// BatchNormalization over the 3 channels of x.
ValueId add_batchnorm(GraphBuilder& b, ValueId x) {
  const ValueId scale = b.weight("bn_scale", {3}, {1.5f, -0.75f, 0.5f});
  const ValueId bias = b.weight("bn_bias", {3}, {0.1f, -0.2f, 0.3f});
  const ValueId mean = b.weight("bn_mean", {3}, {0.05f, -0.1f, 0.2f});
  const ValueId var = b.weight("bn_var", {3}, positive_ramp(3));
  const ValueId y = b.value("bn_out", {1, 3, 4, 4});
  b.node("BatchNormalization", {x, scale, bias, mean, var}, {y});
  return y;
}

// Add of a per-channel constant [1,3,1,1] to x [1,3,4,4].
ValueId add_channel_constant(GraphBuilder& b, ValueId x) {
  const ValueId constant = b.weight("channel_k", {1, 3, 1, 1}, {0.25f, -0.5f, 1.0f});
  const ValueId y = b.value("add_out", {1, 3, 4, 4});
  b.node("Add", {x, constant}, {y});
  return y;
}

// MatMul [4,6] x [6,5] + Add of a row bias [5].
ValueId add_matmul_bias(GraphBuilder& b, ValueId x) {
  const ValueId bias = b.weight("row_bias", {5}, ramp(5, 0.3f));
  const ValueId y = b.value("bias_out", {4, 5});
  b.node("Add", {add_matmul(b, x), bias}, {y});
  return y;
}

// The decomposed GELU on x [2,8]: erf form (Div by √2 or Mul by 1/√2) or tanh form (Pow(x, 3) or
// x * (x * x)), then 0.5 * x * (1 + ...).
ValueId add_decomposed_gelu(GraphBuilder& b, ValueId x, bool tanh_form, bool variant) {
  const Shape shape = {2, 8};
  auto scalar = [&](const char* name, float value) { return b.weight(name, {}, {value}); };
  auto binary = [&](const char* op, ValueId l, ValueId r, const char* out) {
    const ValueId y = b.value(out, shape);
    b.node(op, {l, r}, {y});
    return y;
  };
  ValueId anchor_out = kNoValue;
  if (!tanh_form) {
    const ValueId scaled = variant ? binary("Mul", x, scalar("inv_sqrt2", 0.70710678f), "d")
                                   : binary("Div", x, scalar("sqrt2", 1.41421356f), "d");
    anchor_out = b.value("erf", shape);
    b.node("Erf", {scaled}, {anchor_out});
  } else {
    const ValueId cube = variant ? binary("Mul", x, binary("Mul", x, x, "square"), "cube")
                                 : binary("Pow", x, scalar("three", 3.0f), "cube");
    const ValueId cubic = binary("Mul", cube, scalar("c", 0.044715f), "cubic");
    const ValueId inner = binary("Add", x, cubic, "inner");
    const ValueId scaled = binary("Mul", inner, scalar("k", 0.7978845608f), "scaled");
    anchor_out = b.value("tanh", shape);
    b.node("Tanh", {scaled}, {anchor_out});
  }
  const ValueId a = binary("Add", anchor_out, scalar("one", 1.0f), "a");
  const ValueId xa = binary("Mul", x, a, "xa");
  return binary("Mul", xa, scalar("half", 0.5f), "gelu");
}

// One rewrite of the optimizer: a model that triggers it, and whether the rewrite keeps the
// arithmetic (then fused and unfused agree bit for bit).
struct FusionPattern {
  std::string name;
  Shape input;
  Shape output;
  std::function<ValueId(GraphBuilder&, ValueId)> body;
  bool exact = true;
};

std::vector<FusionPattern> fusion_patterns() {
  const Shape conv_in = {1, 2, 4, 4};
  const Shape convt_in = {1, 2, 3, 3};
  const Shape planes = {1, 3, 4, 4};
  std::vector<FusionPattern> patterns;
  // An activation epilogue: the producer's output, then the activation on it, as unfused.
  for (const Producer& producer : kProducers) {
    for (const char* activation : kActivations) {
      const std::string kind = activation;
      patterns.push_back({str_cat(producer.name, " + ", kind), producer.input, producer.output,
                          [producer, kind](GraphBuilder& b, ValueId x) {
                            return add_activation(b, kind, producer.add(b, x), producer.output);
                          }});
    }
  }
  // A per-channel Add into a bias-free conv: y + k either way.
  patterns.push_back({"Conv + Add (bias)", conv_in, planes, [](GraphBuilder& b, ValueId x) {
                        return add_channel_constant(b, add_conv(b, x));
                      }});
  patterns.push_back(
      {"ConvTranspose + Add (bias)", convt_in, planes, [](GraphBuilder& b, ValueId x) {
         return add_channel_constant(b, add_conv_transpose(b, x));
       }});
  // A residual Add into the Conv (and the Relu after it as its activation): the skip is a second
  // Conv of x (ResNet's downsample block: the later Conv takes the other's output) or x itself.
  patterns.push_back(
      {"Conv + residual Add (Conv skip) + Relu", conv_in, planes,
       [planes](GraphBuilder& b, ValueId x) {
         const ValueId skip = b.value("skip", planes);
         b.node("Conv", {x, b.weight("skip_w", {3, 2, 1, 1}, ramp(6, 0.3f))}, {skip});
         const ValueId sum = b.value("sum", planes);
         b.node("Add", {add_conv(b, x, true), skip}, {sum});
         return add_activation(b, "Relu", sum, planes);
       }});
  patterns.push_back(
      {"Conv + residual Add (input skip)", planes, planes, [planes](GraphBuilder& b, ValueId x) {
         const ValueId conv = b.value("conv_out", planes);
         b.node("Conv", {x, b.weight("conv_w", {3, 3, 1, 1}, ramp(9))}, {conv});
         const ValueId sum = b.value("sum", planes);
         b.node("Add", {x, conv}, {sum});
         return sum;
       }});
  // Identity, Dropout and a weight-only Transpose (folded at load) compute nothing new.
  patterns.push_back({"Identity + Dropout + Relu", {4, 6}, {4, 6}, [](GraphBuilder& b, ValueId x) {
                        const ValueId i = b.value("identity", {4, 6});
                        const ValueId d = b.value("dropout", {4, 6});
                        b.node("Identity", {x}, {i});
                        b.node("Dropout", {i}, {d});
                        return add_activation(b, "Relu", d, {4, 6});
                      }});
  patterns.push_back({"MatMul(x, Transpose(W))", {4, 6}, {4, 5}, [](GraphBuilder& b, ValueId x) {
                        const ValueId w = b.weight("wt", {5, 6}, ramp(30));
                        const ValueId t = b.value("w", {6, 5});
                        b.node("Transpose", {w}, {t}).attributes.set("perm", ints_attr({1, 0}));
                        const ValueId y = b.value("y", {4, 5});
                        b.node("MatMul", {x, t}, {y});
                        return y;
                      }});
  // Rewrites that round differently: folded BatchNorm, summed biases, Gemm for MatMul + Add, Gelu.
  auto inexact = [&](std::string name, Shape in, Shape out,
                     std::function<ValueId(GraphBuilder&, ValueId)> body) {
    patterns.push_back({std::move(name), in, out, std::move(body), false});
  };
  inexact("Conv + BatchNormalization", conv_in, planes,
          [](GraphBuilder& b, ValueId x) { return add_batchnorm(b, add_conv(b, x)); });
  inexact("ConvTranspose + BatchNormalization", convt_in, planes,
          [](GraphBuilder& b, ValueId x) { return add_batchnorm(b, add_conv_transpose(b, x)); });
  inexact("Conv(bias) + BatchNormalization + Add + Relu", conv_in, planes,
          [planes](GraphBuilder& b, ValueId x) {
            const ValueId bn = add_batchnorm(b, add_conv(b, x, true));
            return add_activation(b, "Relu", add_channel_constant(b, bn), planes);
          });
  inexact("Conv(bias) + Add", conv_in, planes,
          [](GraphBuilder& b, ValueId x) { return add_channel_constant(b, add_conv(b, x, true)); });
  inexact("MatMul + Add", {4, 6}, {4, 5}, add_matmul_bias);
  inexact("MatMul + Add + Relu", {4, 6}, {4, 5}, [](GraphBuilder& b, ValueId x) {
    return add_activation(b, "Relu", add_matmul_bias(b, x), {4, 5});
  });
  for (bool tanh_form : {false, true}) {
    for (bool variant : {false, true}) {
      inexact(str_cat("GELU ", tanh_form ? "tanh" : "erf", variant ? " (variant)" : ""), {2, 8},
              {2, 8}, [tanh_form, variant](GraphBuilder& b, ValueId x) {
                return add_decomposed_gelu(b, x, tanh_form, variant);
              });
    }
  }
  return patterns;
}

Graph build_pattern(const FusionPattern& pattern) {
  GraphBuilder b;
  const ValueId x = b.input("x", pattern.input);
  b.output(pattern.body(b, x));
  return b.finish();
}

// The model of `pattern` loaded at `level` and its node count.
std::shared_ptr<const Model> load_pattern(const FusionPattern& pattern, const char* level) {
  LoadOptions options;
  options.optimize = level;
  auto model = Model::from_graph(build_pattern(pattern), options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

std::vector<float> run_model(const std::shared_ptr<const Model>& model, const Shape& in_shape,
                             const Shape& out_shape, const std::vector<float>& input) {
  SessionOptions options;
  options.threads = 2;
  auto session = Session::create(model, options);
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<float> output(element_count(out_shape));
  TensorView in{const_cast<float*>(input.data()), DType::kFloat32, in_shape, Device{}};
  TensorView out{output.data(), DType::kFloat32, out_shape, Device{}};
  const Status status = (*session)->run({&in, 1}, {&out, 1});
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return output;
}

// Inputs of `count` elements: ordinary values; NaN, +Inf and -Inf sprinkled in; each alone; all
// NaN; all +Inf; all -Inf.
std::vector<std::vector<float>> special_inputs(size_t count) {
  std::vector<float> ordinary(count);
  for (size_t i = 0; i < count; ++i) {
    ordinary[i] = static_cast<float>(static_cast<int>((i * 37) % 23) - 11) * 0.19f;
  }
  std::vector<std::vector<float>> inputs = {ordinary, ordinary, ordinary, ordinary};
  inputs[1][1] = kNan;
  inputs[1][count / 2] = kInf;
  inputs[1][count - 2] = -kInf;
  inputs[2][count / 3] = kNan;
  inputs[3][0] = kInf;
  inputs[3][count - 1] = -kInf;
  inputs.push_back(std::vector<float>(count, kNan));
  inputs.push_back(std::vector<float>(count, kInf));
  inputs.push_back(std::vector<float>(count, -kInf));
  return inputs;
}

}  // namespace

// A Conv + Relu + Conv + Clip model run with --optimize all (both activations fused into the
// convolutions) and none gives the same bits for an all-NaN, an all-Inf and an ordinary input.
TEST_CASE("NaN: a model gives the same outputs fused and unfused") {
  auto build = [] {
    GraphBuilder b;
    const ValueId x = b.input("x", {1, 2, 3, 3});
    const ValueId w1 = b.weight("w1", {2, 2, 1, 1}, {1.0f, -1.0f, 0.5f, 2.0f});
    const ValueId w2 = b.weight("w2", {2, 2, 1, 1}, {-1.0f, 1.0f, 1.5f, 0.5f});
    const ValueId c1 = b.value("c1", {1, 2, 3, 3});
    const ValueId r1 = b.value("r1", {1, 2, 3, 3});
    const ValueId c2 = b.value("c2", {1, 2, 3, 3});
    const ValueId y = b.value("y", {1, 2, 3, 3});
    const ValueId low = b.weight("low", {}, {0.0f});
    const ValueId high = b.weight("high", {}, {6.0f});
    b.node("Conv", {x, w1}, {c1});
    b.node("Relu", {c1}, {r1});
    b.node("Conv", {r1, w2}, {c2});
    b.node("Clip", {c2, low, high}, {y});
    b.output(y);
    return b.finish();
  };
  auto run = [&](const char* level, const std::vector<float>& input) {
    LoadOptions options;
    options.optimize = level;
    auto model = Model::from_graph(build(), options);
    REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
    auto session = Session::create(*model, SessionOptions{});
    REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
    std::vector<float> output(18);
    TensorView in{const_cast<float*>(input.data()), DType::kFloat32, Shape{1, 2, 3, 3}, Device{}};
    TensorView out{output.data(), DType::kFloat32, Shape{1, 2, 3, 3}, Device{}};
    const Status status = (*session)->run({&in, 1}, {&out, 1});
    REQUIRE_MESSAGE(status.is_ok(), status.to_string());
    return output;
  };
  std::vector<float> ordinary(18);
  for (size_t i = 0; i < 18; ++i) ordinary[i] = static_cast<float>(i) - 9.0f;
  for (const auto& input : {std::vector<float>(18, kNan), std::vector<float>(18, kInf),
                            std::vector<float>(18, -kInf), ordinary}) {
    const auto fused = run("all", input);
    const auto plain = run("none", input);
    for (size_t i = 0; i < fused.size(); ++i) {
      CAPTURE(i);
      CHECK(same_bits_or_both_nan(fused[i], plain[i]));
    }
  }
  CHECK(std::isnan(run("all", std::vector<float>(18, kNan))[0]));
}

namespace {

// Runs `pattern` at none, basic and all on every special input and compares (see the test).
void check_pattern(const FusionPattern& pattern) {
  CAPTURE(pattern.name);
  const auto plain = load_pattern(pattern, "none");
  const auto fused = load_pattern(pattern, "all");
  CHECK_MESSAGE(fused->graph().nodes.size() < plain->graph().nodes.size(),
                fused->optimization_summary());
  const auto basic = load_pattern(pattern, "basic");
  const auto inputs = special_inputs(element_count(pattern.input));
  for (size_t k = 0; k < inputs.size(); ++k) {
    CAPTURE(k);
    const auto expected = run_model(plain, pattern.input, pattern.output, inputs[k]);
    const bool has_nan =
        std::any_of(expected.begin(), expected.end(), [](float v) { return std::isnan(v); });
    if (k == 1) CHECK(has_nan);  // the sprinkled NaN reached the output
    for (const auto& model : {fused, basic}) {
      const auto actual = run_model(model, pattern.input, pattern.output, inputs[k]);
      for (size_t i = 0; i < actual.size(); ++i) {
        CAPTURE(i);
        CAPTURE(actual[i]);
        CAPTURE(expected[i]);
        const bool agree = pattern.exact ? same_bits_or_both_nan(actual[i], expected[i])
                                         : same_specials_and_close(actual[i], expected[i]);
        CHECK(agree);
      }
    }
  }
}

}  // namespace

// Every rewrite of the optimizer, 52 patterns: 9 activation epilogues (Clip also with min > max
// and with a NaN min) on each of Conv, ConvTranspose, Gemm and MatMul; a bias Add into Conv and
// ConvTranspose; a residual Add into Conv (two forms); BatchNorm folding; MatMul + Add into Gemm;
// both GELU forms; Identity and Dropout removal; a folded Transpose. --optimize basic and all agree
// with none on ordinary inputs, on NaN / +Inf / -Inf sprinkled in, and on all-NaN and all-Inf
// inputs. Each pattern must really be rewritten at "all" (fewer nodes), and a sprinkled NaN must
// reach the output.
TEST_CASE("NaN/Inf: every fusion pattern gives the unfused model's NaN and Inf") {
  const std::vector<FusionPattern> patterns = fusion_patterns();
  CHECK(patterns.size() == 52);
  for (const FusionPattern& pattern : patterns) check_pattern(pattern);
}

}  // namespace onepool::testing
