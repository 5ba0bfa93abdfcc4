// Greedy placement in parts along time: valid, the same for every thread count, the same pool as
// in one piece on the large synthetic sets, and exactly the whole placement on small instances.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "planner/algo/algorithms.h"
#include "planner/algo/orders.h"

namespace onepool {
namespace {

// Starts uniform over `steps` steps, lengths exponential with mean 40, sizes log-uniform in
// 256 B .. 2 MiB (multiples of 256): the scattered records of bench/plan_speed, sparser or denser.
std::vector<UsageRecord> scattered(size_t count, int64_t steps, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> start(0, steps - 1);
  std::exponential_distribution<double> length(1.0 / 40.0);
  std::uniform_real_distribution<double> exponent(std::log(256.0), std::log(2.0 * 1024 * 1024));
  std::vector<UsageRecord> records(count);
  for (UsageRecord& record : records) {
    const int64_t first = start(rng);
    const auto bytes = static_cast<size_t>(std::exp(exponent(rng)));
    record = {first, first + static_cast<int64_t>(std::llround(length(rng))),
              (bytes + 255) / 256 * 256};
  }
  return records;
}

TEST_CASE("time parts: valid, and the same offsets on 1, 2 and 5 threads") {
  const std::vector<UsageRecord> records = scattered(120000, 24000, 11);
  const std::vector<int32_t> order = size_order(records);
  REQUIRE(time_part_count(order.size()) > 1);
  const Placement one = place_greedy_in_time_parts(records, order, GapChoice::kFirstFit, 1);
  CHECK(verify_placement(records, one, 256).is_ok());
  for (const size_t threads : {size_t{2}, size_t{5}}) {
    const Placement many =
        place_greedy_in_time_parts(records, order, GapChoice::kFirstFit, threads);
    CHECK(many.offsets == one.offsets);
    CHECK(many.pool_bytes == one.pool_bytes);
  }
  // Best fit cut the same way is valid too.
  const Placement best = place_greedy_in_time_parts(records, order, GapChoice::kBestFit, 2);
  CHECK(verify_placement(records, best, 256).is_ok());
}

TEST_CASE("time parts: within half a percent of the placement in one piece") {
  const std::vector<UsageRecord> records = scattered(100000, 20000, 6);
  const std::vector<int32_t> order = size_order(records);
  const Placement whole = place_greedy_in_order(records, order, GapChoice::kFirstFit);
  const Placement parts = place_greedy_in_time_parts(records, order, GapChoice::kFirstFit, 2);
  CHECK(verify_placement(records, parts, 256).is_ok());
  CHECK(static_cast<double>(parts.pool_bytes) <= 1.005 * static_cast<double>(whole.pool_bytes));
}

TEST_CASE("time parts: small instances are placed whole") {
  const std::vector<UsageRecord> records = scattered(5000, 1000, 3);
  const std::vector<int32_t> order = size_order(records);
  CHECK(time_part_count(order.size()) == 1);
  const Placement whole = place_greedy_in_order(records, order, GapChoice::kFirstFit);
  const Placement parts = place_greedy_in_time_parts(records, order, GapChoice::kFirstFit, 4);
  CHECK(parts.offsets == whole.offsets);
}

TEST_CASE("time parts: sparse steps and records across every cut") {
  // Steps far apart (the sorting path), and a long record live across the whole instance.
  std::vector<UsageRecord> records = scattered(110000, 22000, 5);
  for (UsageRecord& record : records) {
    record.first *= 1000;
    record.last *= 1000;
  }
  records.push_back({0, 22000 * 1000, 4096});
  const std::vector<int32_t> order = size_order(records);
  const Placement one = place_greedy_in_time_parts(records, order, GapChoice::kFirstFit, 1);
  CHECK(verify_placement(records, one, 256).is_ok());
  const Placement two = place_greedy_in_time_parts(records, order, GapChoice::kFirstFit, 2);
  CHECK(two.offsets == one.offsets);
}

TEST_CASE("auto: the same plan on one thread and on every core") {
  const std::vector<UsageRecord> records = scattered(100000, 20000, 9);
  AlgorithmOptions one_thread;
  AlgorithmOptions every_core;
  every_core.threads = 0;
  const Expected<Placement> first = place_auto(records, one_thread);
  const Expected<Placement> second = place_auto(records, every_core);
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(first->offsets == second->offsets);
  CHECK(verify_placement(records, *first, 256).is_ok());
}

}  // namespace
}  // namespace onepool
