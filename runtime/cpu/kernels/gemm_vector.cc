// One-row products, see gemm_vector.h.
#include "runtime/cpu/kernels/gemm_vector.h"

#include <algorithm>

#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/thread_pool.h"

namespace onepool::cpu {
namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kSweepColumns = 256;  // columns a row sweep accumulates at once (on the stack)

// a . b over k, in 16 lanes (a loop the compiler vectorizes), the lanes summed in order, then
// the last k % 16 products.
float dot(const float* a, const float* b, int64_t k) {
  float lanes[kLanes] = {};
  int64_t p = 0;
  for (; p + kLanes <= k; p += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += a[p + l] * b[p + l];
  }
  float sum = 0.0f;
  for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
  for (; p < k; ++p) sum += a[p] * b[p];
  return sum;
}

// Four dot products a . b[c] over k at once, each summed exactly as dot() sums it (its 16 lanes
// over p in order, the lanes in order, then the tail): four independent chains of adds and four
// rows of B streaming together, where one dot product waits on its adds one vector at a time
// (MobileNetV2's 1280 -> 1000 head: 1000 rows of 5 KB).
void dot4(const float* a, const float* const b[4], int64_t k, float sums[4]) {
  float lanes[4][kLanes] = {};
  int64_t p = 0;
  for (; p + kLanes <= k; p += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      const float x = a[p + l];
      lanes[0][l] += x * b[0][p + l];
      lanes[1][l] += x * b[1][p + l];
      lanes[2][l] += x * b[2][p + l];
      lanes[3][l] += x * b[3][p + l];
    }
  }
  for (int c = 0; c < 4; ++c) {
    float sum = 0.0f;
    for (int64_t l = 0; l < kLanes; ++l) sum += lanes[c][l];
    for (int64_t q = p; q < k; ++q) sum += a[q] * b[c][q];
    sums[c] = sum;
  }
}

float finish(float alpha, float sum, float beta, float y) {
  return beta == 0.0f ? alpha * sum : alpha * sum + beta * y;
}

// Columns [begin, end) of op(B) = B^T: one dot product per column.
ONEPOOL_ISA_CLONES void dot_columns(const GemmShape& s, float alpha, const float* a, const float* b,
                                    float beta, float* y, int64_t begin, int64_t end) {
  int64_t j = begin;
  for (; j + 4 <= end; j += 4) {
    const float* const rows[4] = {b + j * s.ldb, b + (j + 1) * s.ldb, b + (j + 2) * s.ldb,
                                  b + (j + 3) * s.ldb};
    float sums[4];
    dot4(a, rows, s.k, sums);
    for (int c = 0; c < 4; ++c) y[j + c] = finish(alpha, sums[c], beta, y[j + c]);
  }
  for (; j < end; ++j) y[j] = finish(alpha, dot(a, b + j * s.ldb, s.k), beta, y[j]);
}

// Columns [begin, end) of op(B) = B: rows of B swept into a block of sums, p in order.
ONEPOOL_ISA_CLONES void sweep_columns(const GemmShape& s, float alpha, const float* a,
                                      const float* b, float beta, float* y, int64_t begin,
                                      int64_t end) {
  float sums[kSweepColumns];
  for (int64_t first = begin; first < end; first += kSweepColumns) {
    const int64_t width = std::min(kSweepColumns, end - first);
    std::fill(sums, sums + width, 0.0f);
    for (int64_t p = 0; p < s.k; ++p) {
      const float a_p = a[p];
      const float* row = b + p * s.ldb + first;
      for (int64_t j = 0; j < width; ++j) sums[j] += a_p * row[j];
    }
    for (int64_t j = 0; j < width; ++j) y[first + j] = finish(alpha, sums[j], beta, y[first + j]);
  }
}

}  // namespace

void gemv_row(const GemmShape& s, float alpha, const float* a, const float* b, float beta, float* y,
              ThreadPool* threads) {
  const auto columns = [&](int64_t begin, int64_t end) {
    if (s.trans_b) {
      dot_columns(s, alpha, a, b, beta, y, begin, end);
    } else {
      sweep_columns(s, alpha, a, b, beta, y, begin, end);
    }
  };
  // About 32k multiply-adds per part at least: below that a hand-off costs more than it saves.
  const int64_t min_columns = std::max<int64_t>(1, (int64_t{1} << 15) / s.k);
  if (threads == nullptr) {
    columns(0, s.n);
    return;
  }
  threads->parallel_for(s.n, min_columns, columns);
}

}  // namespace onepool::cpu
