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

}  // namespace

std::vector<uint16_t> stride_two_spans(int64_t input_w, int64_t output_w, int64_t pad_left) {
  const int64_t per_row = (output_w + kStrideTwoOutputs - 1) / kStrideTwoOutputs;
  std::vector<uint16_t> spans;
  spans.reserve(static_cast<size_t>(per_row * kStrideTwoSpans));
  for (int64_t i = 0; i < per_row; ++i) {
    const int64_t first = 2 * kStrideTwoOutputs * i - pad_left;
    for (const int64_t offset : {0, 16, 2, 18}) {
      spans.push_back(columns_inside(first + offset, input_w));
    }
    spans.push_back(columns_inside(kStrideTwoOutputs * i, output_w));
  }
  return spans;
}

}  // namespace onepool::cpu::nn
