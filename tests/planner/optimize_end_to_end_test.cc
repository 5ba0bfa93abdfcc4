// Graph optimizer end to end: the CPU kernels give the same outputs before and after optimizing.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "planner/optimize_test_util.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::testing {
namespace {

// --- end to end: the CPU kernels on the graph before and after optimizing ----------------------

// Runs every node of `graph` in order with the CPU kernels (one host buffer per value) and returns
// the graph outputs. `inputs` follow graph.inputs.
Expected<std::vector<HostTensor>> run_graph(const Graph& graph,
                                            const std::vector<HostTensor>& inputs) {
  const auto registry = cpu::KernelRegistry::with_all_kernels();
  cpu::ThreadPool pool(2);
  std::vector<HostTensor> tensors(graph.values.size());
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    tensors[static_cast<size_t>(graph.inputs[i])] = inputs[i];
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    if (graph.values[v].kind == ValueKind::kWeight) {
      tensors[v] = graph.weight(static_cast<ValueId>(v));
    }
  }
  auto view = [&tensors](ValueId id) {
    if (id == kNoValue) return TensorView{};
    HostTensor& t = tensors[static_cast<size_t>(id)];
    return TensorView{t.data.data(), t.dtype, t.shape, Device{}};
  };
  for (const Node& node : graph.nodes) {
    const cpu::KernelFactory factory = registry.find(node.op_type);
    if (factory == nullptr) return make_status(StatusCode::kUnsupported, node.op_type);
    ONEPOOL_ASSIGN_OR_RETURN(cpu::PreparedKernel prepared, factory(cpu::NodeContext(graph, node)));
    std::vector<TensorView> in_views;
    std::vector<TensorView> out_views;
    for (ValueId id : node.inputs) in_views.push_back(view(id));
    for (ValueId id : node.outputs) {
      const Value& value = graph.values[static_cast<size_t>(id)];
      HostTensor& t = tensors[static_cast<size_t>(id)];
      t.dtype = value.dtype;
      t.shape = value.shape;
      t.data.assign(value.bytes(), std::byte{0xCD});
      out_views.push_back(view(id));
    }
    std::vector<std::byte> workspace(prepared.workspace_bytes + 1);
    cpu::RunContext context;
    context.inputs = in_views;
    context.outputs = out_views;
    context.workspace = workspace.data();
    context.workspace_bytes = prepared.workspace_bytes;
    context.threads = &pool;
    ONEPOOL_RETURN_IF_ERROR(prepared.kernel->run(context).with_context(describe_node(node)));
  }
  std::vector<HostTensor> outputs;
  for (ValueId id : graph.outputs) outputs.push_back(tensors[static_cast<size_t>(id)]);
  return outputs;
}

// Deterministic values in [-1, 1) (a small LCG), so every run sees the same numbers.
std::vector<float> pseudo_random(size_t count, uint32_t seed) {
  std::vector<float> values(count);
  for (float& value : values) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return values;
}

HostTensor random_tensor(Shape shape, uint32_t seed) {
  HostTensor tensor;
  tensor.dtype = DType::kFloat32;
  tensor.shape = shape;
  const std::vector<float> values = pseudo_random(static_cast<size_t>(shape.element_count()), seed);
  tensor.data.resize(values.size() * sizeof(float));
  std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
  return tensor;
}

// Runs `graph` before and after optimize(all) on `inputs`; returns the largest absolute output
// difference (the outputs are O(1), so float rounding stays far below 1e-4).
double max_difference_after_optimizing(const Graph& graph, const std::vector<HostTensor>& inputs,
                                       int expected_nodes_after) {
  Expected<std::vector<HostTensor>> before = run_graph(graph, inputs);
  REQUIRE_MESSAGE(before.has_value(), before.status().to_string());
  Graph optimized = graph;
  const OptimizeReport report = optimize_ok(optimized, OptimizeLevel::kAll);
  CHECK(report.nodes_after == expected_nodes_after);
  Expected<std::vector<HostTensor>> after = run_graph(optimized, inputs);
  REQUIRE_MESSAGE(after.has_value(), after.status().to_string());
  REQUIRE(before->size() == after->size());
  double worst = 0.0;
  for (size_t o = 0; o < before->size(); ++o) {
    const HostTensor& a = (*before)[o];
    const HostTensor& b = (*after)[o];
    REQUIRE(a.shape == b.shape);
    for (int64_t i = 0; i < a.element_count(); ++i) {
      worst = std::max(worst, std::abs(a.float_at(i) - b.float_at(i)));
    }
  }
  return worst;
}

std::vector<float> positive(std::vector<float> values) {
  for (float& value : values) value = 0.5f + std::abs(value);
  return values;
}

// Conv(3→4, 3x3, pad 1) + BN + Add([1,4,1,1]) + x·HardSigmoid(x): 5 nodes → 1 Conv; the outputs
// agree within 1e-4.
TEST_CASE("end to end: Conv + BN + bias + HardSigmoidMul gives the same outputs") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 3, 5, 5});
  const ValueId c = b.value("c", {1, 4, 5, 5});
  const ValueId n = b.value("n", {1, 4, 5, 5});
  const ValueId a = b.value("a", {1, 4, 5, 5});
  const ValueId h = b.value("h", {1, 4, 5, 5});
  const ValueId y = b.value("y", {1, 4, 5, 5});
  Node& conv = b.node("Conv",
                      {x, b.weight("W", {4, 3, 3, 3}, pseudo_random(108, 1)),
                       b.weight("B", {4}, pseudo_random(4, 2))},
                      {c});
  conv.attributes.set("pads", ints_attr({1, 1, 1, 1}));
  b.node("BatchNormalization",
         {c, b.weight("scale", {4}, pseudo_random(4, 3)),
          b.weight("bn_bias", {4}, pseudo_random(4, 4)), b.weight("mean", {4}, pseudo_random(4, 5)),
          b.weight("var", {4}, positive(pseudo_random(4, 6)))},
         {n});
  b.node("Add", {n, b.weight("k", {1, 4, 1, 1}, pseudo_random(4, 7))}, {a});
  b.node("HardSigmoid", {a}, {h}).attributes.set("alpha", float_attr(1.0f / 6.0f));
  b.node("Mul", {a, h}, {y});
  b.output(y);
  const Graph graph = b.finish();

  CHECK(max_difference_after_optimizing(graph, {random_tensor({1, 3, 5, 5}, 8)}, 1) < 1e-4);
}

// ConvTranspose(2→3, 2x2, stride 2) + BN + Clip(0, 0.5) (opset 13): 3 nodes → 1.
TEST_CASE("end to end: ConvTranspose + BN + Clip gives the same outputs") {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 2, 3, 3});
  const ValueId c = b.value("c", {1, 3, 6, 6});
  const ValueId n = b.value("n", {1, 3, 6, 6});
  const ValueId y = b.value("y", {1, 3, 6, 6});
  Node& deconv =
      b.node("ConvTranspose", {x, b.weight("W", {2, 3, 2, 2}, pseudo_random(24, 11))}, {c});
  deconv.attributes.set("strides", ints_attr({2, 2}));
  b.node(
      "BatchNormalization",
      {c, b.weight("scale", {3}, pseudo_random(3, 12)),
       b.weight("bn_bias", {3}, pseudo_random(3, 13)), b.weight("mean", {3}, pseudo_random(3, 14)),
       b.weight("var", {3}, positive(pseudo_random(3, 15)))},
      {n});
  b.node("Clip", {n, b.weight("lo", {}, {0}), b.weight("hi", {}, {0.5f})}, {y});
  b.output(y);
  const Graph graph = b.finish();

  CHECK(max_difference_after_optimizing(graph, {random_tensor({1, 2, 3, 3}, 16)}, 1) < 1e-4);
}

// MatMul([4,6] x [6,5]) + Add([5]) + LeakyRelu(0.2) + Identity → one Gemm writing "y".
TEST_CASE("end to end: MatMul + Add + LeakyRelu + Identity gives the same outputs") {
  GraphBuilder b;
  const ValueId x = b.input("x", {4, 6});
  const ValueId m = b.value("m", {4, 5});
  const ValueId a = b.value("a", {4, 5});
  const ValueId l = b.value("l", {4, 5});
  const ValueId y = b.value("y", {4, 5});
  b.node("MatMul", {x, b.weight("W", {6, 5}, pseudo_random(30, 21))}, {m});
  b.node("Add", {b.weight("bias", {5}, pseudo_random(5, 22)), m}, {a});
  b.node("LeakyRelu", {a}, {l}).attributes.set("alpha", float_attr(0.2f));
  b.node("Identity", {l}, {y});
  b.output(y);
  const Graph graph = b.finish();

  CHECK(max_difference_after_optimizing(graph, {random_tensor({4, 6}, 23)}, 1) < 1e-4);
}

// x = 3 · input ([4,16], values in [-3, 3)) feeds BERT's erf GELU (Div √2, Erf, Add 1, Mul x,
// Mul 0.5 → "y_erf") and GPT-2's tanh GELU (Pow 3, Mul 0.044715, Add x, Mul √(2/π), Tanh, Add 1,
// Mul x, Mul 0.5 → "y_tanh"): 14 nodes → Mul + 2 Gelu, outputs within 1e-5 (float rounding of
// the chains; the Gelu kernel computes the same formulas).
TEST_CASE("end to end: the erf and tanh GELU chains give the same outputs as one Gelu each") {
  GraphBuilder b;
  const Shape shape{4, 16};
  int count = 0;
  auto node = [&](const char* op, std::vector<ValueId> inputs) {
    const ValueId out = b.value(str_cat("v", count++), shape);
    b.node(op, std::move(inputs), {out});
    return out;
  };
  const ValueId input = b.input("input", shape);
  const ValueId half = b.weight("half", {}, {0.5f});
  const ValueId one = b.weight("one", {}, {1.0f});
  const ValueId x = node("Mul", {input, b.weight("three", {}, {3.0f})});
  const ValueId erf = node("Erf", {node("Div", {x, b.weight("sqrt2", {}, {1.41421356f})})});
  b.output(node("Mul", {node("Mul", {x, node("Add", {erf, one})}), half}));
  const ValueId cube = node("Pow", {x, b.weight("three_exp", {}, {3.0f})});
  const ValueId inner = node("Add", {x, node("Mul", {cube, b.weight("cubic", {}, {0.044715f})})});
  const ValueId t = node("Tanh", {node("Mul", {inner, b.weight("root", {}, {0.7978845608f})})});
  b.output(node("Mul", {node("Mul", {node("Add", {t, one}), x}), half}));
  const Graph graph = b.finish();
  REQUIRE(graph.nodes.size() == 14);

  CHECK(max_difference_after_optimizing(graph, {random_tensor(shape, 31)}, 3) < 1e-5);
}

}  // namespace
}  // namespace onepool::testing
