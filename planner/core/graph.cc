// Graph IR helpers.
#include "planner/core/graph.h"

#include <cstring>

#include "planner/core/half_float.h"

namespace onepool {

namespace {
template <class T>
T read_element(const HostTensor& tensor, int64_t i) {
  T value;
  std::memcpy(&value, tensor.data.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return value;
}

template <class R>
R read_as(const HostTensor& tensor, int64_t i) {
  switch (tensor.dtype) {
    case DType::kFloat32:
      return static_cast<R>(read_element<float>(tensor, i));
    case DType::kFloat64:
      return static_cast<R>(read_element<double>(tensor, i));
    case DType::kInt64:
      return static_cast<R>(read_element<int64_t>(tensor, i));
    case DType::kInt32:
      return static_cast<R>(read_element<int32_t>(tensor, i));
    case DType::kInt16:
      return static_cast<R>(read_element<int16_t>(tensor, i));
    case DType::kInt8:
      return static_cast<R>(read_element<int8_t>(tensor, i));
    case DType::kUInt8:
      return static_cast<R>(read_element<uint8_t>(tensor, i));
    case DType::kUInt16:
      return static_cast<R>(read_element<uint16_t>(tensor, i));
    case DType::kUInt32:
      return static_cast<R>(read_element<uint32_t>(tensor, i));
    case DType::kUInt64:
      return static_cast<R>(read_element<uint64_t>(tensor, i));
    case DType::kBool:
      return static_cast<R>(read_element<uint8_t>(tensor, i) != 0);
    case DType::kFloat16:
      return static_cast<R>(half_bits_to_float(read_element<uint16_t>(tensor, i)));
    case DType::kBFloat16:
      return static_cast<R>(bfloat_bits_to_float(read_element<uint16_t>(tensor, i)));
    default:
      return R{};
  }
}
}  // namespace

int64_t HostTensor::int_at(int64_t i) const { return read_as<int64_t>(*this, i); }
double HostTensor::float_at(int64_t i) const { return read_as<double>(*this, i); }

void AttributeMap::set(std::string name, Attribute value) {
  for (auto& entry : entries_) {
    if (entry.first == name) {
      entry.second = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

const Attribute* AttributeMap::find(const std::string& name) const {
  for (const auto& entry : entries_) {
    if (entry.first == name) return &entry.second;
  }
  return nullptr;
}

int64_t AttributeMap::get_int(const std::string& name, int64_t fallback) const {
  const Attribute* attr = find(name);
  return attr != nullptr && attr->kind == Attribute::Kind::kInt ? attr->i : fallback;
}

float AttributeMap::get_float(const std::string& name, float fallback) const {
  const Attribute* attr = find(name);
  if (attr == nullptr) return fallback;
  if (attr->kind == Attribute::Kind::kFloat) return attr->f;
  if (attr->kind == Attribute::Kind::kInt) return static_cast<float>(attr->i);
  return fallback;
}

std::string AttributeMap::get_string(const std::string& name, const std::string& fallback) const {
  const Attribute* attr = find(name);
  return attr != nullptr && attr->kind == Attribute::Kind::kString ? attr->s : fallback;
}

std::vector<int64_t> AttributeMap::get_ints(const std::string& name,
                                            std::vector<int64_t> fallback) const {
  const Attribute* attr = find(name);
  return attr != nullptr && attr->kind == Attribute::Kind::kInts ? attr->ints : fallback;
}

std::vector<float> AttributeMap::get_floats(const std::string& name,
                                            std::vector<float> fallback) const {
  const Attribute* attr = find(name);
  return attr != nullptr && attr->kind == Attribute::Kind::kFloats ? attr->floats : fallback;
}

size_t Value::bytes() const {
  return static_cast<size_t>(shape.element_count()) * dtype_size(dtype);
}

ValueId Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].name == name) return static_cast<ValueId>(i);
  }
  return kNoValue;
}

ValueId Graph::add_value(Value value) {
  values.push_back(std::move(value));
  return static_cast<ValueId>(values.size() - 1);
}

const HostTensor& Graph::weight(ValueId id) const {
  return weights[static_cast<size_t>(values[static_cast<size_t>(id)].weight_index)];
}

void Graph::rebuild_edges() {
  for (auto& value : values) {
    value.producer = kNoNode;
    value.consumers.clear();
  }
  for (size_t n = 0; n < nodes.size(); ++n) {
    const auto node_id = static_cast<NodeId>(n);
    for (ValueId out : nodes[n].outputs) {
      if (out != kNoValue) values[static_cast<size_t>(out)].producer = node_id;
    }
    for (ValueId in : nodes[n].inputs) {
      if (in == kNoValue) continue;
      auto& consumers = values[static_cast<size_t>(in)].consumers;
      if (consumers.empty() || consumers.back() != node_id) consumers.push_back(node_id);
    }
  }
}

size_t Graph::weight_bytes() const {
  size_t total = 0;
  for (const auto& weight : weights) total += weight.data.size();
  return total;
}

std::string describe_node(const Node& node) {
  return str_cat("node '", node.name, "' (", node.op_type, ")");
}

}  // namespace onepool
