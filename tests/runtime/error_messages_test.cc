// Messages that say what is wrong: a malformed node makes the model invalid (not "cannot run on
// the CPU backend"); a kernel that names its node at run time is not prefixed a second time.
#include <doctest/doctest.h>

#include <vector>

#include "common/graph_builder.h"
#include "onepool/model.h"
#include "onepool/session.h"

namespace onepool::testing {
namespace {

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace

// X[5,6] -> Identity -> Y[5,7]: Y cannot hold X's 30 elements. The model is invalid.
TEST_CASE("messages: a malformed node is an invalid model, not a backend limit") {
  GraphBuilder b;
  const ValueId x = b.input("X", {5, 6});
  const ValueId y = b.value("Y", {5, 7});
  b.node("Identity", {x}, {y});
  b.output(y);
  LoadOptions options;
  options.optimize = "none";  // keep the Identity node
  auto model = Model::from_graph(b.finish(), options);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  auto session = Session::create(*model, SessionOptions{});
  REQUIRE_FALSE(session.has_value());
  CHECK(session.status().code() == StatusCode::kInvalidModel);
  const std::string message = session.status().message();
  CHECK_MESSAGE(message.find("the model is invalid: 1 node(s) are malformed") != std::string::npos,
                message);
  CHECK(message.find("cannot run on the CPU backend") == std::string::npos);
  CHECK(message.find("output 'Y' float32[5,7] must hold the same bytes as input 'X'") !=
        std::string::npos);
}

// Gather with a runtime index 9 into 4 rows: the run fails naming node 'Gather_0' once.
TEST_CASE("messages: a run-time kernel error names its node once") {
  GraphBuilder b;
  const ValueId data = b.weight("data", {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const ValueId indices = b.input("indices", {1});
  Graph graph = [&] {
    const ValueId y = b.value("y", {1, 2});
    b.node("Gather", {data, indices}, {y});
    b.output(y);
    return b.finish();
  }();
  graph.values[static_cast<size_t>(indices)].dtype = DType::kInt64;
  auto model = Model::from_graph(std::move(graph), LoadOptions{});
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  auto session = Session::create(*model, SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  int64_t index = 9;
  std::vector<float> y(2);
  TensorView in{&index, DType::kInt64, Shape{1}, Device{}};
  TensorView out{y.data(), DType::kFloat32, Shape{1, 2}, Device{}};
  const Status status = (*session)->run({&in, 1}, {&out, 1});
  REQUIRE_FALSE(status.is_ok());
  CHECK_MESSAGE(count_of(status.message(), "node 'Gather_0' (Gather)") == 1, status.message());
  CHECK(status.message().find("9") != std::string::npos);
}

}  // namespace onepool::testing
