// MaxPool with a 3 x 3 window at stride 2 (ResNet's stem pool, 112x112 -> 56x56) on AVX-512,
// straight from the planes: 16 outputs of a row at a time, each input row's three taps split out
// of two pairs of vector loads by permutes (stride_two_rows.h), the lanes in the padding loading
// -inf. The separable path (pool_max_padded.h) copies each plane into a padded buffer, reads its
// stride-2 taps one element at a time and folds every padded row where only every other one is
// kept: about twice ONNX Runtime's time on that pool.
//
// Same bits as the separable path: each output folds its row's taps in kw order, then the rows
// in kh order, with nan_max (nan_order.h: b when it is larger or NaN, else a), a row of padding
// folding in as -inf (which never wins over a real value nor replaces a NaN).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/conv_geometry.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu::nn {

/// True when max_pool_stride_two runs this pool: a 2-D 3 x 3 window, stride 2, no dilation, at
/// most one row and column of padding before, output rows at least 7 wide, every window holding
/// an input element (`windows_reach_input`, as the separable path requires), on AVX-512.
bool max_pool_stride_two_fits(const WindowGeometry& g, bool windows_reach_input, bool avx512);

/// The output rows' masks (stride_two_spans), made once at prepare time.
std::vector<uint16_t> max_pool_stride_two_spans(const WindowGeometry& g);

/// y (planes x output) = the pool of x (planes x input), the planes shared out over the threads.
void max_pool_stride_two(const WindowGeometry& g, const std::vector<uint16_t>& spans,
                         const float* x, float* y, int64_t planes, ThreadPool& threads);

}  // namespace onepool::cpu::nn
