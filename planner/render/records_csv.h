// Usage records from a CSV file in MiniMalloc's format: `id,lower,upper,size` per line.
//
// A buffer is live in [lower, upper): first step = lower, last step = upper - 1. An optional
// header line `id,lower,upper,size` may come first; blank lines are skipped, '\r' is tolerated.
// Malformed lines are rejected with their line number and the reason: wrong field count, a
// non-integer, a negative number, upper <= lower, a duplicate id, or an integer too large.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "onepool/status.h"
#include "planner/algo/algorithms.h"

namespace onepool {

/// Parsed records, index for index with their ids. Sizes are as written (not aligned).
struct RecordsFile {
  std::vector<std::string> ids;
  std::vector<UsageRecord> records;
};

/// Parses CSV text. Pure function; thread-safe.
Expected<RecordsFile> parse_records_csv(std::string_view text);
/// Reads and parses the file at `path` (errors name the path).
Expected<RecordsFile> load_records_csv(const std::string& path);

}  // namespace onepool
