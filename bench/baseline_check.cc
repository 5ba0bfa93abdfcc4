#include "bench/baseline_check.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/baselines/baselines.h"
#include "bench/baselines/ort_bfc_arena.h"

namespace onepool::bench {
namespace {

// Pisarchyk & Lee 2020's example (docs: PLANNER.md): LB 124, naive 234.
const std::vector<UsageRecord> kGolden = {{0, 1, 32}, {1, 4, 28}, {2, 5, 36}, {3, 5, 16},
                                          {4, 5, 8},  {5, 7, 64}, {6, 8, 10}, {7, 8, 40}};

// Worked out by hand:
//  tflm-greedy      64@0 40@64 36@64 32@0 28@32 16@100 10@104 8@116 -> 124 (first fit reaches LB)
//  tvm-greedy-size  same order, each above its conflicts: 16@128, 8@144 -> 152
//  ort-pattern      execution order: 32@0 28@32 36@60 16@0 8@16 64@96 10@0 40@10 -> 160
//  ort-arena        everything fits the first 1 MiB region (alignment 1 rounds to 256 B)
struct GoldenPool {
  const char* baseline;
  size_t pool_bytes;
};
constexpr GoldenPool kGoldenPools[] = {
    {"tflm-greedy", 124}, {"tvm-greedy-size", 152}, {"ort-pattern", 160}, {"ort-arena", 1 << 20}};

bool check_golden() {
  bool ok = true;
  AlgorithmOptions options;
  options.alignment = 1;
  for (const GoldenPool& expected : kGoldenPools) {
    for (const BaselineInfo& baseline : all_baselines()) {
      if (std::string(baseline.name) != expected.baseline) continue;
      auto placement = run_baseline(baseline, kGolden, options);
      const size_t pool = placement ? placement->placement.pool_bytes : 0;
      const bool pass = placement && pool == expected.pool_bytes;
      std::printf("%s golden vector %s: pool %zu, expected %zu\n", pass ? "ok  " : "FAIL",
                  baseline.name, pool, expected.pool_bytes);
      ok = ok && pass;
    }
  }
  return ok;
}

std::vector<UsageRecord> random_records(std::mt19937_64& rng, size_t count) {
  std::vector<UsageRecord> records(count);
  for (UsageRecord& record : records) {
    const auto first = static_cast<int64_t>(rng() % 50);
    record = {first, first + static_cast<int64_t>(rng() % 8), 256 * (rng() % 6)};
  }
  return records;
}

bool check_random() {
  std::mt19937_64 rng(7);
  AlgorithmOptions options;
  options.alignment = 256;
  for (int round = 0; round < 200; ++round) {
    const std::vector<UsageRecord> records = random_records(rng, 1 + rng() % 60);
    const size_t lower_bound = lower_bound_bytes(records);
    for (const BaselineInfo& baseline : all_baselines()) {
      auto placement = run_baseline(baseline, records, options);
      if (!placement || placement->placement.pool_bytes < lower_bound) {
        std::printf(
            "FAIL random set %d %s: %s\n", round, baseline.name,
            placement ? "pool below the lower bound" : placement.status().message().c_str());
        return false;
      }
    }
  }
  std::printf("ok   200 random record sets: every baseline verifies, no pool below the LB\n");
  return true;
}

// A 1 KiB first region makes the arena extend, split and merge on every set.
bool check_arena_growth() {
  std::mt19937_64 rng(11);
  AlgorithmOptions options;
  options.alignment = 256;
  BfcArenaOptions arena;
  arena.initial_region_bytes = 1024;
  for (int round = 0; round < 200; ++round) {
    const std::vector<UsageRecord> records = random_records(rng, 1 + rng() % 60);
    auto placement = place_ort_bfc_arena(records, options, arena);
    const Status valid =
        placement ? verify_placement(records, *placement, options.alignment) : placement.status();
    if (!valid.is_ok()) {
      std::printf("FAIL growing arena, random set %d: %s\n", round, valid.message().c_str());
      return false;
    }
  }
  std::printf("ok   200 random record sets through an arena that starts at 1 KiB\n");
  return true;
}

}  // namespace

int run_baseline_self_check() {
  const bool golden = check_golden();
  const bool random = check_random();
  const bool growth = check_arena_growth();
  return golden && random && growth ? 0 : 1;
}

}  // namespace onepool::bench
