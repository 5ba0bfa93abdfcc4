// SharedPool: one aligned host allocation, reallocated only to grow (geometrically) or trim.
#include "runtime/dynamic_session_pool.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "runtime/huge_pages.h"

namespace onepool {

namespace {
constexpr size_t kPoolAlignment = 256;
}  // namespace

void SharedPool::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

Status SharedPool::reallocate(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - kPoolAlignment) {
    return make_status(StatusCode::kOutOfRange, "pool of ", bytes, " bytes overflows");
  }
  const size_t allocation =
      std::max(kPoolAlignment, (bytes + kPoolAlignment - 1) / kPoolAlignment * kPoolAlignment);
  data_.reset();  // free first: the old contents are dead and the peak stays one pool
  capacity_ = 0;
  ++generation_;
  data_.reset(static_cast<std::byte*>(std::aligned_alloc(kPoolAlignment, allocation)));
  if (!data_) {
    return make_status(StatusCode::kResourceExhausted, "cannot allocate a pool of ", allocation,
                       " bytes");
  }
  advise_huge_pages(data_.get(), allocation);
  capacity_ = allocation;
  peak_capacity_ = std::max(peak_capacity_, capacity_);
  ++allocations_;
  return Status::ok();
}

Status SharedPool::reserve(size_t bytes, size_t expected_top) {
  if (bytes <= capacity_ && data_) return Status::ok();
  const bool is_growth = allocations_ > 0;
  size_t target = bytes;
  if (is_growth) {
    const size_t doubled =
        capacity_ <= std::numeric_limits<size_t>::max() / 2 ? 2 * capacity_ : bytes;
    target = std::max(bytes, bytes <= expected_top ? std::min(doubled, expected_top) : doubled);
  }
  ONEPOOL_RETURN_IF_ERROR(reallocate(target));
  if (is_growth) ++growth_events_;
  return Status::ok();
}

Status SharedPool::shrink_to(size_t bytes) {
  if (bytes >= capacity_) return Status::ok();
  ONEPOOL_RETURN_IF_ERROR(reallocate(bytes));
  ++trims_;
  return Status::ok();
}

}  // namespace onepool
