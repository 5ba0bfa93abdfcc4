// Scan-8 (opset 8: every input and output has a batch axis 0 and the scan axis 1) as one Scan-9
// per batch row. Internal to import (planner/import/import_runtime_scan.cc).
//
// The node [sequence_lens, states..., scan inputs...] -> [states..., scan outputs...] becomes,
// for each batch row b: row b of every input (Slice + Squeeze: the batch axis removed), a pending
// Scan over those rows (ai.onepool.ScanBatchRow: Scan-9 semantics with the body and num_scan_inputs
// kept and `directions` renamed scan_input_directions; extracted like any Scan once its inputs are
// typed), and an Unsqueeze of each of its outputs; then one Concat per output along axis 0 gives
// the node's outputs back their names. B rows give B Scans sharing one body (each planned on its
// own). A Scan-8 with sequence_lens (rows of different lengths) is refused: kUnsupported.
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"

namespace onepool {

/// The op type of the pending per-row Scans, in the ai.onepool domain.
inline constexpr const char* kScanBatchRowOp = "ScanBatchRow";

/// Rewrites the Scan-8 node at `node_index` of `model`'s main graph as above. Returns false (the
/// model unchanged) while its inputs' types are not known yet. Errors name the node.
Expected<bool> split_scan8_by_batch(onnx::ModelProto* model, int node_index);

}  // namespace onepool
