// MatMul's shape analysis, done once at prepare time: numpy promotion of 1-D operands, batch
// broadcasting, and one (A offset, B offset) pair per output matrix.
//
//   A [2,1,4,8] x B [3,8,5]  ->  Y [2,3,4,5]: 6 products of [4,8] x [8,5];
//   A offsets (elements) 0,0,0,32,32,32; B offsets 0,40,80,0,40,80.
//
// When B is one shared matrix and A's batch is not broadcast, A is [batch*M, K] in memory and the
// whole MatMul is ONE product (fold_batch): the common transformer "activations x weight" case.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/kernels/gemm_blas.h"

namespace onepool::cpu {

struct MatMulLayout {
  GemmShape gemm;                  // one product, non-transposed, contiguous operands
  int64_t batch_count = 0;         // number of products (1 when folded)
  int64_t output_count = 0;        // elements of Y
  std::vector<int64_t> a_offsets;  // per product, elements into A (empty when folded)
  std::vector<int64_t> b_offsets;  // per product, elements into B (empty when folded)
  bool fold_batch = false;         // A's batch folded into M: a single product
  Shape output_shape;
};

/// Analyses node's inputs 0 (A) and 1 (B) against output 0. Errors (kInvalidModel) name the node,
/// both inputs and the dims that disagree; kUnsupported when a dim exceeds CBLAS's 32-bit range.
Expected<MatMulLayout> plan_matmul(const NodeContext& node);

}  // namespace onepool::cpu
