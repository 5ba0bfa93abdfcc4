// If with a condition only known at run time: each branch becomes a Graph of its own. Internal
// to import.
//
// An If whose condition stays a runtime value after constant folding (a voice-activity model
// choosing its 8 kHz or 16 kHz branch from a graph input) is kept as a node, and each branch is
// imported as a model of its own, so the runtime can plan it as a nested plan inside one region of
// the parent pool (runtime/cpu/kernels/control_if.h).
//
// Step 1. For each If of the main graph, the names its branches read from outer scopes (at any
//   depth of nesting): the captured values. A captured initializer is copied into the branch (a
//   constant stays foldable there); every other captured value must have a known static type in
//   the main graph, else the If waits for the next round (an earlier runtime If feeds it).
// Step 2. Each branch becomes a ModelProto: every captured runtime value (read by either branch)
//   is its graph input, in one order for both, the branch's outputs its graph outputs, and it is
//   imported by `import_branch` (the whole import pipeline: folding, If inlining, nested runtime
//   Ifs).
// Step 3. The branches must agree: the same output count as the node, the same dtype and the same
//   static shape per output (different dtypes are an invalid model; different shapes are not
//   supported yet). A branch that fails to import while the other imports (the bound input
//   shapes make it invalid, as 512 samples do a silero VAD's 8 kHz branch: ONNX Runtime fails
//   to run it too) is kept as its error message, which a run that takes it returns, and
//   import warns about it. The If outputs get that type as value_info, so shape inference goes on
//   past the node.
// Step 4. The node becomes `ai.onepool.If` with inputs [condition, captured runtime values...] and
//   no graph attributes (make_runtime_node): liveness keeps every captured value alive until the
//   If runs, and ONNX's own inference leaves it alone. Its two Graphs wait in RuntimeIfBranches,
//   keyed by node name, for the converted node (attach_runtime_bodies).
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"
#include "planner/import/import_subgraph.h"

namespace onepool {

/// Extracts the first If of `model`'s main graph whose condition and captured values have known
/// types, as above; returns 1, or 0 when there is none. One per call: the caller folds again
/// in between, since the output shapes of one If can make a later If's condition a constant
/// (an exporter's "squeeze when the rank is 3" after a runtime If). Errors name the node: a branch
/// missing or with inputs, an output count or dtype that differs between the branches or from the
/// node, branch output shapes that differ, a condition that is not one bool, and any error
/// importing a branch.
Expected<int> extract_runtime_ifs(onnx::ModelProto* model, const BranchImporter& import_branch,
                                  RuntimeIfBranches* branches);

}  // namespace onepool
