// The one host pool a DynamicSession's specializations share: grows geometrically, shrinks on
// request, and counts every (re)allocation. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "onepool/status.h"

namespace onepool {

class SharedPool {
 public:
  /// Ensures at least `bytes`. A growth at least doubles the capacity (so growth events stay
  /// logarithmic in the size range), but stops at `expected_top` (an estimate of the largest
  /// need, 0 when unknown) when `bytes` fits under it. Growing frees the old block first:
  /// contents do not survive, and views into it must be re-bound (generation()).
  Status reserve(size_t bytes, size_t expected_top = 0);
  /// Reallocates to exactly `bytes` when that is smaller than the capacity.
  Status shrink_to(size_t bytes);

  std::byte* data() const { return data_.get(); }
  size_t capacity() const { return capacity_; }
  size_t peak_capacity() const { return peak_capacity_; }
  /// Changes on every reallocation: a specialization bound to an older generation re-binds.
  uint64_t generation() const { return generation_; }
  int64_t allocations() const { return allocations_; }
  int64_t growth_events() const { return growth_events_; }
  int64_t trims() const { return trims_; }

 private:
  Status reallocate(size_t bytes);

  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], FreeDeleter> data_;
  size_t capacity_ = 0;
  size_t peak_capacity_ = 0;
  uint64_t generation_ = 0;
  int64_t allocations_ = 0;
  int64_t growth_events_ = 0;
  int64_t trims_ = 0;
};

}  // namespace onepool
