// What a backend's kernels tell the planner about each node: workspaces and the storage sharing
// they honour. Read by liveness, aliasing and build_plan; its own header so those do not include
// each other for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "onepool/plan.h"

namespace onepool {

/// Which storage sharing a node's kernel honours (see planner/analysis/alias.h for when the planner
/// uses it).
struct NodeAliasing {
  /// The inputs whose bytes the kernel may overwrite with output 0 (same byte count): bit k for
  /// input k.
  uint32_t in_place_inputs = 0;
  /// Output 0, larger than input 0, may take over input 0's bytes from their start and extend
  /// past them (constant Pad written in place).
  bool in_place_grows = false;
  /// Output 0 may share input 0's bytes: the kernel skips its copy when the addresses match.
  bool output_is_view = false;
  /// Concat: the kernel skips every input whose data already sits at its slice of the output.
  bool concat_in_place = false;
};

/// Per-node facts that come from the backend's kernels.
struct NodeMemoryNeeds {
  std::vector<size_t> workspace_bytes;  // per node (empty: no workspaces)
  /// Per node (empty: none): the scratch a kernel runs faster with. The pool is planned with
  /// workspace_bytes; each workspace then grows towards this size into the free bytes of its
  /// step (planner/analysis/workspace_growth.h).
  std::vector<size_t> workspace_preferred_bytes;
  std::vector<NodeAliasing> aliasing;  // per node (empty: no sharing, the plan stays plain)
  /// The plans of graphs nested in nodes (If branches, Loop and Scan bodies), copied into the
  /// Plan: each lies in its node's workspace.
  std::vector<NestedPlan> nested;
};

}  // namespace onepool
