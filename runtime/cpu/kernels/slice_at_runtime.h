// Slice with starts or ends computed at run time (a Loop body's iteration number, a graph input):
// import planned the output at the length ends - starts it proved (planner/import/
// import_slice_lengths.h). Axes and steps are constants. Each run reads the positions, clamps
// them per the ONNX spec and checks that every sliced axis gives the planned length: a position
// near an end of the axis that clamps the slice shorter fails the run, naming the node, the axis,
// the positions and both lengths; nothing is written outside the output.
#pragma once

#include "runtime/cpu/kernel.h"

namespace onepool::cpu::data {

/// True for a Slice with starts/ends inputs where one of them is not a constant.
bool slices_at_runtime(const NodeContext& node);

/// The kernel for such a Slice; `element_size` of data's dtype. Errors (naming the node): starts
/// or ends not int32/int64 vectors of one length, axes or steps not constant, an axis out of range
/// or repeated, a zero step, an output whose unsliced dims differ from data's.
Expected<PreparedKernel> make_runtime_slice_kernel(const NodeContext& node, size_t element_size);

}  // namespace onepool::cpu::data
