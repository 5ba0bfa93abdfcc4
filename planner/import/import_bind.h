// Binding the user's --shapes and --dim values to the symbolic dims of graph inputs, on the
// ModelProto before shape inference. Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onepool/status.h"
#include "planner/import/import_options.h"

namespace onepool {

/// The graph inputs that are not initializers, in model order.
std::vector<const onnx::ValueInfoProto*> caller_inputs(const onnx::GraphProto& graph);
/// An input's dims as declared: "1", "batch", or "?" for an unnamed unknown dim.
std::vector<std::string> declared_dims(const onnx::ValueInfoProto& input);
/// A --shapes value for `inputs` and where it came from, as `inspect` suggests it (static dims,
/// else a guess that says so: batch 1, image sides 224, other dims 1).
std::string suggested_shapes_line(const std::vector<const onnx::ValueInfoProto*>& inputs);

/// Removes initializer-backed entries from graph.input (they are weights), checks every caller
/// input's dtype, and writes a static shape into each caller input from options.input_shapes and
/// options.dims. Errors: a name that is not a graph input (lists the real ones), a rank or fixed
/// dim that differs (names input, axis, expected vs given), a dim <= 0, two values for one dim
/// name, unbound dims (lists every one and a ready --shapes line), an unsupported dtype
/// (kUnsupported), and a byte size that overflows (kOutOfRange).
Status bind_input_shapes(onnx::GraphProto* graph, const ImportOptions& options);

}  // namespace onepool
