// CPU kernels that read tensors of data-dependent size (Value::bound: outputs of NonZero,
// Compress, Unique, NonMaxSuppression and what is computed from them). Such a tensor sits
// densely at the start of its planned region with its actual shape, which the backend puts in
// the reader's input view before each run; these kernels compute from the actual shapes and
// report their outputs' actual shapes (PreparedKernel::accepts_bounded_inputs).
//
// Gather: indices of any actual shape; data may be smaller than its bound in dim 0 only (its
// rows then are a prefix of the region, so the layout of the rest holds). Every index is checked
// against the actual axis dim.
// Transpose: any permutation of the actual shape. GatherND (batch_dims 0): bounded indices
// [..., r] over static data (PyTorch's boolean-mask indexing exports NonZero -> Transpose ->
// GatherND); every index tuple is checked against data's dims.
// Identity, Squeeze, Unsqueeze, Flatten and Reshape: the output's dims that are not 1 take, in
// order, the actual values of the input's dims that are not 1 (the bound shapes say which dims
// those are); a result whose element count differs from the input's is an error naming both.
#pragma once

#include <vector>

#include "runtime/cpu/kernel.h"

namespace onepool::cpu::data {

/// True when one of the node's inputs has a data-dependent size.
bool reads_bounded_input(const NodeContext& node);

/// Gather over a bounded input; `axis` normalized, `element_size` of data's dtype.
Expected<PreparedKernel> make_bounded_gather_kernel(const NodeContext& node, int axis,
                                                    size_t element_size);

/// Transpose over a bounded input 0 with `perm` (checked by the caller).
Expected<PreparedKernel> make_bounded_transpose_kernel(const NodeContext& node,
                                                       const std::vector<int>& perm);

/// GatherND over bounded indices (data static, batch_dims 0).
Expected<PreparedKernel> make_bounded_gather_nd_kernel(const NodeContext& node);

/// Identity / Squeeze / Unsqueeze / Flatten / Reshape over a bounded input 0.
Expected<PreparedKernel> make_bounded_copy_kernel(const NodeContext& node);

}  // namespace onepool::cpu::data
