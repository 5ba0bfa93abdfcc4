// Sliding-window attributes shared by Conv, ConvTranspose, MaxPool and AveragePool, read once
// and mapped to 2-D (a 1-D window is 1 x W).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/cuda/cuda_kernel.h"

namespace onepool::cuda {

struct Window2d {
  int64_t in_h = 1, in_w = 1;    // the input's spatial dims
  int64_t out_h = 1, out_w = 1;  // the output's spatial dims (from the graph)
  int k_h = 1, k_w = 1, s_h = 1, s_w = 1, d_h = 1, d_w = 1;
  int p_h = 0, p_w = 0;      // begin pads
  int end_h = 0, end_w = 0;  // end pads
};

/// The begin pad of one axis whose pads are derived from the output size (`total` cells of
/// padding in all): SAME_UPPER / SAME_LOWER, and ConvTranspose's `output_shape` (NOTSET).
/// Matches the ONNX spec and the CPU kernels: for ConvTranspose NOTSET puts total - total / 2
/// at the beginning.
int64_t derived_pad_begin(int64_t total, const std::string& auto_pad, bool transposed);

/// Reads kernel_shape (or `kernel` = the weight's spatial dims when given), strides, dilations,
/// pads and auto_pad for input 0 / output 0 with 1 or 2 spatial dims. `transposed` selects
/// ConvTranspose's padding rule for auto_pad and output_shape.
Expected<Window2d> read_window(const CudaNodeContext& node, const Shape* kernel, bool transposed);

}  // namespace onepool::cuda
