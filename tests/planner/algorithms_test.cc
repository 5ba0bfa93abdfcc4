// Placement algorithms: golden vector, randomized invariants, verifier rejections, scale.
#include "planner/algo/algorithms.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "planner/algo/orders.h"
#include "planner/best_fit_reference.h"

namespace onepool {
namespace {

AlgorithmOptions options_with(size_t alignment) {
  AlgorithmOptions options;
  options.alignment = alignment;
  return options;
}

Placement run(const char* name, const std::vector<UsageRecord>& records, size_t alignment) {
  auto algorithm = find_algorithm(name);
  REQUIRE(algorithm.has_value());
  auto placement = (*algorithm)->run(records, options_with(alignment));
  REQUIRE_MESSAGE(placement.has_value(), placement.status().to_string());
  return *placement;
}

// Independent oracle for the lower bound: sum live bytes at every step of a small horizon.
size_t brute_force_lower_bound(const std::vector<UsageRecord>& records) {
  int64_t horizon = 0;
  for (const auto& record : records) horizon = std::max(horizon, record.last + 1);
  size_t peak = 0;
  for (int64_t step = 0; step < horizon; ++step) {
    size_t live = 0;
    for (const auto& record : records) {
      if (record.first <= step && step <= record.last) live += record.bytes;
    }
    peak = std::max(peak, live);
  }
  return peak;
}

std::vector<UsageRecord> random_records(std::mt19937_64& rng, size_t alignment) {
  const size_t count = rng() % 40;
  const int64_t horizon = 1 + static_cast<int64_t>(rng() % 30);
  const bool large = rng() % 4 == 0;
  std::vector<UsageRecord> records(count);
  for (auto& record : records) {
    record.first = static_cast<int64_t>(rng() % static_cast<uint64_t>(horizon));
    record.last = record.first + static_cast<int64_t>(rng() % 6);
    const uint64_t units = large ? (rng() % (1ull << 30)) : (rng() % 64);
    record.bytes = rng() % 10 == 0 ? 0 : static_cast<size_t>(units + 1) * alignment;
  }
  return records;
}

// A DNN-like instance: each step produces one record, most die within a few steps.
std::vector<UsageRecord> dnn_like_records(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UsageRecord> records(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t roll = rng() % 100;
    const int64_t length = roll < 85   ? 1 + static_cast<int64_t>(rng() % 3)
                           : roll < 98 ? static_cast<int64_t>(rng() % 30)
                                       : static_cast<int64_t>(rng() % (count / 10 + 1));
    records[i].first = static_cast<int64_t>(i);
    records[i].last = static_cast<int64_t>(i) + length;
    records[i].bytes = 256 * (1 + rng() % 65536);
  }
  return records;
}

// Shapes for the engine equivalence test. Steps and sizes vary with the seed; `unit` is the
// size granularity (1 gives sizes that share no common divisor, 2^30 sizes near 2^40).
enum class Shape {
  kDnn,
  kAllLive,
  kUniformLong,
  kFewLifetimes,
  kZeroBytes,
  kOddSizes,
  kHuge,
  kScattered
};

size_t shaped_bytes(std::mt19937_64& rng, Shape shape) {
  switch (shape) {
    case Shape::kOddSizes:
      return 1 + rng() % 5000;
    case Shape::kHuge:
      // Near 2^40, plus an odd size now and then: the offsets outgrow 32 bits.
      return rng() % 8 == 0 ? 1 + rng() % 1000 : (1ull << 40) - rng() % (1ull << 20);
    case Shape::kZeroBytes:
      return rng() % 3 == 0 ? 0 : 256 * (1 + rng() % 64);
    default:
      return 256 * (1 + rng() % (rng() % 2 == 0 ? 16 : 65536));
  }
}

std::vector<UsageRecord> shaped_records(std::mt19937_64& rng, Shape shape, size_t count) {
  std::vector<UsageRecord> records(count);
  const auto horizon = static_cast<int64_t>(1 + count);
  for (size_t i = 0; i < count; ++i) {
    UsageRecord& record = records[i];
    record.bytes = shaped_bytes(rng, shape);
    if (shape == Shape::kAllLive) {
      record.first = 0;
      record.last = horizon;
    } else if (shape == Shape::kUniformLong) {
      const auto a = static_cast<int64_t>(rng() % static_cast<uint64_t>(horizon));
      const auto b = static_cast<int64_t>(rng() % static_cast<uint64_t>(horizon));
      record.first = std::min(a, b);
      record.last = std::max(a, b);
    } else if (shape == Shape::kScattered) {
      // Starts uniform over 4 steps per record, lengths exponential with mean 40: many records
      // start and end inside each block of the time index, and most span two blocks or more.
      const auto steps = static_cast<uint64_t>(4 * count + 1);
      const double uniform = static_cast<double>(rng() % 1000000 + 1) / 1e6;
      record.first = static_cast<int64_t>(rng() % steps);
      record.last = record.first + static_cast<int64_t>(-40.0 * std::log(uniform));
    } else if (shape == Shape::kFewLifetimes) {
      record.first = static_cast<int64_t>(rng() % 4) * 10;
      record.last = record.first + static_cast<int64_t>(rng() % 3) * 7;
    } else {
      // DNN-like: one record per step (steps spread apart), most short, a few very long.
      const uint64_t roll = rng() % 100;
      const uint64_t length = roll < 85   ? 1 + rng() % 3
                              : roll < 98 ? rng() % 30
                                          : rng() % (count / 2 + 1);
      record.first = static_cast<int64_t>(3 * i);
      record.last = record.first + static_cast<int64_t>(3 * length);
    }
  }
  return records;
}

std::vector<int32_t> shuffled_order(std::mt19937_64& rng, const std::vector<UsageRecord>& records) {
  std::vector<int32_t> order;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes > 0) order.push_back(static_cast<int32_t>(i));
  }
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

}  // namespace

// Pisarchyk & Lee 2020: naive 234 bytes, lower bound 124; greedy by size reaches 124 exactly,
// linear places the records back to back (offsets 0, 32, 60, 96, 112, 120, 184, 194).
TEST_CASE("golden vector: greedy-by-size reaches the lower bound, linear equals naive") {
  const std::vector<UsageRecord> records = {{0, 1, 32}, {1, 4, 28}, {2, 5, 36}, {3, 5, 16},
                                            {4, 5, 8},  {5, 7, 64}, {6, 8, 10}, {7, 8, 40}};
  CHECK(naive_bytes(records) == 234);
  CHECK(lower_bound_bytes(records) == 124);
  const Placement greedy = run("greedy-by-size", records, 1);
  CHECK(greedy.pool_bytes == 124);
  CHECK(verify_placement(records, greedy, 1).is_ok());
  const Placement linear = run("linear", records, 1);
  CHECK(linear.pool_bytes == 234);
  CHECK(linear.offsets == std::vector<size_t>{0, 32, 60, 96, 112, 120, 184, 194});
  CHECK(verify_placement(records, linear, 1).is_ok());
}

// auto is the default (listed first); unknown names list the valid ones.
TEST_CASE("algorithms are selectable by name") {
  REQUIRE(all_algorithms().size() >= 9);
  CHECK(std::string(all_algorithms()[0].name) == "auto");
  for (const char* name : {"portfolio", "exact", "greedy-by-conflicts", "greedy-by-breadth"}) {
    CHECK_MESSAGE(find_algorithm(name).has_value(), name);
  }
  CHECK(find_algorithm("linear").has_value());
  auto missing = find_algorithm("best-ever");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.status().message().find("greedy-by-size") != std::string::npos);
}

// 10,000 random record sets (0-39 records, alignments 1/16/256, small and 2^30-unit sizes,
// 0-byte records): every placement verifies, LB <= greedy pool <= naive, linear == naive, LB
// matches a per-step brute force, and a second run gives the same offsets.
TEST_CASE("randomized: 10,000 record sets verify, respect the bounds and are deterministic") {
  std::mt19937_64 rng(20240607);
  const size_t alignments[] = {1, 16, 256};
  for (int trial = 0; trial < 10000; ++trial) {
    const size_t alignment = alignments[rng() % 3];
    const std::vector<UsageRecord> records = random_records(rng, alignment);
    const size_t lower_bound = lower_bound_bytes(records);
    REQUIRE(lower_bound == brute_force_lower_bound(records));
    const Placement greedy = run("greedy-by-size", records, alignment);
    const Status verdict = verify_placement(records, greedy, alignment);
    REQUIRE_MESSAGE(verdict.is_ok(), "trial ", trial, ": ", verdict.message());
    REQUIRE(greedy.pool_bytes >= lower_bound);
    REQUIRE(greedy.pool_bytes <= naive_bytes(records));
    REQUIRE(run("greedy-by-size", records, alignment).offsets == greedy.offsets);
    const Placement linear = run("linear", records, alignment);
    REQUIRE(verify_placement(records, linear, alignment).is_ok());
    REQUIRE(linear.pool_bytes == naive_bytes(records));
    // Every greedy order verifies and is deterministic.
    for (const char* name :
         {"greedy-by-lifetime", "greedy-by-area", "greedy-by-conflicts", "greedy-by-breadth"}) {
      const Placement member = run(name, records, alignment);
      REQUIRE_MESSAGE(verify_placement(records, member, alignment).is_ok(), name);
      REQUIRE(member.pool_bytes >= lower_bound);
      REQUIRE(run(name, records, alignment).offsets == member.offsets);
    }
    // auto never loses to greedy-by-size and says "optimal" exactly when it reached the bound.
    const Placement fast = run("auto", records, alignment);
    REQUIRE(verify_placement(records, fast, alignment).is_ok());
    REQUIRE(fast.pool_bytes <= greedy.pool_bytes);
    REQUIRE(fast.pool_bytes >= lower_bound);
    REQUIRE(fast.proven_optimal == (fast.pool_bytes == lower_bound));
  }
}

// The multi-stage algorithms on 300 random record sets: verify, never lose to auto, never go
// below the lower bound, and a pool at the lower bound is reported as optimal.
TEST_CASE("randomized: portfolio and exact verify and never lose to auto") {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t alignment = trial % 2 == 0 ? 1 : 256;
    const std::vector<UsageRecord> records = random_records(rng, alignment);
    const size_t lower_bound = lower_bound_bytes(records);
    const Placement fast = run("auto", records, alignment);
    for (const char* name : {"portfolio", "exact"}) {
      const Placement best = run(name, records, alignment);
      REQUIRE_MESSAGE(verify_placement(records, best, alignment).is_ok(), name, " trial ", trial);
      REQUIRE(best.pool_bytes <= fast.pool_bytes);
      REQUIRE(best.pool_bytes >= lower_bound);
      if (best.pool_bytes == lower_bound) REQUIRE(best.proven_optimal);
    }
  }
}

// Pisarchyk & Lee's breadth order on the golden vector. Bytes live per step 0..8: 32, 60, 64,
// 80, 88, 124, 74, 114, 50. Widest step 5 first: records 5, 2, 3, 4 (64, 36, 16, 8 B); then step
// 7: 7, 6 (40, 10 B); step 4: 1; step 1: 0. Best fit in that order reaches the bound, 124 bytes.
TEST_CASE("greedy-by-breadth: widest step first, its records largest first") {
  const std::vector<UsageRecord> records = {{0, 1, 32}, {1, 4, 28}, {2, 5, 36}, {3, 5, 16},
                                            {4, 5, 8},  {5, 7, 64}, {6, 8, 10}, {7, 8, 40}};
  CHECK(breadth_order(records) == std::vector<int32_t>{5, 2, 3, 4, 7, 6, 1, 0});
  const Placement breadth = run("greedy-by-breadth", records, 1);
  REQUIRE(verify_placement(records, breadth, 1).is_ok());
  CHECK(breadth.pool_bytes == 124);
  CHECK(breadth.offsets == std::vector<size_t>{28, 0, 64, 100, 116, 0, 104, 64});
}

// Three 16-byte records: 0 lives at steps 0-2, 1 at 2-3, 2 at 4. Offsets {0, 8, 0} in a 32-byte
// pool collide (0 and 1 share step 2, bytes 8-16); {0, 16, 4} is misaligned for alignment 16;
// {0, 16, 32} ends past a 32-byte pool; {0, 16, 0} is valid (2 reuses 0's bytes later).
TEST_CASE("verify_placement rejects overlapping, misaligned and out-of-pool placements") {
  const std::vector<UsageRecord> records = {{0, 2, 16}, {2, 3, 16}, {4, 4, 16}};
  const Status overlap = verify_placement(records, {{0, 8, 0}, 32}, 8);
  REQUIRE_FALSE(overlap.is_ok());
  CHECK(overlap.message().find("record 0") != std::string::npos);
  CHECK(overlap.message().find("record 1") != std::string::npos);
  CHECK(overlap.message().find("[8, 24)") != std::string::npos);
  const Status misaligned = verify_placement(records, {{0, 16, 4}, 32}, 16);
  REQUIRE_FALSE(misaligned.is_ok());
  CHECK(misaligned.message().find("record 2") != std::string::npos);
  CHECK(misaligned.message().find("alignment 16") != std::string::npos);
  const Status outside = verify_placement(records, {{0, 16, 32}, 32}, 16);
  REQUIRE_FALSE(outside.is_ok());
  CHECK(outside.message().find("past the pool of 32") != std::string::npos);
  CHECK(verify_placement(records, {{0, 16, 0}, 32}, 16).is_ok());
  CHECK_FALSE(verify_placement(records, {{0, 16}, 32}, 16).is_ok());  // wrong count
}

// Records that touch only at a step boundary (0-1 and 2-3) may share bytes; records sharing step
// 1 may not. Zero-byte records are ignored wherever they sit.
TEST_CASE("verify_placement: lifetimes are inclusive, zero-byte records are ignored") {
  const std::vector<UsageRecord> records = {{0, 1, 8}, {2, 3, 8}, {1, 1, 0}};
  CHECK(verify_placement(records, {{0, 0, 0}, 8}, 8).is_ok());
  const std::vector<UsageRecord> sharing = {{0, 1, 8}, {1, 3, 8}};
  CHECK_FALSE(verify_placement(sharing, {{0, 0}, 8}, 8).is_ok());
}

// Inputs the algorithms refuse: alignment 3, first > last, size 100 with alignment 64, and
// sizes whose sum overflows size_t.
TEST_CASE("algorithms reject invalid records") {
  for (const AlgorithmInfo& algorithm : all_algorithms()) {
    CHECK_FALSE(algorithm.run(std::vector<UsageRecord>{{0, 0, 3}}, options_with(3)).has_value());
    CHECK_FALSE(algorithm.run(std::vector<UsageRecord>{{2, 1, 64}}, options_with(64)).has_value());
    CHECK_FALSE(algorithm.run(std::vector<UsageRecord>{{0, 0, 100}}, options_with(64)).has_value());
    const size_t huge = (SIZE_MAX / 2) & ~size_t{255};
    auto overflow = algorithm.run(
        std::vector<UsageRecord>{{0, 0, huge}, {0, 0, huge}, {0, 0, huge}}, options_with(256));
    REQUIRE_FALSE(overflow.has_value());
    CHECK(overflow.status().code() == StatusCode::kOutOfRange);
  }
}

// Every record live at every step: nothing can share, so greedy == LB == naive (3 x 256 bytes).
TEST_CASE("greedy-by-size: all records live together stack up to naive") {
  const std::vector<UsageRecord> records = {{0, 5, 256}, {0, 5, 512}, {0, 5, 1024}};
  const Placement greedy = run("greedy-by-size", records, 256);
  CHECK(greedy.pool_bytes == 1792);
  CHECK(greedy.offsets == std::vector<size_t>{1536, 1024, 0});  // largest first at 0
}

// Best fit, not first fit. Sizes strictly decrease so the order is the listed one:
// big 4096 B (steps 0-9) at 0; A 2048 B (0-1) at 4096; wall 1024 B (0-9) at 6144; B 768 B (0-1)
// at 7168; wall 512 B (0-9) at 7936. At step 5, A and B are dead, leaving gaps of 2048 B at 4096
// and 768 B at 7168: the last record (512 B, step 5) goes to the smaller gap, offset 7168.
TEST_CASE("greedy-by-size picks the smallest gap that fits") {
  const std::vector<UsageRecord> records = {{0, 9, 4096}, {0, 1, 2048}, {0, 9, 1024},
                                            {0, 1, 768},  {0, 9, 512},  {5, 5, 512}};
  const Placement greedy = run("greedy-by-size", records, 256);
  REQUIRE(verify_placement(records, greedy, 256).is_ok());
  CHECK(greedy.offsets == std::vector<size_t>{0, 4096, 6144, 7168, 7936, 7168});
  CHECK(greedy.pool_bytes == 8448);
}

// The same records with first fit: the last record takes the lowest gap that fits, offset
// 4096 (A's old bytes), not the smaller gap at 7168.
TEST_CASE("greedy-by-size-first-fit picks the lowest gap that fits") {
  const std::vector<UsageRecord> records = {{0, 9, 4096}, {0, 1, 2048}, {0, 9, 1024},
                                            {0, 1, 768},  {0, 9, 512},  {5, 5, 512}};
  const Placement first_fit = run("greedy-by-size-first-fit", records, 256);
  REQUIRE(verify_placement(records, first_fit, 256).is_ok());
  CHECK(first_fit.offsets == std::vector<size_t>{0, 4096, 6144, 7168, 7936, 4096});
  CHECK(first_fit.pool_bytes == 8448);
}

// First fit, the obvious way: the placed records live with `record` sorted by offset, the first
// gap that fits.
size_t reference_first_fit(std::span<const UsageRecord> records, const Placement& placed,
                           const std::vector<int32_t>& done, const UsageRecord& record) {
  std::vector<std::pair<size_t, size_t>> used;
  for (int32_t other : done) {
    const UsageRecord& o = records[static_cast<size_t>(other)];
    if (o.first > record.last || record.first > o.last) continue;
    used.emplace_back(placed.offsets[static_cast<size_t>(other)],
                      placed.offsets[static_cast<size_t>(other)] + o.bytes);
  }
  std::sort(used.begin(), used.end());
  size_t cursor = 0;
  for (const auto& [begin, end] : used) {
    if (begin > cursor && begin - cursor >= record.bytes) return cursor;
    cursor = std::max(cursor, end);
  }
  return cursor;
}

// The engine's first fit equals the obvious one on 300 random sets of up to 400 records, in
// size order: DNN-like ones, and every third one scattered (see Shape::kScattered).
TEST_CASE("first fit: the engine matches a direct reference") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<UsageRecord> records =
        seed % 3 == 0 ? shaped_records(rng, Shape::kScattered, 1 + seed % 400)
                      : dnn_like_records(1 + seed % 400, seed);
    const std::vector<int32_t> order = size_order(records);
    const Placement engine = place_greedy_in_order(records, order, GapChoice::kFirstFit);
    Placement expected;
    expected.offsets.assign(records.size(), 0);
    std::vector<int32_t> done;
    for (int32_t index : order) {
      const UsageRecord& record = records[static_cast<size_t>(index)];
      const size_t offset = reference_first_fit(records, expected, done, record);
      expected.offsets[static_cast<size_t>(index)] = offset;
      expected.pool_bytes = std::max(expected.pool_bytes, offset + record.bytes);
      done.push_back(index);
    }
    REQUIRE_MESSAGE(engine.offsets == expected.offsets, "seed ", seed);
    CHECK(engine.pool_bytes == expected.pool_bytes);
  }
}

// 100,000 DNN-like records (lifetimes mostly 1-3 steps, sizes 256 B .. 16 MB): greedy plans,
// verifies, stays within [LB, naive]; auto gives about the first-fit pool (above 20,000 records it
// is greedy by size with first fit alone, from 100,000 cut in parts along time), smaller than best
// fit's here; linear equals naive. No timing assertion here (bench/plan_speed).
TEST_CASE("large instance: 100,000 records plan and verify") {
  const std::vector<UsageRecord> records = dnn_like_records(100000, 7);
  const Placement greedy = run("greedy-by-size", records, 256);
  const Status verdict = verify_placement(records, greedy, 256);
  REQUIRE_MESSAGE(verdict.is_ok(), verdict.message());
  CHECK(greedy.pool_bytes >= lower_bound_bytes(records));
  CHECK(greedy.pool_bytes < naive_bytes(records) / 100);
  const Placement first_fit = run("greedy-by-size-first-fit", records, 256);
  REQUIRE(verify_placement(records, first_fit, 256).is_ok());
  CHECK(first_fit.pool_bytes < greedy.pool_bytes);
  const Placement automatic = run("auto", records, 256);
  CHECK(automatic.pool_bytes < greedy.pool_bytes);
  CHECK(static_cast<double>(automatic.pool_bytes) <=
        1.005 * static_cast<double>(first_fit.pool_bytes));
  CHECK(run("linear", records, 256).pool_bytes == naive_bytes(records));
}

// Records with identical lifetimes share one address union in the engine: 2,000 records all
// live at steps 0-1 stack up to exactly their sum, and 2,000 records live at single, distinct
// steps all sit at offset 0 (pool = the largest).
TEST_CASE("greedy-by-size: identical and disjoint lifetimes") {
  std::vector<UsageRecord> together;
  std::vector<UsageRecord> apart;
  for (int64_t i = 0; i < 2000; ++i) {
    together.push_back({0, 1, static_cast<size_t>(1 + i % 7) * 256});
    apart.push_back({i, i, static_cast<size_t>(1 + i % 7) * 256});
  }
  CHECK(run("greedy-by-size", together, 256).pool_bytes == naive_bytes(together));
  const Placement spread = run("greedy-by-size", apart, 256);
  CHECK(spread.pool_bytes == 7 * 256);
  CHECK(std::all_of(spread.offsets.begin(), spread.offsets.end(),
                    [](size_t offset) { return offset == 0; }));
}

// The optimized best-fit engine against a frozen copy of the original (best_fit_reference.h):
// 7 shapes x 24 seeds, 0 to ~3,000 records (enough to fill blocks, tree nodes and rebuild lazy
// nodes; one set of 10,000-15,000 per shape for a deep tree), every greedy order plus a random
// one: offsets and pool must be bit-identical. Shapes cover 32-bit addresses (sizes in units of
// 256 or of 1) and the 64-bit fallback (sizes near 2^40). size_order (a radix sort when its key
// fits in 64 bits) must equal the comparator sort.
TEST_CASE("best-fit engine: identical offsets to the reference engine for every order") {
  using OrderFn = std::vector<int32_t> (*)(std::span<const UsageRecord>);
  const OrderFn orders[] = {&size_order, &lifetime_order, &area_order, &conflicts_order,
                            &breadth_order};
  const Shape shapes[] = {Shape::kDnn,          Shape::kAllLive,   Shape::kUniformLong,
                          Shape::kFewLifetimes, Shape::kZeroBytes, Shape::kOddSizes,
                          Shape::kHuge,         Shape::kScattered};
  std::mt19937_64 rng(1234567);
  for (const Shape shape : shapes) {
    for (int seed = 0; seed < 24; ++seed) {
      // One set of 10,000+ per shape (but uniform lifetimes: slow here); DNN-like ones span over
      // 16,384 steps, so the time index has more than kMergedTopLevels (8) levels.
      const bool large = seed == 23 && shape != Shape::kUniformLong;
      const size_t count = large           ? 10000 + rng() % 5000
                           : seed % 4 == 3 ? 1500 + rng() % 1500
                                           : rng() % 300;
      const std::vector<UsageRecord> records = shaped_records(rng, shape, count);
      REQUIRE(size_order(records) == testing::reference_size_order(records));
      std::vector<std::vector<int32_t>> all_orders;
      for (const OrderFn order_fn : orders) all_orders.push_back(order_fn(records));
      all_orders.push_back(shuffled_order(rng, records));
      for (size_t k = 0; k < all_orders.size(); ++k) {
        const Placement expected = testing::reference_place_greedy_in_order(records, all_orders[k]);
        const Placement actual = place_greedy_in_order(records, all_orders[k]);
        REQUIRE_MESSAGE(actual.offsets == expected.offsets, "shape ", static_cast<int>(shape),
                        " seed ", seed, " order ", k, " records ", count);
        REQUIRE(actual.pool_bytes == expected.pool_bytes);
      }
    }
  }
}

}  // namespace onepool
