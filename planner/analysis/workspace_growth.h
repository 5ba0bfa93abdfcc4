// Workspace growth: a kernel runs faster with more scratch (wider im2col tiles), but the pool is
// sized by the least it can work with. After placement, each workspace grows into the free bytes
// of its step, up to what its kernel prefers, without moving any other tensor or raising the
// pool. So the peak steps get the minimum and every other step gets more, for free.
#pragma once

#include <cstddef>
#include <span>

#include "onepool/plan.h"

namespace onepool {

/// Grows every workspace tensor of `plan` (workspace_node >= 0) towards
/// `preferred_bytes[workspace_node]` (empty: nothing grows): it moves to the largest free gap
/// of its step inside [0, pool_bytes) among the owning tensors live at that step, when that gap
/// beats its current size, and takes min(gap, preferred) bytes rounded down to the alignment.
/// A workspace never shrinks, the pool never changes, and the plan still verifies.
/// O(workspaces x tensors log tensors).
void grow_workspaces(Plan& plan, std::span<const size_t> preferred_bytes);

}  // namespace onepool
