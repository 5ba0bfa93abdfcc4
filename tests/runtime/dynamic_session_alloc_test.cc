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

#include "onepool/dynamic_session.h"

// The replacement operator new below allocates with malloc, so its operator delete frees with
// free; GCC cannot see that pairing through the replacement and warns.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
void note_allocation() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
}  // namespace

void* operator new(std::size_t size) {
  note_allocation();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  note_allocation();
  const auto alignment = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)) {
    return p;
  }
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) { return operator new(size, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

#if !defined(__SANITIZE_ADDRESS__)
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* malloc(std::size_t size) {
  note_allocation();
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  note_allocation();
  return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) {
  note_allocation();
  return __libc_realloc(p, size);
}
}
#endif

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
