// External graph inputs and outputs (PlanOptions::external_inputs, external_outputs,
// external_tensors): the values that live in caller buffers instead of the pool.
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/plan.h"
#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool {

/// One flag per value of `graph` (empty when the options name none): set for every graph input
/// (external_inputs), every graph output that a node computes or the caller feeds
/// (external_outputs; a constant output stays with the weights), and each value named in
/// external_tensors. kInvalidArgument for a name that is not a graph input or output (the
/// message lists them) or that names a constant output.
Expected<std::vector<uint8_t>> find_external_values(const Graph& graph, const PlanOptions& options);

/// "none", or the names of the flagged values in value order joined by commas ("x,y"): the
/// plan provenance's "external" field.
std::string describe_external_values(const Graph& graph, const std::vector<uint8_t>& external);

}  // namespace onepool
