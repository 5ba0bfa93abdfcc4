// The optimization levels and what a run of the optimizer did: shared by optimize_graph
// (optimize.h) and the passes (passes.h), which count into the report.
#pragma once

#include <string>

#include "onepool/status.h"

namespace onepool {

enum class OptimizeLevel { kNone, kBasic, kAll };

/// Parses "none", "basic", "all".
Expected<OptimizeLevel> parse_optimize_level(const std::string& text);

struct OptimizeReport {
  int removed_nodes = 0;      // Identity / Dropout
  int folded_batchnorms = 0;  // BatchNormalization folded into Conv
  int fused_biases = 0;       // Add of a constant folded into a producer's bias
  int fused_activations = 0;  // activation nodes turned into epilogues
  int fused_gelus = 0;        // decomposed GELU chains turned into one Gelu node
  int fused_pads = 0;         // zero Pad nodes merged into the pads of the Conv reading them
  int fused_qdq = 0;          // DequantizeLinear → Conv/MatMul → QuantizeLinear made QLinear*
  int fused_residuals = 0;    // Add(conv, skip) made the Conv's residual input
  int fused_depthwise_blocks = 0;  // depthwise Convs made PointwiseDepthwiseConv, taking in
  int fused_expansions = 0;        //   the 1x1 Conv before them
  int fused_projections = 0;       //   the 1x1 Conv after them
  int nodes_before = 0;
  int nodes_after = 0;
};

}  // namespace onepool
