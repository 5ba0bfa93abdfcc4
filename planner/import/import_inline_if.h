// If with a condition known at load: the chosen branch replaces the node. Internal to import.
//
// Constant folding often turns an If's condition into a constant (a Shape of a static input
// compared with a number). Such an If is not control flow at all: its chosen branch's nodes take
// its place in the main graph, so planning and running never see an If.
//
// Step 1. Find each If of the main graph whose condition is an initializer (not also a graph
//   input, which a caller could override) and read it: a bool tensor of one element, else
//   kInvalidModel naming the node.
// Step 2. Copy the chosen branch into the main graph: every name the branch defines (node
//   outputs, initializers) becomes "<if node>/<name>" (made unique against every name in the
//   model, nested bodies included); names the branch reads from outer scopes keep their names.
//   A branch output produced by a branch node takes the If output's name directly; one that is an
//   outer-scope value or a branch initializer reaches the If output through an Identity.
//   Bodies nested in the branch (an inner If) get the same renaming and are inlined by a later
//   call once they sit in the main graph.
// Step 3. Re-sort the nodes (a branch need not list its nodes in order).
// Constant nodes copied from a branch stay nodes here; the caller turns them into initializers.
// Cost: O(names in the model) per call, plus the sort.
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"

namespace onepool {

/// Inlines every If of `graph` (the main graph) whose condition is constant, as above. Returns how
/// many were inlined. Errors (kInvalidModel, naming the node): a condition that is not a bool
/// one-element tensor, a missing branch, a branch with inputs, or one whose output count differs
/// from the node's; kUnsupported for a branch with sparse initializers.
Expected<int> inline_constant_ifs(onnx::GraphProto* graph);

/// kUnsupported naming the first If left in `graph` after runtime Ifs were extracted
/// (planner/import/import_runtime_if.h): its condition or a value its branches read has no static
/// shape. Ok when none is left.
Status check_no_runtime_if(const onnx::GraphProto& graph);

}  // namespace onepool
