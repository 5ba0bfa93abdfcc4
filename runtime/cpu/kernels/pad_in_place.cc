// In-place constant Pad (see pad_in_place.h).
//
// Output row r (a multi-index over every axis but the last, in row-major order) reads input row
// s(r) or is all fill. s is increasing and s(r) <= r, and an input row is W elements while an
// output row is W' >= W, so output row r starts at r * W' >= s(r) * W: writing row r (memmove of
// its input row, then the fill around it) only touches bytes at or after input row s(r)'s start,
// and every input row still to be read (s < s(r)) ends before that.
#include "runtime/cpu/kernels/pad_in_place.h"

#include <cstring>

namespace onepool::cpu::data {
namespace {

void fill_elements(std::byte* out, int64_t count, size_t element_size, uint64_t fill_bits) {
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out + static_cast<size_t>(i) * element_size, &fill_bits, element_size);
  }
}

// The input row read by output row `row`, or -1 when the row is all fill.
int64_t source_row(const GrowingPad& pad, int64_t row) {
  const int rank = pad.input.rank();
  int64_t source = 0;
  int64_t input_stride = 1;
  for (int k = rank - 2; k >= 0; --k) {
    const auto axis = static_cast<size_t>(k);
    const int64_t out_dim = pad.input[k] + pad.begin[axis] + pad.end[axis];
    const int64_t index = row % out_dim - pad.begin[axis];
    row /= out_dim;
    if (index < 0 || index >= pad.input[k]) return -1;
    source += index * input_stride;
    input_stride *= pad.input[k];
  }
  return source;
}

}  // namespace

void pad_in_place(const GrowingPad& pad, std::byte* data) {
  const int rank = pad.input.rank();
  if (rank == 0) return;
  const auto last = static_cast<size_t>(rank - 1);
  const int64_t width = pad.input[rank - 1];
  const int64_t out_width = width + pad.begin[last] + pad.end[last];
  int64_t out_rows = 1;
  for (int k = 0; k + 1 < rank; ++k) {
    out_rows *= pad.input[k] + pad.begin[static_cast<size_t>(k)] + pad.end[static_cast<size_t>(k)];
  }
  const size_t size = pad.element_size;
  for (int64_t row = out_rows - 1; row >= 0; --row) {
    std::byte* out = data + static_cast<size_t>(row * out_width) * size;
    const int64_t source = source_row(pad, row);
    if (source < 0) {
      fill_elements(out, out_width, size, pad.fill_bits);
      continue;
    }
    std::byte* interior = out + static_cast<size_t>(pad.begin[last]) * size;
    std::memmove(interior, data + static_cast<size_t>(source * width) * size,
                 static_cast<size_t>(width) * size);
    fill_elements(out, pad.begin[last], size, pad.fill_bits);
    fill_elements(interior + static_cast<size_t>(width) * size, pad.end[last], size, pad.fill_bits);
  }
}

}  // namespace onepool::cpu::data
