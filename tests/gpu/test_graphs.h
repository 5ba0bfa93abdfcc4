// Single-node graphs for backend tests: deterministic tensors, a Case (one node, its inputs and
// output shapes), the graph and Model it becomes, and running a Model on a Session. Shared by
// tests/gpu/parity_test.cc (CUDA vs CPU) and tests/gpu/expectations_test.cc (no device).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/core/graph.h"
#include "planner/core/onepool_ops.h"

namespace onepool::test_graphs {

// --- tensors -----------------------------------------------------------------------------------

inline HostTensor zeros(DType dtype, const Shape& shape) {
  HostTensor t{dtype, shape, {}};
  t.data.assign(static_cast<size_t>(shape.element_count()) * dtype_size(dtype), std::byte{0});
  return t;
}

inline HostTensor random_floats(const Shape& shape, float lo, float hi, uint32_t seed) {
  HostTensor t = zeros(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < shape.element_count(); ++i) t.as_mutable<float>()[i] = dist(rng);
  return t;
}

template <class T>
HostTensor tensor_of(DType dtype, const Shape& shape, const std::vector<T>& values) {
  HostTensor t = zeros(dtype, shape);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

inline HostTensor floats(const Shape& shape, const std::vector<float>& values) {
  return tensor_of(DType::kFloat32, shape, values);
}

inline HostTensor int64s(const Shape& shape, const std::vector<int64_t>& values) {
  return tensor_of(DType::kInt64, shape, values);
}

/// Integers in [lo, hi) of an integer dtype or bool (nonzero = true); other dtypes get random
/// bytes (Where and copies move bits only).
inline HostTensor random_ints(DType dtype, const Shape& shape, int64_t lo, int64_t hi,
                              uint32_t seed) {
  HostTensor t = zeros(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi - 1);
  const size_t size = dtype_size(dtype);
  for (int64_t i = 0; i < shape.element_count(); ++i) {
    const int64_t v = dist(rng);
    std::byte* p = t.data.data() + static_cast<size_t>(i) * size;
    if (dtype == DType::kBool) {
      *reinterpret_cast<bool*>(p) = v != 0;
    } else if (dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
               dtype == DType::kBFloat16) {
      for (size_t b = 0; b < size; ++b) p[b] = static_cast<std::byte>(rng() & 0x7f);
    } else {
      std::memcpy(p, &v, size);  // little-endian: the low bytes
    }
  }
  return t;
}

// --- a single-node case ------------------------------------------------------------------------

struct In {
  HostTensor tensor;
  bool constant = false;  ///< a weight (constant input), else a graph input
};

inline In var(HostTensor t) { return In{std::move(t), false}; }
inline In constant(HostTensor t) { return In{std::move(t), true}; }
/// A float graph input with values in [lo, hi).
inline In rnd(const Shape& s, uint32_t seed = 1, float lo = -1.0f, float hi = 1.0f) {
  return var(random_floats(s, lo, hi, seed));
}
/// A float constant (weight) input with values in [-1, 1).
inline In weight(const Shape& s, uint32_t seed) {
  return constant(random_floats(s, -1.0f, 1.0f, seed));
}

/// One node with its inputs (std::nullopt: omitted) and outputs (dtype kUndefined: an omitted
/// optional output); `expected` holds outputs known independently of any backend (from
/// tests/gpu/op_expectations.h), else empty.
struct Case {
  std::string label;
  std::string op;
  std::vector<std::optional<In>> inputs;
  std::vector<std::pair<DType, Shape>> outputs;
  AttributeMap attributes;
  int opset = 17;
  double atol = 1e-4;
  double rtol = 1e-3;
  std::vector<HostTensor> expected;
};

inline Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
inline Attribute float_attr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
inline Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute string_attr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline Attribute floats_attr(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}
inline Attribute strings_attr(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

using Attributes = std::vector<std::pair<std::string, Attribute>>;

/// A case with one output of `dtype` and shape `out`, labelled with the op unless `label` says
/// more.
inline Case make_case(std::string op, std::vector<std::optional<In>> inputs, DType dtype, Shape out,
                      Attributes attributes = {}, std::string label = "") {
  Case c;
  c.label = label.empty() ? op : op + " " + label;
  c.op = std::move(op);
  c.inputs = std::move(inputs);
  c.outputs = {{dtype, std::move(out)}};
  for (auto& [name, value] : attributes) c.attributes.set(name, value);
  return c;
}

inline Graph single_node_graph(const Case& c) {
  Graph graph;
  graph.opset = c.opset;
  Node node;
  node.name = "test_" + c.op;
  node.op_type = c.op;
  // OnePool's own ops are named "ai.onepool.<op>", as the registries file them.
  const std::string own = std::string(kOnePoolDomain) + ".";
  if (c.op.starts_with(own)) {
    node.domain = kOnePoolDomain;
    node.op_type = c.op.substr(own.size());
  }
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
    if (c.outputs[i].first == DType::kUndefined) {
      node.outputs.push_back(kNoValue);
      continue;
    }
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

/// The case as a Model, unoptimized (the node must reach the kernel as written).
inline Expected<std::shared_ptr<const Model>> model_of(const Case& c) {
  LoadOptions options;
  options.optimize = "none";
  return Model::from_graph(single_node_graph(c), options);
}

/// The graph inputs of a case (constants excluded), in graph-input order.
inline std::vector<HostTensor> case_inputs(const Case& c) {
  std::vector<HostTensor> inputs;
  for (const auto& in : c.inputs) {
    if (in && !in->constant) inputs.push_back(in->tensor);
  }
  return inputs;
}

// --- running -----------------------------------------------------------------------------------

/// Output tensors for `model`, filled with 0xCD so that an output never written is seen.
inline std::vector<HostTensor> allocate_outputs(const Model& model) {
  std::vector<HostTensor> outputs;
  for (const TensorInfo& info : model.outputs()) {
    HostTensor t{info.dtype, info.shape, {}};
    t.data.assign(static_cast<size_t>(info.shape.element_count()) * dtype_size(info.dtype),
                  std::byte{0xCD});
    outputs.push_back(std::move(t));
  }
  return outputs;
}

inline std::vector<TensorView> views_of(std::vector<HostTensor>& tensors) {
  std::vector<TensorView> views;
  for (HostTensor& t : tensors) views.push_back(TensorView{t.data.data(), t.dtype, t.shape, {}});
  return views;
}

/// Creates a Session and runs it once per input set (each set gets fresh 0xCD outputs).
inline Expected<std::vector<std::vector<HostTensor>>> run_sets(
    const std::shared_ptr<const Model>& model, const SessionOptions& options,
    std::vector<std::vector<HostTensor>>& input_sets, CudaGraphStats* stats = nullptr) {
  ONEPOOL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(model, options));
  std::vector<std::vector<HostTensor>> results;
  for (std::vector<HostTensor>& inputs : input_sets) {
    std::vector<HostTensor> outputs = allocate_outputs(*model);
    std::vector<TensorView> in = views_of(inputs);
    std::vector<TensorView> out = views_of(outputs);
    ONEPOOL_RETURN_IF_ERROR(session->run(in, out));
    results.push_back(std::move(outputs));
  }
  if (stats != nullptr) *stats = session->cuda_graph_stats();
  return results;
}

/// The same tensor with its elements rotated by one position (same values, so the same valid
/// range: positive for Log, valid indices, ...), for a second run that must give new outputs.
inline HostTensor rotated(const HostTensor& t) {
  HostTensor r = t;
  const size_t size = dtype_size(t.dtype);
  if (t.data.size() > size) {
    std::memmove(r.data.data(), t.data.data() + size, t.data.size() - size);
    std::memcpy(r.data.data() + t.data.size() - size, t.data.data(), size);
  }
  return r;
}

}  // namespace onepool::test_graphs
