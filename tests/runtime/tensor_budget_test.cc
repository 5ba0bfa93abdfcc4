// The per-tensor memory budget checked at model load, before weight folding, kernel preparation
// (whose index tables grow with the output) and the pool: a huge tensor is a clear
// kResourceExhausted naming the tensor and its node, never a bad_alloc or gigabytes of RSS. And
// empty tensors run: a graph input or output with 0 elements has no storage to copy.
#include <doctest/doctest.h>

#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"

namespace onepool::testing {
namespace {

bool contains(const Status& status, const std::string& text) {
  const bool found = status.message().find(text) != std::string::npos;
  if (!found) MESSAGE("looking for '", text, "' in: ", status.to_string());
  return found;
}

Attribute string_attribute(std::string value) {
  Attribute attribute;
  attribute.kind = Attribute::Kind::kString;
  attribute.s = std::move(value);
  return attribute;
}

// x[1,8] -> Pad (constant, pads as given by the shape) -> y of `padded` elements.
Graph pad_graph(int64_t padded) {
  GraphBuilder b;
  const ValueId x = b.input("x", {1, 8});
  const ValueId pads = b.weight("pads", {4}, {0, 0, 0, 0});  // float data, replaced below
  Graph graph = [&] {
    const ValueId y = b.value("y", {1, padded});
    b.node("Pad", {x, pads}, {y}).attributes.set("mode", string_attribute("constant"));
    b.output(y);
    return b.finish();
  }();
  HostTensor& tensor =
      graph.weights[static_cast<size_t>(graph.values[static_cast<size_t>(pads)].weight_index)];
  tensor.dtype = DType::kInt64;
  const std::vector<int64_t> pad_values = {0, 0, 0, padded - 8};
  tensor.data.assign(reinterpret_cast<const std::byte*>(pad_values.data()),
                     reinterpret_cast<const std::byte*>(pad_values.data() + 4));
  graph.values[static_cast<size_t>(pads)].dtype = DType::kInt64;
  return graph;
}

}  // namespace

// A Pad to 2^33 float elements (32 GiB) against a 1 GiB budget: refused at load with the node,
// the tensor, its shape and both sizes. Before the budget, kernel preparation built its 2^33-entry
// tables first (7 GB of RSS in 17 s, then bad_alloc).
TEST_CASE("budget: a huge Pad output is refused at load") {
  LoadOptions options;
  options.max_tensor_bytes = size_t{1} << 30;
  auto model = Model::from_graph(pad_graph(int64_t{1} << 33), options);
  REQUIRE_FALSE(model.has_value());
  CHECK(model.status().code() == StatusCode::kResourceExhausted);
  CHECK(contains(model.status(),
                 "output 'y' of node 'Pad_0' (Pad) float32[1,8589934592] needs "
                 "34359738368 bytes, more than the budget of 1073741824 bytes"));
}

// The default budget is the machine's physical memory: 2^40 float elements (4 TiB) exceed it on
// any machine that runs this suite.
TEST_CASE("budget: the default budget is physical memory") {
  auto model = Model::from_graph(pad_graph(int64_t{1} << 40), LoadOptions{});
  REQUIRE_FALSE(model.has_value());
  CHECK(model.status().code() == StatusCode::kResourceExhausted);
  CHECK(contains(model.status(), "node 'Pad_0' (Pad)"));
}

// Within the budget the same model loads and runs: 8 -> 64 elements, zeros after the input.
TEST_CASE("budget: a Pad within the budget runs") {
  LoadOptions options;
  options.max_tensor_bytes = 256;
  auto model = Model::from_graph(pad_graph(64), options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  auto session = Session::create(*model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> y(64, -1.0f);
  TensorView in{x.data(), DType::kFloat32, Shape{1, 8}, Device{}};
  TensorView out{y.data(), DType::kFloat32, Shape{1, 64}, Device{}};
  REQUIRE((*session)->run({&in, 1}, {&out, 1}).is_ok());
  CHECK(y[7] == 8.0f);
  CHECK(y[8] == 0.0f);
  CHECK(y[63] == 0.0f);
  options.max_tensor_bytes = 255;  // the 256-byte output no longer fits
  CHECK(Model::from_graph(pad_graph(64), options).status().code() ==
        StatusCode::kResourceExhausted);
}

// x[0,3] -> Relu -> y[0,3]: the caller passes null data for the empty tensors; the run copies
// nothing (memcpy with a null pointer was undefined behaviour, caught by UBSan).
TEST_CASE("budget: empty graph inputs and outputs run") {
  GraphBuilder b;
  const ValueId x = b.input("x", {0, 3});
  const ValueId y = b.value("y", {0, 3});
  b.node("Relu", {x}, {y});
  b.output(y);
  auto model = Model::from_graph(b.finish(), LoadOptions{});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  auto session = Session::create(*model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  TensorView in{nullptr, DType::kFloat32, Shape{0, 3}, Device{}};
  TensorView out{nullptr, DType::kFloat32, Shape{0, 3}, Device{}};
  const Status status = (*session)->run({&in, 1}, {&out, 1});
  CHECK_MESSAGE(status.is_ok(), status.to_string());
}

}  // namespace onepool::testing
