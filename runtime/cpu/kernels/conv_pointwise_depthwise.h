// PointwiseDepthwiseConv (planner/optimize/fuse_pointwise_depthwise.cc): a depthwise Conv with
// the 1x1 Conv before it (the expansion), the 1x1 Conv after it (the projection, with a residual
// Add), or both: MobileNetV2's inverted residual block in one pass that never writes the
// expanded tensor nor the depthwise output. Without an expansion the depthwise window reads X's
// rows in place.
//
// Each thread takes a contiguous run of output rows and walks it in bands. For a band it needs
// the expanded rows its windows read: the ones it shares with the band before stay in the
// thread's buffer (moved to its top), the others are computed there by the 1x1 product (the
// implicit GEMM's packed kernel reading X's rows in place) with its bias and activation; then
// the depthwise window runs over the buffer, into Y's rows, or with a projection into a second
// buffer that the projection's packed GEMM reads into Y's rows (then bias, residual,
// activation). Only the rows at the boundary between two threads are computed twice. The
// buffers stay in the core's cache: MobileNetV2's first expansion would write 4.8 MB to memory
// and read it back.
//
// Numerics: every expanded element is the same multiply-add chain over the input channels
// (sgemm_packed.h) with the same epilogue as the 1x1 Conv's kernel, every depthwise output the
// same sum (depthwise_conv_plane), every projected one the same chain over the channels with
// the bias, residual and activation in the Conv kernel's order: the bits of the unfused nodes,
// at every band height and thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/cpu/kernels/activation.h"
#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu::nn {

/// A 1x1 Conv's packed weights and epilogue.
struct PointwiseStep {
  std::shared_ptr<const std::vector<float>> packed;  // W as packed-A panels
  int64_t out_channels = 0;
  int64_t in_channels = 0;
  Activation activation;
};

struct PointwiseDepthwisePlan {
  WindowGeometry depthwise;  // the depthwise window over the expanded tensor [M, H, W]
  int64_t batch = 0;
  SgemmIsa isa = SgemmIsa::kPortable;
  bool has_expand = true;   // a 1x1 expansion C -> M comes first (else X has the M channels)
  PointwiseStep expand;     // (has_expand)
  int64_t in_channels = 0;  // X's: C, or M without an expansion
  int64_t channels = 0;     // M
  Activation depthwise_activation;
  bool project = false;            // a 1x1 projection M -> P follows
  PointwiseStep projection;        // (project)
  bool residual = false;           // (project) the projection adds a residual input
  std::vector<int64_t> x_offsets;  // input channel c of X: c * H * W
  int64_t row_bytes = 0;           // one expanded row of every channel (has_expand)
  int64_t span = 1;                // expanded rows one output row reads
  int parts = 1;                   // threads, each with its own buffers
};

/// How each thread's rows are cut, from the workspace the plan granted.
struct PointwiseDepthwiseBands {
  int64_t band_rows = 1;            // output rows per band
  int64_t buffer_rows = 1;          // expanded rows a band reads at most (per channel)
  int64_t part_bytes = 0;           // one thread's buffers
  int64_t expanded_bytes = 0;       // its expanded buffer (the depthwise buffer follows)
  std::vector<int64_t> dw_offsets;  // (project) channel m of the depthwise buffer
};

/// The least and the preferred workspace of `plan.parts` threads.
struct PointwiseDepthwiseWorkspace {
  int64_t least = 0;
  int64_t preferred = 0;
};
PointwiseDepthwiseWorkspace pointwise_depthwise_workspace(const PointwiseDepthwisePlan& plan);

/// The tallest bands whose buffers fit `workspace_bytes` shared by `plan.parts` threads (at
/// least the least workspace). The band height never changes a result.
PointwiseDepthwiseBands cut_pointwise_depthwise_bands(const PointwiseDepthwisePlan& plan,
                                                      int64_t workspace_bytes);

/// One image's tensors (nullptr for an omitted bias or residual).
struct PointwiseDepthwiseTensors {
  const float* x = nullptr;
  const float* b1 = nullptr;
  const float* w2 = nullptr;
  const float* b2 = nullptr;
  const float* b3 = nullptr;
  const float* residual = nullptr;
  float* y = nullptr;
};

/// Output rows [first, end) of one image on the calling thread, in `part` (bands.part_bytes).
void run_pointwise_depthwise_rows(const PointwiseDepthwisePlan& plan,
                                  const PointwiseDepthwiseBands& bands,
                                  const PointwiseDepthwiseTensors& tensors, std::byte* part,
                                  int64_t first, int64_t end);

}  // namespace onepool::cpu::nn
