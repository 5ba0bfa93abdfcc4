// DynamicSession::run on a cached shape allocates nothing: global operator new and (outside
// AddressSanitizer builds) malloc/calloc/realloc count while a flag is set. Three shapes of
// dyn_fpn in static mode run once each (specializations built), then 30 runs cycling over them
// count exactly 0 allocations, and the pool was allocated once.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "common/allocation_counter.h"
#include "onepool/dynamic_session.h"

namespace {

struct ShapeBuffers {
  std::vector<float> input;
  std::vector<float> output;
  onepool::TensorView input_view;
  onepool::TensorView output_view;
};

}  // namespace

// The counter itself works: one vector allocation while counting is 1 (or more), not 0.
TEST_CASE("the allocation counter sees allocations") {
  g_allocations = 0;
  g_counting = true;
  auto* p = new std::vector<int>(100);
  g_counting = false;
  delete p;
  CHECK(g_allocations.load() >= 1);
}

TEST_CASE("DynamicSession::run allocates nothing on a cached shape") {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  onepool::DynamicSessionOptions options;
  auto profile = onepool::ShapeProfile::parse("input:1x3x[16..64:8]x[16..64:8]");
  REQUIRE(profile.has_value());
  options.profile = *profile;
  options.session.threads = 2;
  auto session = onepool::DynamicSession::create(std::string(dir) + "/dyn_fpn.onnx", options);
  REQUIRE_MESSAGE(session.has_value(), session.status().message());
  std::vector<ShapeBuffers> buffers(3);
  const int64_t sides[3][2] = {{16, 24}, {48, 32}, {64, 64}};
  for (size_t i = 0; i < buffers.size(); ++i) {
    const onepool::Shape shape{1, 3, sides[i][0], sides[i][1]};
    buffers[i].input.assign(static_cast<size_t>(shape.element_count()), 0.5f);
    buffers[i].input_view = {buffers[i].input.data(), onepool::DType::kFloat32, shape, {}};
    auto outputs = (*session)->output_infos({&buffers[i].input_view, 1});
    REQUIRE(outputs.has_value());
    const onepool::Shape out_shape = (*outputs)[0].shape;
    buffers[i].output.resize(static_cast<size_t>(out_shape.element_count()));
    buffers[i].output_view = {buffers[i].output.data(), onepool::DType::kFloat32, out_shape, {}};
    REQUIRE((*session)->run({&buffers[i].input_view, 1}, {&buffers[i].output_view, 1}).is_ok());
  }
  g_allocations = 0;
  g_counting = true;
  bool all_ok = true;
  for (int run = 0; run < 30; ++run) {
    ShapeBuffers& b = buffers[static_cast<size_t>(run) % buffers.size()];
    all_ok = (*session)->run({&b.input_view, 1}, {&b.output_view, 1}).is_ok() && all_ok;
  }
  g_counting = false;
  CHECK(all_ok);
  CHECK(g_allocations.load() == 0);
  CHECK((*session)->stats().pool_allocations == 1);
  CHECK((*session)->stats().mode == onepool::PoolMode::kStatic);
}
