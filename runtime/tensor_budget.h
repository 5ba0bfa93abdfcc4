// The memory budget a model is checked against before anything proportional to its tensors is
// allocated: weight folding at load, kernel preparation (index tables of Pad, Resize, Expand,
// Tile) and the pool itself. A model whose shapes are valid but absurd (a 200-byte model that
// pads to 2^33 elements) gets a clear error naming the node and the size, not a bad_alloc.
#pragma once

#include <cstddef>

#include "onepool/status.h"

namespace onepool {

struct Graph;

/// The machine's physical memory in bytes (a tensor larger than it can never be allocated), or
/// 2^40 when the system does not say.
size_t physical_memory_bytes();

/// Fails with kResourceExhausted when one activation or graph input takes
/// more than `budget_bytes`, naming the tensor, its producer, its shape and both sizes.
Status check_tensor_budget(const Graph& graph, size_t budget_bytes);

}  // namespace onepool
