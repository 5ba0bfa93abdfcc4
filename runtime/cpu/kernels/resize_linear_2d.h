// The fast path of linear Resize: planes [in_h, in_w] -> [out_h, out_w] (the last two axes; every
// leading axis maps to itself), separable and row-cached.
//
// Each output row blends two input rows (the y taps), each interpolated along x first. An input
// row interpolated along x is kept while the next output rows still read it (two rows per
// thread), so upsampling by 2 interpolates each input row once instead of four times; the
// blend of the two rows is a loop the compiler vectorizes, and the x pass reads its taps from
// flat int32 / float tables.
//
// Numerics: every output element is computed with the same float operations in the same order
// as the generic tap loop (resize.cc): a sum from 0 over the x taps (unused slots included, at
// weight 0), then a sum from 0 over the y taps; only the sharing of the x sums between output
// rows differs. The bits never depend on the path, the thread count or the CPU (the sign and
// payload of a NaN aside: those are the hardware's choice on every path).
//
// This unit knows taps, not Resize attributes: resize.cc maps the coordinates to taps
// (resize_taps.cc) and hands them over.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/cpu/kernel.h"

namespace onepool::cpu::data {

/// One axis's taps, as AxisTaps (resize.h) holds them: output index o reads input index
/// index[o * taps + t] with weight weight[o * taps + t] for t < taps (unused slots: weight 0).
/// Views; the kernel copies what it keeps.
struct LinearAxisTaps {
  int taps = 1;
  std::span<const int64_t> index;
  std::span<const float> weight;
};

/// True when the fast path takes these taps: at most 2 per output on each axis, x indices that
/// fit int32. (The caller checks the rest: linear mode, no tf_crop_and_resize extrapolation.)
bool linear_2d_fits(const LinearAxisTaps& y, const LinearAxisTaps& x);

/// The fast kernel for `planes` planes of [in_h, in_w] (linear_2d_fits true). Its workspace
/// (declared in the result, sized for node.threads()) holds two x-interpolated rows per thread;
/// run() allocates nothing.
Expected<PreparedKernel> make_linear_2d_kernel(const NodeContext& node, const LinearAxisTaps& y,
                                               const LinearAxisTaps& x, int64_t planes,
                                               int64_t in_h, int64_t in_w);

}  // namespace onepool::cpu::data
