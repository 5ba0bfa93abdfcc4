// MaxPool with a 3 x 3 window at stride 1 and one row and column of padding on each side (the
// output as large as the input: GoogLeNet's and Inception's pooling branches on 28x28, 14x14 and
// 7x7 maps) on AVX-512, straight from the planes in two flat passes of 16-position vectors: each
// position's row maximum over its three columns into a scratch plane on the stack, then each
// output's maximum over the row maxima above, at and below it. Taps in the padding load -inf
// through masks (without touching memory); the masks of each vector are made at prepare time.
// The separable path (pool_max_padded.h) also copies each plane into a padded buffer and back out:
// on those maps 2-4x ONNX Runtime's time at two threads. Rows from 14 wide sweep row by row
// instead: each input vector loaded once, its left and right neighbours shifted in from the
// vectors beside it (valignd), each row's maxima over its columns made once and folded into the
// three output rows that read it.
//
// Same bits as the separable path: each output folds its row's taps in kw order, then the rows
// in kh order, with nan_max (b when it is larger or NaN, else a), a tap in the padding folding in
// as -inf (which never wins over a real value nor replaces a NaN).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

/// Planes of at most this many positions (64 x 64): the row maxima fit a scratch plane on the
/// stack.
constexpr int64_t kMaxSamePoolPositions = 4096;

/// True when max_pool_same runs this pool: AVX-512, a 2-D 3 x 3 window, stride 1, no dilation,
/// one row and column of padding on each side, planes of at most kMaxSamePoolPositions.
bool max_pool_same_fits(const WindowGeometry& g, bool avx512);

/// Per 16-position vector of a plane: the lanes whose left and right neighbours lie in the same
/// row, whose upper and lower neighbours lie in the plane, and that lie in the plane.
std::vector<uint16_t> max_pool_same_masks(const WindowGeometry& g);

/// y (planes x input) = the pool of x (planes x input), the planes shared out over the threads;
/// `masks` from max_pool_same_masks(g). Does not allocate.
void max_pool_same(const WindowGeometry& g, const std::vector<uint16_t>& masks, const float* x,
                   float* y, int64_t planes, ThreadPool& threads);

}  // namespace onepool::cpu::nn
