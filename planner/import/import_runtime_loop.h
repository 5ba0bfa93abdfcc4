// Loop: its body becomes a Graph of its own, run as a nested plan (runtime/cpu/kernels/
// control_loop.cc). Internal to import.
//
// Step 1. The Loop's M (trip count) and cond may be absent, constants or runtime values; its
//   loop-carried initial values, and every value the body reads from outside, must have known
//   static types, else the Loop waits for the next round (an earlier runtime node feeds it).
// Step 2. The body becomes a model (import_subgraph.h) whose inputs are the iteration number
//   (int64 []), the condition (bool []), the carried values typed as the Loop's inputs, then the
//   captured runtime values; it is imported by the whole import pipeline.
// Step 3. Checks: the body yields a one-element bool condition, then each carried value with the
//   dtype and shape it came in with (a carried value that changes shape is not supported), then
//   the scan outputs. Scan outputs are typed [M, ...] when M is known at load (a constant after
//   folding, or a graph input bound with --values: Loop's M is then a shape input); a run that
//   stops early has fewer rows than planned and fails, saying so. With a --bound on a scan output
//   (LoadOptions::bounds) they are typed [B, ...] instead (B the smallest bound given for one of
//   them, at most M), marked bounded (Value::bound), and the node gets the attribute
//   kLoopScanBoundAttribute = B: M may then be a runtime input or absent and the loop may stop
//   early; the run reports the rows it produced and fails if it needs more than B. The Loop's
//   outputs get their types as value_info, and the node becomes `ai.onepool.Loop` with the captured
//   runtime values appended to its inputs (make_runtime_node) and its carried count as an
//   attribute.
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"
#include "planner/core/control_flow_attributes.h"
#include "planner/import/import_shape_inputs.h"
#include "planner/import/import_subgraph.h"

namespace onepool {

/// Extracts the first Loop of `model`'s main graph whose inputs and captured values have known
/// types, as above; returns 1, or 0 when there is none. Errors name the node: a missing body,
/// input or output counts that do not fit the body, a condition that is not one bool, a carried
/// value that changes dtype or shape, scan outputs with neither a trip count known at load nor a
/// bound in `bounds`, and any error importing the body.
Expected<int> extract_runtime_loops(onnx::ModelProto* model, const BranchImporter& import_body,
                                    const LengthBounds& bounds, RuntimeIfBranches* bodies);

}  // namespace onepool
