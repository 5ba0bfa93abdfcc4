// Reading a NodeProto's attributes during import (before the Graph exists). Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace onepool {

/// The attribute named `name`, or nullptr.
const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name);
/// The int attribute's value, or `fallback` when it is absent.
int64_t attribute_int(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
/// The ints attribute's values; `found` says whether the attribute exists.
std::vector<int64_t> attribute_ints(const onnx::NodeProto& node, const std::string& name,
                                    bool* found);
/// Normalizes a possibly negative axis against `rank`; -1 when out of range.
int normalize_axis(int64_t axis, int rank);

}  // namespace onepool
