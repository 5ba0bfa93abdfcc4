// Ops the optimizer creates that ONNX does not define: their domain and names, shared by the
// passes that create them and the backends that run them.
#pragma once

#include <string>

namespace onepool {

/// The domain of OnePool's own ops (ONNX Runtime uses com.microsoft for its fused ops).
inline constexpr const char* kOnePoolDomain = "ai.onepool";
/// A depthwise Conv with the 1x1 Conv before it, the 1x1 Conv after it, or both
/// (planner/optimize/fuse_pointwise_depthwise.cc documents the inputs and attributes).
inline constexpr const char* kPointwiseDepthwiseOp = "PointwiseDepthwiseConv";

/// The name a backend's kernel registry files a node's op under: the op type in the default
/// ONNX domain, "ai.onepool.<op type>" for OnePool's own ops, "" in any other domain (no kernel).
inline std::string kernel_key(const std::string& domain, const std::string& op_type) {
  if (domain.empty() || domain == "ai.onnx") return op_type;
  if (domain == kOnePoolDomain) return domain + "." + op_type;
  return "";
}

}  // namespace onepool
