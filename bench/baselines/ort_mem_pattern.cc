#include "bench/baselines/ort_mem_pattern.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "bench/baselines/ort_reuse.h"

namespace onepool::bench {
namespace {

// The live buffers sorted by offset, as ORT's pattern planner keeps them.
class LiveBlocks {
 public:
  explicit LiveBlocks(std::span<const UsageRecord> buffers)
      : buffers_(buffers), offsets_(buffers.size(), 0) {}

  void allocate(int32_t buffer) {
    const size_t bytes = buffers_[static_cast<size_t>(buffer)].bytes;
    size_t best_offset = live_.empty() ? 0 : end_of(live_.back());
    size_t best_position = live_.size();
    size_t least_waste = std::numeric_limits<size_t>::max();
    size_t current = 0;
    for (size_t position = 0; position < live_.size(); ++position) {
      const size_t offset = offsets_[static_cast<size_t>(live_[position])];
      if (offset >= current) {
        const size_t gap = offset - current;
        if (gap >= bytes && gap - bytes < least_waste) {
          least_waste = gap - bytes;
          best_offset = current;
          best_position = position;
        }
      }
      current = end_of(live_[position]);
    }
    offsets_[static_cast<size_t>(buffer)] = best_offset;
    live_.insert(live_.begin() + static_cast<std::ptrdiff_t>(best_position), buffer);
    peak_ = std::max(peak_, best_offset + bytes);
  }

  void free(int32_t buffer) { live_.erase(std::find(live_.begin(), live_.end(), buffer)); }

  const std::vector<size_t>& offsets() const { return offsets_; }
  size_t peak() const { return peak_; }

 private:
  size_t end_of(int32_t buffer) const {
    return offsets_[static_cast<size_t>(buffer)] + buffers_[static_cast<size_t>(buffer)].bytes;
  }

  std::span<const UsageRecord> buffers_;
  std::vector<size_t> offsets_;
  std::vector<int32_t> live_;
  size_t peak_ = 0;
};

}  // namespace

Expected<Placement> place_ort_mem_pattern(std::span<const UsageRecord> records,
                                          const AlgorithmOptions& /*options*/) {
  const SharedBuffers shared = reuse_freed_exact_size(records);
  LiveBlocks blocks(shared.buffers);
  for (const BufferEvent& event : execution_events(shared.buffers)) {
    if (event.allocate) {
      blocks.allocate(event.buffer);
    } else {
      blocks.free(event.buffer);
    }
  }
  return records_placement(shared, blocks.offsets(), blocks.peak());
}

}  // namespace onepool::bench
