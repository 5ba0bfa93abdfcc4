// Seeded synthetic usage records shared by plan_bench and plan_speed: DNN-like sets (one record
// per step; 85% die within 3 steps, 13% within 30, 2% are long skip connections) and two
// adversarial sets (every record live at once; uniformly random long lifetimes), sizes
// log-uniform in 256 B .. 16 MB, multiples of 256; and a scattered set (starts uniform over 20,000
// steps, lengths exponential with mean 40, sizes log-uniform in 64 B .. 2 MiB rounded up to 256).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "planner/algo/algorithms.h"

namespace onepool::bench {

inline constexpr size_t kSyntheticAlignment = 256;

inline size_t log_uniform_bytes(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> exponent(std::log(256.0), std::log(16.0 * 1024 * 1024));
  const auto bytes = static_cast<size_t>(std::exp(exponent(rng)));
  return (bytes + kSyntheticAlignment - 1) / kSyntheticAlignment * kSyntheticAlignment;
}

inline std::vector<UsageRecord> scattered(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> start(0, 19999);
  std::exponential_distribution<double> length(1.0 / 40.0);
  std::uniform_real_distribution<double> exponent(std::log(64.0), std::log(2.0 * 1024 * 1024));
  std::vector<UsageRecord> records(count);
  for (auto& record : records) {
    const int64_t first = start(rng);
    const auto last = first + static_cast<int64_t>(std::llround(length(rng)));
    const auto bytes = static_cast<size_t>(std::exp(exponent(rng)));
    record = {first, last,
              (bytes + kSyntheticAlignment - 1) / kSyntheticAlignment * kSyntheticAlignment};
  }
  return records;
}

inline std::vector<UsageRecord> dnn_like(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UsageRecord> records(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t roll = rng() % 100;
    const uint64_t length = roll < 85   ? 1 + rng() % 3
                            : roll < 98 ? rng() % 30
                                        : rng() % (count / 10 + 1);
    records[i] = {static_cast<int64_t>(i), static_cast<int64_t>(i + length),
                  log_uniform_bytes(rng)};
  }
  return records;
}

inline std::vector<UsageRecord> all_live(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UsageRecord> records(count);
  for (auto& record : records) record = {0, static_cast<int64_t>(count), log_uniform_bytes(rng)};
  return records;
}

inline std::vector<UsageRecord> uniform_long(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UsageRecord> records(count);
  for (auto& record : records) {
    const auto a = static_cast<int64_t>(rng() % count);
    const auto b = static_cast<int64_t>(rng() % count);
    record = {std::min(a, b), std::max(a, b), log_uniform_bytes(rng)};
  }
  return records;
}

}  // namespace onepool::bench
