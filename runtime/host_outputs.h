// Host copies of a Session's outputs, for the tools (CLI, server): internal.
#pragma once

#include <vector>

#include "onepool/session.h"
#include "planner/core/graph.h"

namespace onepool {

/// After a run into `outputs` (one host tensor per model output, each of its static shape):
/// each output of data-dependent size (TensorInfo::bound) takes the actual shape the run
/// produced and drops the bytes past it.
void keep_actual_shapes(const Session& session, std::vector<HostTensor>& outputs);

}  // namespace onepool
