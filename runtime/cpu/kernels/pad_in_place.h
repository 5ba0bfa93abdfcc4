// Constant Pad written over its own input: the planner may let Pad's output take over its dying
// input's bytes and extend past them (PreparedKernel::in_place_grows). With pads >= 0 every
// element moves to an address at or after its own, so walking the output rows from the last to
// the first reads each input row before anything overwrites it (see pad_in_place.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "onepool/tensor.h"
#include "runtime/cpu/kernel.h"

namespace onepool::cpu::data {

/// The geometry of a constant Pad with non-negative pads, as rows of the innermost axis.
struct GrowingPad {
  Shape input;
  std::vector<int64_t> begin;  // per axis
  std::vector<int64_t> end;    // per axis
  size_t element_size = 1;
  uint64_t fill_bits = 0;
};

/// Pads `data` (holding the input at its start, with room for the output) into the output, in
/// place. Single-threaded: rows must move in order.
void pad_in_place(const GrowingPad& pad, std::byte* data);

}  // namespace onepool::cpu::data
