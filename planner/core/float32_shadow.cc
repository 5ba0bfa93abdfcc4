#include "planner/core/float32_shadow.h"

#include <cstdint>

#include "planner/core/half_float.h"

namespace onepool {

bool is_half_dtype(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

bool node_touches_half_types(const Graph& graph, const Node& node) {
  for (const std::vector<ValueId>* ids : {&node.inputs, &node.outputs}) {
    for (ValueId id : *ids) {
      if (id != kNoValue && is_half_dtype(graph.values[static_cast<size_t>(id)].dtype)) return true;
    }
  }
  return false;
}

HostTensor widen_to_float32(const HostTensor& half) {
  HostTensor wide;
  wide.dtype = DType::kFloat32;
  wide.shape = half.shape;
  const auto count = static_cast<size_t>(half.element_count());
  wide.data.resize(count * sizeof(float));
  const auto* source = half.as<uint16_t>();
  auto* destination = wide.as_mutable<float>();
  for (size_t i = 0; i < count; ++i) {
    destination[i] = half.dtype == DType::kFloat16 ? half_bits_to_float(source[i])
                                                   : bfloat_bits_to_float(source[i]);
  }
  return wide;
}

Float32Shadow::Float32Shadow(const Graph& graph, const Node& node) {
  graph_.name = graph.name;
  graph_.opset = graph.opset;
  Node copy = node;
  for (ValueId& id : copy.inputs) id = retyped(graph, id);
  for (ValueId& id : copy.outputs) id = retyped(graph, id);
  graph_.nodes.push_back(std::move(copy));
  graph_.rebuild_edges();
}

ValueId Float32Shadow::retyped(const Graph& source, ValueId id) {
  if (id == kNoValue) return kNoValue;
  for (const auto& [original, copy] : mapped_) {
    if (original == id) return copy;
  }
  const Value& value = source.values[static_cast<size_t>(id)];
  Value copy;
  copy.name = value.name;
  copy.dtype = is_half_dtype(value.dtype) ? DType::kFloat32 : value.dtype;
  copy.shape = value.shape;
  copy.kind = value.kind;
  copy.is_graph_output = value.is_graph_output;
  if (value.kind == ValueKind::kWeight) {
    const HostTensor& weight = source.weight(id);
    copy.weight_index = static_cast<int32_t>(graph_.weights.size());
    graph_.weights.push_back(is_half_dtype(weight.dtype) ? widen_to_float32(weight) : weight);
  }
  const ValueId copy_id = graph_.add_value(std::move(copy));
  mapped_.emplace_back(id, copy_id);
  return copy_id;
}

std::vector<HalfConversion> plan_half_conversions(const Graph& graph,
                                                  const std::vector<ValueId>& ids,
                                                  bool weights_per_run, size_t alignment,
                                                  size_t& bytes) {
  std::vector<HalfConversion> conversions(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == kNoValue) continue;
    const Value& value = graph.values[static_cast<size_t>(ids[i])];
    if (!is_half_dtype(value.dtype)) continue;
    HalfConversion& conversion = conversions[i];
    conversion.half_dtype = value.dtype;
    conversion.count = value.shape.element_count();
    if (value.kind == ValueKind::kWeight && !weights_per_run) {
      conversion.kind = HalfConversion::Kind::kWeight;
      continue;
    }
    conversion.kind = HalfConversion::Kind::kConverted;
    conversion.offset = bytes;
    const size_t floats = static_cast<size_t>(conversion.count) * sizeof(float);
    bytes += (floats + alignment - 1) / alignment * alignment;
  }
  return conversions;
}

std::vector<TensorView> shadow_views(const Graph& shadow, const std::vector<ValueId>& ids,
                                     Device device, bool host_weights) {
  std::vector<TensorView> views(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == kNoValue) continue;
    const Value& value = shadow.values[static_cast<size_t>(ids[i])];
    views[i] = TensorView{nullptr, value.dtype, value.shape, device};
    if (host_weights && value.kind == ValueKind::kWeight) {
      views[i].data = const_cast<std::byte*>(shadow.weight(ids[i]).data.data());
    }
  }
  return views;
}

}  // namespace onepool
