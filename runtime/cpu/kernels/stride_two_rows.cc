#include "runtime/cpu/kernels/stride_two_rows.h"

namespace onepool::cpu::nn {
namespace {

// Lanes j of a 16-float load from column `first` on whose column lies in [0, end).
uint16_t columns_inside(int64_t first, int64_t end) {
  uint16_t mask = 0;
  for (int64_t j = 0; j < kStrideTwoOutputs; ++j) {
    if (first + j >= 0 && first + j < end) mask = static_cast<uint16_t>(mask | (1u << j));
  }
  return mask;
}

// Lanes l of a vector whose tap column first + 2 l lies in [0, end).
uint16_t taps_inside(int64_t first, int64_t end) {
  uint16_t mask = 0;
  for (int64_t l = 0; l < kStrideTwoOutputs; ++l) {
    const int64_t column = first + 2 * l;
    if (column >= 0 && column < end) mask = static_cast<uint16_t>(mask | (1u << l));
  }
  return mask;
}

}  // namespace

void stride_two_vector_spans(int64_t input_w, int64_t output_w, int64_t pad_left, int64_t i,
                             uint16_t* spans) {
  const int64_t first = 2 * kStrideTwoOutputs * i - pad_left;
  for (const int64_t offset : {0, 16, 2, 18}) *spans++ = columns_inside(first + offset, input_w);
  *spans++ = columns_inside(kStrideTwoOutputs * i, output_w);
  for (int64_t kw = 0; kw < 3; ++kw) *spans++ = taps_inside(first + kw, input_w);
}

std::vector<uint16_t> stride_two_spans(int64_t input_w, int64_t output_w, int64_t pad_left) {
  const int64_t per_row = (output_w + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  std::vector<uint16_t> spans(static_cast<size_t>(per_row * kStrideTwoSpans));
  for (int64_t i = 0; i < per_row; ++i) {
    stride_two_vector_spans(input_w, output_w, pad_left, i, spans.data() + i * kStrideTwoSpans);
  }
  return spans;
}

StrideTwoRows stride_two_interior_rows(const StrideTwoPlane& p) {
  const int64_t per_row = (p.out_w + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  const int64_t plane = p.height * p.width;
  // Row oh's first load starts at (2 oh - pad_top) * width - pad_left, its last ends
  // kStrideTwoReach columns after the last vector's b in input row 2 oh - pad_top + 2.
  const auto inside = [&](int64_t oh) {
    const int64_t top = 2 * oh - p.pad_top;
    const int64_t first_read = top * p.width - p.pad_left;
    const int64_t last_end =
        (top + 2) * p.width + 2 * kStrideTwoOutputs * (per_row - 1) - p.pad_left + kStrideTwoReach;
    return top >= 0 && top + 2 < p.height && first_read >= 0 && last_end <= plane;
  };
  // Each bound is monotone in oh (two from below, two from above): the rows inside are one
  // interval, found from both ends in a step or two (every plane of a node asks again).
  StrideTwoRows rows{0, p.out_h};
  while (rows.first < p.out_h && !inside(rows.first)) ++rows.first;
  while (rows.end > rows.first && !inside(rows.end - 1)) --rows.end;
  return rows;
}

}  // namespace onepool::cpu::nn
