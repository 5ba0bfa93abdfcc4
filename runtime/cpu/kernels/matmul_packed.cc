// Float MatMul products on the packed-A GEMM, see matmul_packed.h.
#include "runtime/cpu/kernels/matmul_packed.h"

#include <algorithm>

#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {

namespace {

// A thread's share of a product is worth handing over only when it outweighs the hand-off: the
// worker's start, and every line of packed A and of C crossing between the cores (on two cores
// of different caches a 32 x 64 x 64 product split in two ran 2.5x longer than on one). Products
// and packings smaller than these per part run on fewer threads, down to the caller alone.
constexpr int64_t kMinMacsPerPart = int64_t{1} << 19;
constexpr int64_t kMinPackFloatsPerPart = int64_t{1} << 15;

// parallel_for's min_chunk: the items (panels, tiles) that hold at least `minimum` units of work
// when each holds `per_item`.
int64_t min_parallel_chunk(int64_t per_item, int64_t minimum) {
  return std::max<int64_t>(1, (minimum + per_item - 1) / std::max<int64_t>(1, per_item));
}

}  // namespace

std::optional<PackedProduct> plan_packed_product(const GemmShape& shape, nn::SgemmIsa isa) {
  if (isa == nn::SgemmIsa::kPortable || shape.trans_a || shape.trans_b) return std::nullopt;
  if (shape.m < nn::sgemm_panel_rows(isa) || shape.n <= 0 || shape.k <= 0) return std::nullopt;
  return PackedProduct{isa, shape, nullptr};
}

std::shared_ptr<const std::vector<float>> pack_constant_b(const PackedProduct& product,
                                                          const float* b) {
  const GemmShape& s = product.shape;
  // The strips start on a cache line (the storage holds kLineFloats more): a large vector's floats
  // sit 16 bytes past one, and each of the micro-kernel's B loads would straddle two lines.
  auto packed = std::make_shared<std::vector<float>>(
      static_cast<size_t>(nn::packed_b_floats(product.isa, s.k, s.n) + nn::kLineFloats));
  nn::pack_b(product.isa, b, s.k, s.n, s.ldb, nn::line_aligned(packed->data()));
  return packed;
}

std::string packed_product_name(const PackedProduct& product) {
  return std::string(product.packed_b ? "packed gemm, packed B " : "packed gemm ") +
         nn::sgemm_isa_name(product.isa);
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
                          nn::PackedB{nn::line_aligned(product.packed_b->data()), s.k, s.n}, first,
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
  threads->parallel_for(panels, min_parallel_chunk(rows * s.k, kMinPackFloatsPerPart), pack);
  threads->parallel_for_balanced(tiles, min_parallel_chunk(s.m * s.k * cols, kMinMacsPerPart),
                                 multiply);
}

}  // namespace onepool::cpu
