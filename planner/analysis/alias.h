// Storage aliasing: values that live inside another value's bytes instead of owning their own.
//
// Values are gathered into groups, each stored as one buffer owned by its root value (offset 0);
// every other member lives at a fixed byte offset inside it. Walking the nodes in execution
// order, where `NodeAliasing` allows it and `AliasKinds` asks for it:
// - view: output 0 of a view node (Reshape, Flatten, Squeeze, Unsqueeze, Identity) joins input
//   0's group at input 0's offset (same byte count);
// - in place: output 0 joins the group of the first input k the kernel may overwrite at k's offset
//   when the group's last use is this step, no member is a graph input or graph output, no other
//   input of the node is in the group, and the byte counts match;
// - growing in place: output 0, larger than input 0, joins input 0's group at offset 0 when
//   input 0 starts its group and nothing in it extends past input 0's bytes, under the same
//   conditions as in place; the group (input 0's whole lifetime) then takes the larger size;
// - Concat in place: when the output is contiguous per input (the dims before the axis multiply
//   to 1), each input whose whole group sits inside it (offset 0), holds no graph input or graph
//   output, and whose slice offset is a multiple of the alignment moves, group and all, into the
//   output's group at that slice: its producer writes straight into the Concat output.
// A group then plans as one usage record: from its members' first step to their last, sized by
// the furthest member end. Views and in-place sharing never raise the lower bound (the merged
// lifetimes meet at the node's step); growing in place (the input lives its whole life at the
// output's size) and Concat in place may, which is why build_plan places several selections and
// keeps the smallest pool. O(values + nodes + moved members).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "onepool/status.h"
#include "planner/analysis/liveness.h"
#include "planner/analysis/node_memory_needs.h"
#include "planner/core/graph.h"

namespace onepool {

/// Which kinds of sharing to apply.
struct AliasKinds {
  bool views = false;
  bool in_place = false;
  bool concat = false;
  bool growing = false;  // in place with a larger output (constant Pad)
};

/// Where a planned value's bytes live: inside `root`'s storage at byte `offset`.
/// root == the value itself (offset 0) for an owner; kNoValue for a value that is not planned.
struct ValueStorage {
  ValueId root = kNoValue;
  size_t offset = 0;

  bool operator==(const ValueStorage&) const = default;
};

/// What find_aliases leaves unshared. Each vector is empty (nothing left out) or holds one flag
/// per node (`nodes`: the node shares nothing) or per graph value (`concat_inputs`: the value is
/// never moved into a Concat output, so that Concat copies it).
struct SharingExclusions {
  std::vector<uint8_t> nodes;
  std::vector<uint8_t> concat_inputs;
};

/// The outcome of find_aliases: per value storage and the records to place.
struct AliasedLiveness {
  std::vector<ValueStorage> storage;  // per graph value
  /// One record per group root and per workspace; a root's record spans its whole group.
  Liveness liveness;
  size_t alias_count = 0;  // values that live inside another's storage
};

/// Groups the values of `plain` (compute_liveness's output for `graph`) as described above.
/// `needs.aliasing` is empty (nothing shared) or holds one entry per node; `excluded` says what
/// stays unshared.
Expected<AliasedLiveness> find_aliases(const Graph& graph, const Liveness& plain,
                                       const NodeMemoryNeeds& needs, const AliasKinds& kinds,
                                       size_t alignment, const SharingExclusions& excluded = {});

/// The Concat inputs to leave out so that Concat in place lowers the bound instead of raising
/// it: an input moved into the Concat output makes that output live from the input's first step,
/// so an early producer (a U-Net skip connection) can cost more than its copy saves. Greedy, in
/// execution order: starting with every Concat left out (and `kinds` otherwise applied), each
/// Concat's inputs are let in one at a time, the latest input first, when the lower bound does
/// not rise. Returns the exclusions for find_aliases.
/// O(Concat inputs x (values + records log records)).
Expected<SharingExclusions> exclude_costly_concat_inputs(const Graph& graph, const Liveness& plain,
                                                         const NodeMemoryNeeds& needs,
                                                         const AliasKinds& kinds, size_t alignment);

}  // namespace onepool
