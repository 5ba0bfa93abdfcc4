// ONNX-style feeds: every graph input of the model file in its order, shape inputs included
// (Session::run). The shape inputs were bound at load: each fed one must equal its bound values
// and is then dropped; the rest are the Session's inputs.
#pragma once

#include <span>

#include "onepool/model.h"
#include "onepool/status.h"
#include "onepool/tensor.h"
#include "planner/core/graph.h"

namespace onepool {

/// Checks a fed shape input against its bound values (dtype, shape, then every value). Error:
/// "input 'axes': bound to [1] at load, got [0]". Reads `view` on the host (a device view is an
/// error). No allocation unless it fails.
Status check_shape_input_feed(const BoundShapeInput& binding, const TensorView& view);

/// Splits `all` (model.inputs().size() + model.shape_inputs().size() views, model file order)
/// into `feeds` (model.inputs().size() views, Model::inputs() order), checking each shape input.
/// No allocation unless it fails.
Status split_full_feed(const Model& model, std::span<const TensorView> all,
                       std::span<TensorView> feeds);

}  // namespace onepool
