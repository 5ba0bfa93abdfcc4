// The attributes import gives the control-flow nodes it extracts (`ai.onepool.Loop`,
// `ai.onepool.Scan`), which the CPU kernels read back. No ONNX or protobuf header: the runtime
// includes this, never the import headers that write them (planner/import/import_runtime_loop.h,
// planner/import/import_runtime_scan.h).
#pragma once

namespace onepool {

/// The int attribute an extracted Loop carries: how many of its inputs after M and cond are
/// loop-carried (the rest are captured values).
inline constexpr const char* kLoopCarriedAttribute = "onepool_carried";
/// The int attribute of an extracted Loop whose scan outputs are planned at a --bound: the rows
/// they have room for (absent: exactly M rows).
inline constexpr const char* kLoopScanBoundAttribute = "onepool_scan_bound";
/// The int attribute an extracted Scan carries: how many of its inputs are states.
inline constexpr const char* kScanStatesAttribute = "onepool_states";

}  // namespace onepool
