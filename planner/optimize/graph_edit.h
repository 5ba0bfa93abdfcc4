// Small graph-editing helpers shared by the optimizer passes (planner/optimize/*.cc).
//
// A pass edits a Graph whose edges are current (rebuild_edges). Removing a node leaves a tombstone
// in its slot so NodeIds stay valid for the rest of the pass; erase_removed_nodes() drops the
// tombstones at the end, keeping the order of the others. After every rewrite a pass calls
// graph.rebuild_edges() (O(nodes + values)), which keeps the code obvious at a cost that stays
// small next to import.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/status.h"
#include "planner/core/graph.h"

namespace onepool::graph_opt {

/// op_type of a removed node's tombstone; no ONNX op type contains a dot.
inline constexpr const char* kRemovedOp = "onepool.removed";

/// True for a node of the default ONNX domain with op type `op_type`.
bool is_op(const Node& node, const char* op_type);
const Value& value_at(const Graph& graph, ValueId id);
/// The weight behind `id` when `id` is a weight, else nullptr (also for kNoValue).
const HostTensor* weight_of(const Graph& graph, ValueId id);
/// The node producing `id`, or nullptr (graph inputs, weights, kNoValue).
Node* producer_of(Graph& graph, ValueId id);
/// True when `id` is an activation read by exactly one node (`consumer`) and not a graph output:
/// the only case where a pass may fold the node producing it into its consumer.
bool only_feeds(const Graph& graph, ValueId id, NodeId consumer);
/// True when the node already carries a fused activation (onepool_activation).
bool has_fused_activation(const Node& node);

/// A float32 weight holding `values` (rounded from double) with `shape`.
HostTensor make_float_weight(const Shape& shape, const std::vector<double>& values);
/// Adds `tensor` as a new weight value named after `base_name` (made unique) and returns its id.
ValueId add_weight(Graph& graph, const std::string& base_name, HostTensor tensor);

/// Makes every node input reading `from` read `to` instead.
void replace_uses(Graph& graph, ValueId from, ValueId to);
/// Turns node `id` into a tombstone: it reads and writes nothing until erase_removed_nodes().
void remove_node(Graph& graph, NodeId id);
/// Drops the tombstones (keeping the order of the other nodes) and rebuilds the edges.
void erase_removed_nodes(Graph& graph);

/// Checks that every id and weight index in `graph` is in range; kInternal names the first
/// offender. The passes and compact_graph() rely on it.
Status check_graph_ids(const Graph& graph);

Attribute float_attribute(float value);
Attribute int_attribute(int64_t value);
Attribute string_attribute(std::string value);

}  // namespace onepool::graph_opt
