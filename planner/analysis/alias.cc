// Storage aliasing: groups of values that share one buffer (see alias.h for the rules).
#include "planner/analysis/alias.h"

#include <algorithm>
#include <span>

namespace onepool {
namespace {

struct Group {
  std::vector<ValueId> members;  // members[0] is the root, at offset 0; empty once merged away
  int64_t first = 0;
  int64_t last = 0;
  size_t extent = 0;    // furthest member end (offset + unaligned bytes)
  bool pinned = false;  // holds a graph input or a graph output: never overwritten or moved
};

class GroupBuilder {
 public:
  GroupBuilder(const Graph& graph, const Liveness& plain) : graph_(graph) {
    group_of_.assign(graph.values.size(), -1);
    offset_.assign(graph.values.size(), 0);
    for (size_t i = 0; i < plain.records.size(); ++i) {
      const ValueId id = plain.sources[i].value;
      if (id == kNoValue) continue;
      const Value& value = graph.values[static_cast<size_t>(id)];
      Group group;
      group.members.push_back(id);
      group.first = plain.records[i].first;
      group.last = plain.records[i].last;
      group.extent = value.bytes();
      group.pinned = value.kind == ValueKind::kGraphInput || value.is_graph_output;
      group_of_[static_cast<size_t>(id)] = static_cast<int32_t>(groups_.size());
      groups_.push_back(std::move(group));
    }
  }

  // Output 0 shares input 0's bytes.
  void apply_view(const Node& node) {
    const ValueId in = node.input(0);
    const ValueId out = output0(node);
    if (!planned(in) || !planned(out) || bytes(in) != bytes(out)) return;
    move_group(group(out), group(in), offset(in));
  }

  // Output 0 overwrites the first input k of `inputs` (bit k: input k) that dies at this step.
  void apply_in_place(const Node& node, NodeId step, uint32_t inputs) {
    for (size_t k = 0; k < node.inputs.size() && k < 32; ++k) {
      if ((inputs >> k & 1u) != 0 && can_overwrite(node, step, k)) {
        move_group(group(output0(node)), group(node.inputs[k]), offset(node.inputs[k]));
        return;
      }
    }
  }

  // Output 0 takes over input 0's bytes and extends past them: input 0's group dies at this
  // step, is pinned to nothing, holds nothing beyond input 0's bytes (which start it), and no
  // other input of the node reads from it.
  void apply_growing_in_place(const Node& node, NodeId step) {
    if (node.inputs.empty()) return;
    const ValueId in = node.inputs[0];
    const ValueId out = output0(node);
    if (!planned(in) || !planned(out) || bytes(out) < bytes(in) || offset(in) != 0) return;
    const Group& target = groups_[static_cast<size_t>(group(in))];
    if (target.extent > bytes(in) || !can_overwrite_group(node, step, 0)) return;
    move_group(group(out), group(in), 0);
  }

  // Each eligible input's group moves to its slice of the output.
  void apply_concat(const Node& node, size_t alignment, std::span<const uint8_t> kept_out) {
    const ValueId out = output0(node);
    if (!planned(out) || offset(out) != 0) return;
    const Shape& shape = graph_.values[static_cast<size_t>(out)].shape;
    int64_t axis = node.attributes.get_int("axis", 0);
    if (axis < 0) axis += shape.rank();
    if (axis < 0 || axis >= shape.rank()) return;
    for (int d = 0; d < axis; ++d) {
      if (shape[d] != 1) return;  // each input is strided inside the output: no slice
    }
    size_t slice = 0;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) return;
      const bool left_out = !kept_out.empty() && kept_out[static_cast<size_t>(in)] != 0;
      if (!left_out && concat_input_fits(in, out, slice, alignment)) {
        move_group(group(in), group(out), slice);
      }
      slice += bytes(in);
    }
  }

  Expected<AliasedLiveness> finish(const Liveness& plain, size_t alignment) const {
    AliasedLiveness result;
    result.storage.assign(graph_.values.size(), ValueStorage{});
    for (size_t i = 0; i < plain.records.size(); ++i) {
      const ValueId id = plain.sources[i].value;
      if (id == kNoValue) {
        result.liveness.records.push_back(plain.records[i]);
        result.liveness.sources.push_back(plain.sources[i]);
        continue;
      }
      const Group& owner = groups_[static_cast<size_t>(group(id))];
      result.storage[static_cast<size_t>(id)] = {owner.members.front(), offset(id)};
      if (owner.members.front() != id) {
        ++result.alias_count;
        continue;
      }
      auto aligned = align_up(owner.extent, alignment);
      if (!aligned) {
        return aligned.status().with_context(
            str_cat("tensor '", graph_.values[static_cast<size_t>(id)].name, "'"));
      }
      result.liveness.records.push_back({owner.first, owner.last, *aligned});
      result.liveness.sources.push_back(plain.sources[i]);
    }
    return result;
  }

 private:
  static ValueId output0(const Node& node) {
    return node.outputs.empty() ? kNoValue : node.outputs[0];
  }
  bool planned(ValueId id) const {
    return id != kNoValue && group_of_[static_cast<size_t>(id)] >= 0;
  }
  int32_t group(ValueId id) const { return group_of_[static_cast<size_t>(id)]; }
  size_t offset(ValueId id) const { return offset_[static_cast<size_t>(id)]; }
  size_t bytes(ValueId id) const { return graph_.values[static_cast<size_t>(id)].bytes(); }

  // Output 0 may take input k's bytes: same byte count, input k's group ends at this step, holds
  // no graph input or output, and no other input of the node reads from it.
  bool can_overwrite(const Node& node, NodeId step, size_t k) const {
    const ValueId in = node.inputs[k];
    const ValueId out = output0(node);
    if (!planned(in) || !planned(out) || bytes(in) != bytes(out)) return false;
    return can_overwrite_group(node, step, k);
  }

  // Input k's group ends at this step, holds no graph input or output, and no other input of
  // the node reads from it.
  bool can_overwrite_group(const Node& node, NodeId step, size_t k) const {
    const ValueId in = node.inputs[k];
    const Group& target = groups_[static_cast<size_t>(group(in))];
    if (target.pinned || target.last != step) return false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (i != k && planned(node.inputs[i]) && group(node.inputs[i]) == group(in)) return false;
    }
    return true;
  }

  bool concat_input_fits(ValueId in, ValueId out, size_t slice, size_t alignment) const {
    if (!planned(in) || group(in) == group(out) || offset(in) != 0) return false;
    if (bytes(in) == 0 || slice % alignment != 0) return false;
    const Group& source = groups_[static_cast<size_t>(group(in))];
    return !source.pinned && source.extent <= bytes(in);
  }

  // Every member of group `from` moves into `into`, shifted by `offset`.
  void move_group(int32_t from, int32_t into, size_t offset) {
    if (from == into) return;
    Group& source = groups_[static_cast<size_t>(from)];
    Group& target = groups_[static_cast<size_t>(into)];
    for (ValueId member : source.members) {
      group_of_[static_cast<size_t>(member)] = into;
      offset_[static_cast<size_t>(member)] += offset;
      target.members.push_back(member);
    }
    target.first = std::min(target.first, source.first);
    target.last = std::max(target.last, source.last);
    target.extent = std::max(target.extent, offset + source.extent);
    target.pinned = target.pinned || source.pinned;
    source.members.clear();
  }

  const Graph& graph_;
  std::vector<int32_t> group_of_;  // per value; -1 when not planned
  std::vector<size_t> offset_;     // per value, bytes from its group's root
  std::vector<Group> groups_;
};

}  // namespace

namespace {

Status check_exclusions(const Graph& graph, const NodeMemoryNeeds& needs,
                        const SharingExclusions& excluded) {
  if (!needs.aliasing.empty() && needs.aliasing.size() != graph.nodes.size()) {
    return make_status(StatusCode::kInvalidArgument, "aliasing: expected one entry per node (",
                       graph.nodes.size(), "), got ", needs.aliasing.size());
  }
  if (!excluded.nodes.empty() && excluded.nodes.size() != graph.nodes.size()) {
    return make_status(StatusCode::kInvalidArgument, "aliasing: expected one flag per node (",
                       graph.nodes.size(), "), got ", excluded.nodes.size());
  }
  if (!excluded.concat_inputs.empty() && excluded.concat_inputs.size() != graph.values.size()) {
    return make_status(StatusCode::kInvalidArgument, "aliasing: expected one flag per value (",
                       graph.values.size(), "), got ", excluded.concat_inputs.size());
  }
  return Status::ok();
}

}  // namespace

Expected<AliasedLiveness> find_aliases(const Graph& graph, const Liveness& plain,
                                       const NodeMemoryNeeds& needs, const AliasKinds& kinds,
                                       size_t alignment, const SharingExclusions& excluded) {
  ONEPOOL_RETURN_IF_ERROR(check_exclusions(graph, needs, excluded));
  GroupBuilder builder(graph, plain);
  for (size_t n = 0; n < needs.aliasing.size(); ++n) {
    if (!excluded.nodes.empty() && excluded.nodes[n] != 0) continue;
    const NodeAliasing& can = needs.aliasing[n];
    const Node& node = graph.nodes[n];
    if (kinds.views && can.output_is_view) builder.apply_view(node);
    if (kinds.in_place && !can.output_is_view && can.in_place_inputs != 0) {
      builder.apply_in_place(node, static_cast<NodeId>(n), can.in_place_inputs);
    }
    if (kinds.growing && can.in_place_grows) {
      builder.apply_growing_in_place(node, static_cast<NodeId>(n));
    }
    if (kinds.concat && can.concat_in_place) {
      builder.apply_concat(node, alignment, excluded.concat_inputs);
    }
  }
  return builder.finish(plain, alignment);
}

Expected<SharingExclusions> exclude_costly_concat_inputs(const Graph& graph, const Liveness& plain,
                                                         const NodeMemoryNeeds& needs,
                                                         const AliasKinds& kinds,
                                                         size_t alignment) {
  AliasKinds with_concat = kinds;
  with_concat.concat = true;
  SharingExclusions excluded;
  excluded.nodes.assign(graph.nodes.size(), 0);
  excluded.concat_inputs.assign(graph.values.size(), 0);
  std::vector<size_t> concats;
  for (size_t n = 0; n < needs.aliasing.size(); ++n) {
    if (!needs.aliasing[n].concat_in_place) continue;
    excluded.nodes[n] = 1;
    concats.push_back(n);
  }
  ONEPOOL_ASSIGN_OR_RETURN(AliasedLiveness start,
                           find_aliases(graph, plain, needs, with_concat, alignment, excluded));
  size_t bound = lower_bound_bytes(start.liveness.records);
  for (size_t n : concats) {
    // The node's inputs all start out, then come in one by one, latest first.
    excluded.nodes[n] = 0;
    const std::vector<ValueId>& inputs = graph.nodes[n].inputs;
    for (ValueId in : inputs) {
      if (in != kNoValue) excluded.concat_inputs[static_cast<size_t>(in)] = 1;
    }
    for (auto it = inputs.rbegin(); it != inputs.rend(); ++it) {
      if (*it == kNoValue) continue;
      excluded.concat_inputs[static_cast<size_t>(*it)] = 0;
      ONEPOOL_ASSIGN_OR_RETURN(AliasedLiveness trial,
                               find_aliases(graph, plain, needs, with_concat, alignment, excluded));
      const size_t trial_bound = lower_bound_bytes(trial.liveness.records);
      if (trial_bound <= bound) {
        bound = trial_bound;
      } else {
        excluded.concat_inputs[static_cast<size_t>(*it)] = 1;
      }
    }
  }
  return excluded;
}

}  // namespace onepool
