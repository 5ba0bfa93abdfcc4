// Slices at run-time positions with lengths known at load. Internal to import.
//
// A Slice whose starts or ends are computed at run time (a Loop body's iteration number, a graph
// input) but always lie the same distance apart (ends = starts + c, steps 1) spans at most
// min(max(c, 0), dim) elements on each sliced axis: clamping a position to [0, dim] only shortens
// the slice. Import plans the output at that length instead of asking for the positions' values;
// the CPU kernel reads the positions at run time and fails, naming the node, the axis and both
// lengths, when a position near an end clamps the slice shorter than planned.
//
// The distance is proven by a walk from starts and from ends back through ops that keep every
// element's value up to one constant offset (Identity, Unsqueeze, Squeeze, Reshape, Flatten; Add
// or Sub of a one-element integer constant) to one common source tensor. Axes must be absent or
// constant, steps absent or constant ones.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "onepool/status.h"

namespace onepool {

/// Proves ends - starts of the Slices of one graph (indexes its producers and constants once).
class SliceDistanceProver {
 public:
  explicit SliceDistanceProver(const onnx::GraphProto& graph);

  /// ends - starts (the same for every sliced axis) of a Slice with starts/ends/axes/steps
  /// inputs where starts or ends is not a constant, steps are absent or ones and axes absent or
  /// constant; nullopt when the walk proves nothing or the node is not such a Slice.
  std::optional<int64_t> runtime_distance(const onnx::NodeProto& node) const;

  /// The values of a constant integer tensor (initializer or Constant node); nullopt otherwise.
  std::optional<std::vector<int64_t>> constant_ints(const std::string& name) const;

 private:
  /// A value as source + offset, elementwise (source empty: the value is the constant offset).
  struct Offset {
    std::string source;
    int64_t offset = 0;
  };
  std::optional<Offset> trace(const std::string& name) const;
  std::optional<int64_t> one_constant_int(const std::string& name) const;

  std::unordered_map<std::string, const onnx::NodeProto*> producers_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
};

/// Types the output of every Slice at a run-time position with a proven distance whose data has
/// a static shape (and, when axes are absent, starts too) and whose output is not static yet:
/// data's shape with each sliced axis at min(max(distance, 0), dim). Returns how many it typed.
/// Errors: an axis out of range or repeated (names the node).
Expected<int> type_runtime_slices(onnx::GraphProto* graph);

}  // namespace onepool
