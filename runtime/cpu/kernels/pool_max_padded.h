// MaxPool over 1-D and 2-D windows in two separable passes through a padded copy of the plane.
//
// The plane is copied into scratch whose border holds -inf, so no window needs clipping. A
// horizontal pass takes each window row's maximum for every padded row, and a vertical pass
// folds those row maxima down the window's rows. Both passes are flat sweeps over whole
// buffers (rows included), so they vectorize even on the 7- and 14-wide planes at the end of a
// CNN, where row-by-row loops were mostly remainder handling: a 3x3 window costs 3 + 3
// operations per output instead of 9.
//
// Same bits as the window-by-window path: nan_max keeps the first of equal maxima and the last
// NaN, so folding each row in (kw) order and then the rows in (kh) order picks the element that
// folding every tap in (kh, kw) order picks. A -inf border tap never wins over a real one and
// never replaces a NaN. Used only where every window holds at least one input element (else
// the generic path's empty-window value applies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "runtime/cpu/kernels/conv_geometry.h"

namespace onepool::cpu::nn {

/// The padded-plane layout of one 2-D MaxPool, worked out when the kernel is prepared.
struct PaddedMaxPlan {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t input_h = 1, input_w = 1;
  int64_t output_h = 1, output_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t copied_h = 0, copied_w = 0;  // input rows / columns that land inside the copy
  int64_t padded_h = 0;                // rows of the padded copy (the last one a window reads)
  int64_t padded_w = 0;                // its row pitch: a multiple of stride_w
  int64_t reduced_w = 0;               // padded_w / stride_w: row pitch of the row maxima
  int64_t plane_floats = 0;            // the padded copy, with the slack the last taps read
  int64_t row_max_floats = 0;          // the row maxima, with the slack the vertical pass reads
  int64_t folded_floats = 0;           // the vertical pass's output, row pitch stride_h*reduced_w

  /// Floats of scratch one thread needs.
  int64_t scratch_floats() const { return plane_floats + row_max_floats + folded_floats; }
};

/// The plan for `g` (depth 1), or nullopt where this path does not apply: a window with no
/// input element in it, or scratch beyond a sane bound for one plane.
std::optional<PaddedMaxPlan> make_padded_max_plan(const WindowGeometry& g);

/// Fills the parts of `scratch` (plan.scratch_floats() floats) that no plane overwrites; once
/// per run and thread, before its first max_plane_padded.
void prepare_padded_max_scratch(const PaddedMaxPlan& plan, float* scratch);

/// One (image, channel) plane: x is input_h x input_w, y output_h x output_w.
void max_plane_padded(const PaddedMaxPlan& plan, const float* x, float* y, float* scratch);

}  // namespace onepool::cpu::nn
