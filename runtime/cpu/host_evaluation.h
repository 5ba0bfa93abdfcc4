// Running one node on the host with the CPU kernels, outside any Session: import's constant
// folding (its NodeEvaluator, planner/core/node_evaluator.h) and the runtime's weight folding
// (weight_folding.h) both compute constants this way, so an operator's semantics live only in its
// kernel. Allocates freely (outputs and workspace on the heap): it runs at load, never in run().
#pragma once

#include <vector>

#include "onepool/status.h"
#include "planner/core/graph.h"
#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {

/// Computes `node` of `graph`, whose present inputs are all weights, with `registry`'s kernel on
/// `threads`. One tensor per output (an empty one for an omitted output). kUnsupported when no
/// kernel runs the node on the CPU, or when its result would not be the same on every run (a
/// random op) or its output shapes are only known when it runs; the kernel's own error when
/// the constants are invalid for it (naming the node).
Expected<std::vector<HostTensor>> evaluate_node_on_host(const Graph& graph, const Node& node,
                                                        const KernelRegistry& registry,
                                                        ThreadPool& threads);

/// The NodeEvaluator import's constant folding runs: `graph`'s only node, with every CPU kernel,
/// on the calling thread.
Expected<std::vector<HostTensor>> evaluate_single_node_graph(const Graph& graph);

}  // namespace onepool::cpu
