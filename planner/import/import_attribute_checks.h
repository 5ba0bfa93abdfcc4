// Attribute checks that must run before ONNX shape inference: its Conv / pooling inference
// divides by strides and multiplies dilations without checks (a stride of 0 is a SIGFPE inside
// the ONNX library). Internal to import.
#pragma once

#include <onnx/onnx_pb.h>

#include "onepool/status.h"

namespace onepool {

/// Checks the window attributes of every convolution and pooling node, in the graph and in
/// every subgraph: strides, dilations and kernel_shape in [1, 2^31), pads in [0, 2^31) with two
/// per spatial axis, group >= 1, ConvTranspose output_padding below its stride or dilation.
/// Every node's 'axis' / 'axes' attribute lies in [-8, 8] (ONNX inference truncates it to int).
/// kInvalidModel naming the node, the attribute, its index and value, and the allowed range.
Status check_window_attributes(const onnx::GraphProto& graph);

}  // namespace onepool
