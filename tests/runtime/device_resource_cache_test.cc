// DeviceResourceCache: one resource per (Model, device), created once however many Sessions ask
// at once, released with the last user, created again after that; a failed creation caches
// nothing. The CUDA backend shares its weights upload through it.
#include "runtime/device_resource_cache.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace onepool {

namespace {
DeviceResourceCache::Factory counting_factory(std::atomic<int>& created, int value) {
  return [&created, value]() -> Expected<std::shared_ptr<const void>> {
    ++created;
    return std::shared_ptr<const void>(std::make_shared<int>(value));
  };
}
}  // namespace

TEST_CASE("device resources: one per device, shared while used, made again after release") {
  DeviceResourceCache cache;
  std::atomic<int> created{0};
  auto first = cache.get_or_create(0, counting_factory(created, 7));
  auto second = cache.get_or_create(0, counting_factory(created, 8));
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(first->get() == second->get());
  CHECK(*static_cast<const int*>(first->get()) == 7);
  CHECK(created == 1);
  auto other_device = cache.get_or_create(1, counting_factory(created, 9));
  REQUIRE(other_device.has_value());
  CHECK(other_device->get() != first->get());
  CHECK(created == 2);
  first = std::shared_ptr<const void>();
  second = std::shared_ptr<const void>();  // the last users of device 0 are gone
  auto again = cache.get_or_create(0, counting_factory(created, 10));
  REQUIRE(again.has_value());
  CHECK(*static_cast<const int*>(again->get()) == 10);
  CHECK(created == 3);
}

TEST_CASE("device resources: a failed creation caches nothing") {
  DeviceResourceCache cache;
  auto failed = cache.get_or_create(0, []() -> Expected<std::shared_ptr<const void>> {
    return make_status(StatusCode::kDeviceError, "out of device memory");
  });
  CHECK_FALSE(failed.has_value());
  CHECK(failed.status().message() == "out of device memory");
  std::atomic<int> created{0};
  CHECK(cache.get_or_create(0, counting_factory(created, 1)).has_value());
  CHECK(created == 1);
}

// Eight threads ask at once (eight Sessions of a SessionPool binding): one creation, one object.
TEST_CASE("device resources: concurrent requests create once") {
  DeviceResourceCache cache;
  std::atomic<int> created{0};
  std::vector<std::shared_ptr<const void>> results(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      auto resource = cache.get_or_create(0, counting_factory(created, 3));
      if (resource) results[t] = *resource;
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(created == 1);
  for (const auto& result : results) CHECK(result.get() == results[0].get());
}

}  // namespace onepool
