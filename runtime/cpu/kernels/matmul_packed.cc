// Float MatMul products on the packed-A GEMM, see matmul_packed.h.
#include "runtime/cpu/kernels/matmul_packed.h"

#include <algorithm>

#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {

std::optional<PackedProduct> plan_packed_product(const GemmShape& shape, nn::SgemmIsa isa) {
  if (isa == nn::SgemmIsa::kPortable || shape.trans_a || shape.trans_b) return std::nullopt;
  if (shape.m < nn::sgemm_panel_rows(isa) || shape.n <= 0 || shape.k <= 0) return std::nullopt;
  return PackedProduct{isa, shape, nullptr};
}

std::shared_ptr<const std::vector<float>> pack_constant_b(const PackedProduct& product,
                                                          const float* b) {
  const GemmShape& s = product.shape;
  auto packed = std::make_shared<std::vector<float>>(
      static_cast<size_t>(nn::packed_b_floats(product.isa, s.k, s.n)));
  nn::pack_b(product.isa, b, s.k, s.n, s.ldb, packed->data());
  return packed;
}

size_t packed_product_workspace_bytes(const PackedProduct& product) {
  return static_cast<size_t>(nn::packed_a_floats(product.isa, product.shape.m, product.shape.k)) *
         sizeof(float);
}

void run_packed_product(const PackedProduct& product, const float* a, const float* b, float* c,
                        std::byte* workspace, ThreadPool* threads) {
  const GemmShape& s = product.shape;
  const nn::SgemmIsa isa = product.isa;
  auto* packed = reinterpret_cast<float*>(workspace);
  const int64_t rows = nn::sgemm_panel_rows(isa);
  const int64_t panels = (s.m + rows - 1) / rows;
  const auto pack = [&](int64_t begin, int64_t end) {
    nn::pack_a_panels(isa, a, s.m, s.k, s.lda, begin, end, packed);
  };
  const int64_t cols = nn::sgemm_tile_cols(isa);
  const int64_t tiles = (s.n + cols - 1) / cols;
  const auto multiply = [&](int64_t begin, int64_t end) {
    const int64_t first = begin * cols;
    if (product.packed_b) {
      nn::sgemm_packed_ab(isa, nn::PackedA{packed, s.m, s.k}, s.m,
                          nn::PackedB{product.packed_b->data(), s.k, s.n}, first,
                          std::min(s.n, end * cols) - first, c + first, s.ldc);
      return;
    }
    nn::sgemm_packed_a(isa, nn::PackedA{packed, s.m, s.k}, 0, s.m,
                       std::min(s.n, end * cols) - first, b + first, s.ldb, c + first, s.ldc);
  };
  if (threads == nullptr) {
    pack(0, panels);
    multiply(0, tiles);
    return;
  }
  threads->parallel_for(panels, 1, pack);
  threads->parallel_for(tiles, 1, multiply);
}

}  // namespace onepool::cpu
