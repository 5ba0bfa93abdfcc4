// libFuzzer entry: the records CSV parser must never crash, throw or loop on any input, and
// every record it accepts must satisfy its documented contract.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "planner/render/records_csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = onepool::parse_records_csv(text);
  if (!parsed.has_value()) return 0;
  if (parsed->ids.size() != parsed->records.size()) std::abort();
  for (const onepool::UsageRecord& record : parsed->records) {
    if (record.first < 0 || record.last < record.first) std::abort();
  }
  return 0;
}
