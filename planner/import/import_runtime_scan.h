// Scan (opset 9 and later): its body becomes a Graph of its own, run as a nested plan once per
// step of the scanned axis (runtime/cpu/kernels/control_scan.cc). Internal to import.
//
// Step 1. The Scan's N state inputs and M scan inputs (num_scan_inputs), and every value the
//   body reads from outside, must have known static types, else it waits for the next round.
//   Every scan input has the same length along its scan axis (scan_input_axes, default 0).
// Step 2. The body becomes a model (import_subgraph.h) whose inputs are the states typed as the
//   Scan's, then one slice of each scan input (its scan axis removed), then the captured runtime
//   values.
// Step 3. Checks: each state output keeps its input's dtype and shape; each scan output's slice
//   gets the sequence length inserted at its axis (scan_output_axes, default 0). The Scan's
//   outputs get these types, and the node becomes `ai.onepool.Scan` with the captured runtime
//   values appended to its inputs (its int attributes stay).
// Scan-8 (a batch axis 0, the scan axis 1) is first split into one Scan-9 per batch row
// (planner/import/import_scan_batch.h); with sequence_lens it is a clear kUnsupported.
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"
#include "planner/core/control_flow_attributes.h"
#include "planner/import/import_subgraph.h"

namespace onepool {

/// Extracts the first Scan of `model`'s main graph whose inputs and captured values have known
/// types, as above; returns 1, or 0 when there is none. Errors name the node.
Expected<int> extract_runtime_scans(onnx::ModelProto* model, const BranchImporter& import_body,
                                    RuntimeIfBranches* bodies);

}  // namespace onepool
