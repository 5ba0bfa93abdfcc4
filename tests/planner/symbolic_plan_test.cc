// SymbolicPlan: the structure of a placement re-evaluated for new sizes. Randomized invariants
// (valid for any sizes, exact at the source sizes for best fit), a hand-made example, errors,
// and the evaluation time of a 1000-record plan.
#include "planner/analysis/symbolic_plan.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

constexpr size_t kAlignment = 64;

std::vector<UsageRecord> random_records(std::mt19937_64& rng, size_t count) {
  const int64_t horizon = 1 + static_cast<int64_t>(rng() % 40);
  std::vector<UsageRecord> records(count);
  for (auto& record : records) {
    record.first = static_cast<int64_t>(rng() % static_cast<uint64_t>(horizon));
    record.last = record.first + static_cast<int64_t>(rng() % 8);
    record.bytes = rng() % 12 == 0 ? 0 : (rng() % 64 + 1) * kAlignment;
  }
  return records;
}

Placement greedy(const std::vector<UsageRecord>& records) {
  AlgorithmOptions options;
  options.alignment = kAlignment;
  auto placement = place_greedy_by_size(records, options);
  REQUIRE(placement.has_value());
  return *placement;
}

// Each size scaled by a random factor in [0, 4] (sizes need not be monotone or even aligned).
std::vector<size_t> rescaled(std::mt19937_64& rng, const std::vector<UsageRecord>& records) {
  std::vector<size_t> bytes;
  for (const auto& record : records) bytes.push_back(record.bytes * (rng() % 33) / 8 + rng() % 3);
  return bytes;
}

}  // namespace

// 2000 random instances placed by greedy best fit: at the source sizes the symbolic plan gives
// back every offset (best fit puts each record at 0 or on top of one below it); at random new
// sizes (each 0x..4x, unaligned) the evaluated placement always verifies.
TEST_CASE("symbolic plans are exact at the source sizes and valid at any sizes") {
  std::mt19937_64 rng(7);
  for (int instance = 0; instance < 2000; ++instance) {
    const std::vector<UsageRecord> records = random_records(rng, rng() % 60);
    const Placement source = greedy(records);
    auto symbolic = SymbolicPlan::build(records, source.offsets, kAlignment);
    REQUIRE(symbolic.has_value());
    CHECK(symbolic->exact_at_source());
    std::vector<size_t> source_bytes;
    for (const auto& record : records) source_bytes.push_back(record.bytes);
    auto again = symbolic->evaluate(source_bytes);
    REQUIRE(again.has_value());
    CHECK(again->pool_bytes == source.pool_bytes);
    for (int trial = 0; trial < 4; ++trial) {
      const std::vector<size_t> bytes = rescaled(rng, records);
      auto placement = symbolic->evaluate(bytes);
      REQUIRE(placement.has_value());
      std::vector<UsageRecord> resized = records;
      for (size_t i = 0; i < resized.size(); ++i) {
        resized[i].bytes = (bytes[i] + kAlignment - 1) / kAlignment * kAlignment;
      }
      const Status status = verify_placement(resized, *placement, kAlignment);
      REQUIRE_MESSAGE(status.is_ok(), status.message());
      CHECK(placement->pool_bytes >= lower_bound_bytes(resized));
    }
  }
}

// Three records: a [0..1] 100 B at 0, b [1..2] 200 B at 100, c [2..3] 50 B at 0. c meets b (step
// 2) and sits below it, so below(b) = {a, c} and below(a) = below(c) = {}. At new sizes a = 300,
// b = 10, c = 500: b = max(300, 500) = 500; pool 510.
TEST_CASE("a hand-made symbolic plan evaluates to the expected offsets") {
  const std::vector<UsageRecord> records{{0, 1, 100}, {1, 2, 200}, {2, 3, 50}};
  const std::vector<size_t> offsets{0, 100, 0};
  auto symbolic = SymbolicPlan::build(records, offsets, 1);
  REQUIRE(symbolic.has_value());
  CHECK(symbolic->pair_count() == 2);
  CHECK(symbolic->exact_at_source());
  auto placement = symbolic->evaluate(std::vector<size_t>{300, 10, 500});
  REQUIRE(placement.has_value());
  CHECK(placement->offsets == std::vector<size_t>{0, 500, 0});
  CHECK(placement->pool_bytes == 510);
}

// A source that leaves a gap (b at 150 where 100 would do) still gives a valid plan, but not
// the source offsets: exact_at_source() is false.
TEST_CASE("a placement with gaps is valid but not exact") {
  const std::vector<UsageRecord> records{{0, 1, 100}, {1, 2, 200}};
  auto symbolic = SymbolicPlan::build(records, std::vector<size_t>{0, 150}, 1);
  REQUIRE(symbolic.has_value());
  CHECK_FALSE(symbolic->exact_at_source());
}

TEST_CASE("symbolic plans reject bad input and overflowing sizes") {
  const std::vector<UsageRecord> records{{0, 1, 64}, {1, 2, 64}};
  CHECK_FALSE(SymbolicPlan::build(records, std::vector<size_t>{0}, 64).has_value());
  CHECK_FALSE(SymbolicPlan::build(records, std::vector<size_t>{0, 64}, 48).has_value());
  const std::vector<UsageRecord> backwards{{3, 1, 64}};
  CHECK_FALSE(SymbolicPlan::build(backwards, std::vector<size_t>{0}, 64).has_value());
  auto symbolic = SymbolicPlan::build(records, std::vector<size_t>{0, 64}, 64);
  REQUIRE(symbolic.has_value());
  CHECK_FALSE(symbolic->evaluate(std::vector<size_t>{64}).has_value());
  const size_t huge = SIZE_MAX / 2 + 1;
  auto overflow = symbolic->evaluate(std::vector<size_t>{huge, huge});
  REQUIRE_FALSE(overflow.has_value());
  CHECK(overflow.status().message().find("overflows") != std::string::npos);
}

// 1000 DNN-like records (each live a few steps, a few long skips): build once, evaluate 200
// size sets. Timing is printed, not asserted (shared machines); on a quiet core an evaluation
// takes a few microseconds to tens of microseconds, a greedy placement a millisecond or more.
TEST_CASE("evaluating a 1000-record symbolic plan takes microseconds") {
  std::mt19937_64 rng(11);
  std::vector<UsageRecord> records(1000);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].first = static_cast<int64_t>(i);
    records[i].last = static_cast<int64_t>(i) + (rng() % 10 == 0 ? 40 : 1 + rng() % 3);
    records[i].bytes = (rng() % 4096 + 1) * kAlignment;
  }
  using Clock = std::chrono::steady_clock;
  const auto place_start = Clock::now();
  const Placement source = greedy(records);
  const double place_us =
      std::chrono::duration<double, std::micro>(Clock::now() - place_start).count();
  auto symbolic = SymbolicPlan::build(records, source.offsets, kAlignment);
  REQUIRE(symbolic.has_value());
  CHECK(symbolic->exact_at_source());
  const int kRounds = 200;
  std::vector<std::vector<size_t>> sizes;
  for (int round = 0; round < kRounds; ++round) sizes.push_back(rescaled(rng, records));
  const auto start = Clock::now();
  size_t checksum = 0;
  for (const auto& bytes : sizes) {
    auto placement = symbolic->evaluate(bytes);
    REQUIRE(placement.has_value());
    checksum += placement->pool_bytes;
  }
  const double evaluate_us =
      std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kRounds;
  MESSAGE("1000 records, ", symbolic->pair_count(), " pairs: evaluate ", evaluate_us,
          " us, greedy placement ", place_us, " us");
  CHECK(checksum > 0);
}

}  // namespace onepool
