// Runs one CPU kernel on a one-node graph, for kernel unit tests. Output shapes are given by the
// test (no shape inference here): the expected numbers are written inline in each test.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "planner/core/graph.h"
#include "runtime/cpu/half_compute.h"
#include "runtime/cpu/kernel_registry.h"

namespace onepool::testing {

/// An input of the test node: data plus whether it is a weight (constant) in the graph.
struct TestInput {
  HostTensor tensor;
  bool constant = false;
};

template <class T>
HostTensor make_host_tensor(DType dtype, Shape shape, const std::vector<T>& values) {
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape = shape;
  tensor.data.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
  return tensor;
}

inline TestInput f32(Shape shape, const std::vector<float>& values, bool constant = false) {
  return {make_host_tensor(DType::kFloat32, shape, values), constant};
}
inline TestInput i64(Shape shape, const std::vector<int64_t>& values, bool constant = false) {
  return {make_host_tensor(DType::kInt64, shape, values), constant};
}

struct OutputSpec {
  DType dtype;
  Shape shape;
};

/// Builds the graph, prepares the kernel through the registry, runs it with `threads` threads,
/// and returns the outputs. std::nullopt inputs are omitted optional inputs.
Expected<std::vector<HostTensor>> run_single_node(
    const std::string& op_type, const std::vector<std::optional<TestInput>>& inputs,
    const std::vector<OutputSpec>& outputs, const AttributeMap& attributes = {}, int threads = 2);

/// What run_single_node_in_place returns: output 0 and the sharing the kernel declared.
struct InPlaceResult {
  HostTensor output;
  uint32_t in_place_inputs = 0;
  bool in_place_grows = false;
};

/// Like run_single_node, with output 0 in the same buffer as input 0 (from its start; the buffer
/// holds the larger of the two), as the planner lays out an in-place or growing in-place node.
Expected<InPlaceResult> run_single_node_in_place(
    const std::string& op_type, const std::vector<std::optional<TestInput>>& inputs,
    const OutputSpec& output, const AttributeMap& attributes = {}, int threads = 2);

template <class T>
std::vector<T> values_of(const HostTensor& tensor) {
  std::vector<T> values(tensor.data.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), tensor.data.data(), tensor.data.size());
  return values;
}

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
inline Attribute string_attr(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute floats_attr(std::vector<float> v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

// Deterministic values in [-1, 1) (an LCG seeded with `seed`).
inline std::vector<float> random_values(int64_t count, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(count));
  uint32_t state = seed * 2654435761u + 1u;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
  }
  return values;
}

/// `count` deterministic bytes from the same generator (its top 8 bits), for 8-bit tensors.
inline std::vector<uint8_t> random_bytes(size_t count, uint32_t seed) {
  std::vector<uint8_t> bytes(count);
  uint32_t state = seed * 2654435761u + 1u;
  for (auto& b : bytes) {
    state = state * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(state >> 24);
  }
  return bytes;
}

}  // namespace onepool::testing

// The implementation lives in the header's companion so that each test file can include it once.
#include "runtime/kernel_test_util_impl.h"
