// float16 / bfloat16 <-> float32 conversions of whole arrays for the CPU backend (the
// float32-compute adapter, half_compute.h), rounding as the element functions of
// planner/core/half_float.h do.
#pragma once

#include <cstddef>
#include <cstdint>

#include "planner/core/half_float.h"

namespace onepool::cpu {

/// Converts `count` binary16 elements to float (F16C when the build targets it).
void half_to_float_array(const uint16_t* source, float* destination, size_t count);
/// Converts `count` floats to binary16, round to nearest even.
void float_to_half_array(const float* source, uint16_t* destination, size_t count);
void bfloat_to_float_array(const uint16_t* source, float* destination, size_t count);
void float_to_bfloat_array(const float* source, uint16_t* destination, size_t count);

}  // namespace onepool::cpu
