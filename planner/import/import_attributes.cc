// Reading a NodeProto's attributes during import.
#include "planner/import/import_attributes.h"

namespace onepool {

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

int64_t attribute_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const auto* attribute = find_attribute(node, name);
  return attribute != nullptr && attribute->has_i() ? attribute->i() : fallback;
}

std::vector<int64_t> attribute_ints(const onnx::NodeProto& node, const std::string& name,
                                    bool* found) {
  const auto* attribute = find_attribute(node, name);
  *found = attribute != nullptr;
  if (attribute == nullptr) return {};
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

int normalize_axis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) return -1;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace onepool
