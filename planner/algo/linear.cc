// `linear`: no reuse. Offsets are prefix sums, so pool == naive. TFLite Micro keeps the same
// planner as a debug baseline; O(n).
#include "planner/algo/algorithms.h"

namespace onepool {

Expected<Placement> place_linear(std::span<const UsageRecord> records,
                                 const AlgorithmOptions& options) {
  ONEPOOL_RETURN_IF_ERROR(check_records(records, options.alignment));
  Placement placement;
  placement.offsets.resize(records.size(), 0);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;  // 0-byte records sit at offset 0
    placement.offsets[i] = placement.pool_bytes;
    placement.pool_bytes += records[i].bytes;  // check_records proved the sum fits
  }
  return placement;
}

}  // namespace onepool
