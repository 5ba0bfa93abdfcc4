// Helpers shared by the shape and data-movement kernels (shape.cc, tensor.cc and their parts):
// axis normalization, reading integer parameters from attributes or constant inputs, strides,
// element-size dispatch and a parallel byte copy. Stateless free functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "onepool/status.h"
#include "onepool/tensor.h"
#include "runtime/cpu/kernel.h"

namespace onepool::cpu::data {

/// Maps `axis` in [-rank, rank) to [0, rank); kInvalidModel naming the node otherwise.
Expected<int> normalize_axis(const NodeContext& node, int64_t axis, int rank, const char* what);

/// The element size of `dtype` when it is 1, 2, 4 or 8 bytes; kUnsupported otherwise.
Expected<size_t> movable_element_size(const NodeContext& node, DType dtype);

/// All elements of an integer (or float) host tensor as int64.
std::vector<int64_t> host_ints(const HostTensor& tensor);

/// Integer list from constant input `index` when present, else from attribute `name`.
/// std::nullopt when neither is there; kUnsupported when the input exists but is not constant.
Expected<std::optional<std::vector<int64_t>>> ints_from_input_or_attribute(const NodeContext& node,
                                                                           size_t index,
                                                                           const char* name);

/// Row-major element strides of `shape` (innermost 1).
std::vector<int64_t> contiguous_strides(const Shape& shape);

/// a * b, or kOutOfRange naming `what` when it overflows int64.
Expected<int64_t> checked_mul(int64_t a, int64_t b, const char* what);

/// Calls fn(T{}) with T the unsigned integer type of `element_size` bytes (1, 2, 4, else 8): the
/// kernels move elements by size, never by dtype.
template <class Fn>
void dispatch_element_size(size_t element_size, Fn&& fn) {
  switch (element_size) {
    case 1:
      fn(uint8_t{});
      return;
    case 2:
      fn(uint16_t{});
      return;
    case 4:
      fn(uint32_t{});
      return;
    default:
      fn(uint64_t{});
      return;
  }
}

/// Copies `bytes` from src to dst using the thread pool for large copies. No-op when src == dst.
void parallel_copy(const void* src, void* dst, size_t bytes, ThreadPool& threads);

/// Fills `count` elements of `element_size` bytes at dst with the pattern at `value`.
void fill_elements(std::byte* dst, int64_t count, size_t element_size, const void* value);

/// The `element_size` low bytes of a value written as an element of `dtype` (for fill values).
/// Reads float/int attributes; returns the bit pattern in a uint64.
uint64_t element_bits(DType dtype, double value);

/// A kernel whose output 0 is `bytes`, computed at prepare time (Shape, Size).
std::unique_ptr<Kernel> make_constant_bytes_kernel(std::vector<std::byte> bytes);

/// The value bytes of int64 `values` (for shape-derived outputs).
std::vector<std::byte> int64_bytes(const std::vector<int64_t>& values);

/// kInvalidModel unless output `index` exists and has `expected` elements.
Status check_output_count(const NodeContext& node, size_t index, int64_t expected);

}  // namespace onepool::cpu::data
