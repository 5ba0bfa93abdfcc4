// Float MatMul products on OnePool's own packed-A GEMM (sgemm_packed.h) rather than CBLAS:
// A (the activations, m x k) is packed into panels in the node's workspace at every run, B
// (k x n) is read in place, or from strips packed once at prepare time when it is a constant
// weight, and the columns of C are split over the Session's threads in whole tiles. The
// micro-kernels are picked by CPUID, so OpenBLAS's environment settings do not decide the speed,
// and every element of C is one fused multiply-add chain over k in order: the same bits at every
// thread count, column split, workspace address and packing of B.
// Products with fewer rows than one panel (matrix-vector shapes) stay on CBLAS, as do machines
// without AVX2 + FMA (the portable micro-kernel is slower than OpenBLAS there).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cpu/kernels/gemm_blas.h"
#include "runtime/cpu/kernels/sgemm_packed.h"

namespace onepool::cpu {

class ThreadPool;

struct PackedProduct {
  nn::SgemmIsa isa = nn::SgemmIsa::kPortable;
  GemmShape shape;  // non-transposed
  /// B packed at prepare time (constant weights): run_packed_product then reads these strips and
  /// ignores its `b` argument. Null: B is read in place at every run.
  std::shared_ptr<const std::vector<float>> packed_b;
};

/// The packed plan of `shape` on micro-kernel `isa`, or nullopt when CBLAS should run it.
std::optional<PackedProduct> plan_packed_product(const GemmShape& shape, nn::SgemmIsa isa);

/// A constant B (shape.k x shape.n, row stride shape.ldb) packed for product.packed_b. The
/// products keep their bits: each element of C is the same chain.
std::shared_ptr<const std::vector<float>> pack_constant_b(const PackedProduct& product,
                                                          const float* b);

/// The profiler's name of the product's path: "packed gemm[, packed B] <isa>".
std::string packed_product_name(const PackedProduct& product);

/// Workspace bytes run_packed_product needs: A packed into whole panels.
size_t packed_product_workspace_bytes(const PackedProduct& product);

/// C = A * B; `workspace` holds packed_product_workspace_bytes (float-aligned).
void run_packed_product(const PackedProduct& product, const float* a, const float* b, float* c,
                        std::byte* workspace, ThreadPool* threads);

}  // namespace onepool::cpu
