#include "runtime/cpu/kernels/transpose.h"

#include <algorithm>
#include <cstring>

#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

constexpr int64_t kTile = 32;

struct Coalesced {
  std::vector<int64_t> dims;  // input dims after dropping 1s and merging
  std::vector<int> perm;
};

// Drops size-1 axes, then merges input axes that appear adjacent and in order in the output.
Coalesced coalesce(const std::vector<int64_t>& dims, const std::vector<int>& perm) {
  std::vector<int> compact_index(dims.size(), -1);
  std::vector<int64_t> kept_dims;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] == 1) continue;
    compact_index[axis] = static_cast<int>(kept_dims.size());
    kept_dims.push_back(dims[axis]);
  }
  std::vector<int> kept_perm;
  for (int axis : perm) {
    if (compact_index[static_cast<size_t>(axis)] >= 0) {
      kept_perm.push_back(compact_index[static_cast<size_t>(axis)]);
    }
  }
  // Groups of consecutive input axes, in output order: (first input axis, length).
  std::vector<std::pair<int, int>> groups;
  for (int axis : kept_perm) {
    if (!groups.empty() && groups.back().first + groups.back().second == axis) {
      ++groups.back().second;
    } else {
      groups.emplace_back(axis, 1);
    }
  }
  std::vector<std::pair<int, int>> sorted = groups;
  std::sort(sorted.begin(), sorted.end());
  Coalesced result;
  for (const auto& group : sorted) {
    int64_t dim = 1;
    for (int k = 0; k < group.second; ++k) dim *= kept_dims[static_cast<size_t>(group.first + k)];
    result.dims.push_back(dim);
  }
  for (const auto& group : groups) {
    const auto where = std::lower_bound(sorted.begin(), sorted.end(), group);
    result.perm.push_back(static_cast<int>(where - sorted.begin()));
  }
  return result;
}

bool is_batched_swap(const std::vector<int>& perm) {
  const size_t rank = perm.size();
  if (rank < 2) return false;
  for (size_t k = 0; k + 2 < rank; ++k) {
    if (perm[k] != static_cast<int>(k)) return false;
  }
  return perm[rank - 2] == static_cast<int>(rank - 1) &&
         perm[rank - 1] == static_cast<int>(rank - 2);
}

// out[c][r] = in[r][c] for one batch, output rows [c_begin, c_end), in kTile x kTile blocks.
template <class T>
void transpose_tile_rows(const T* in, T* out, int64_t rows, int64_t cols, int64_t c_begin,
                         int64_t c_end) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c = c_begin; c < c_end; ++c) {
      T* dst = out + c * rows;
      for (int64_t r = r0; r < r1; ++r) dst[r] = in[r * cols + c];
    }
  }
}

}  // namespace

TransposePlan::TransposePlan(const std::vector<int64_t>& dims, const std::vector<int>& perm,
                             size_t element_size)
    : element_size_(element_size) {
  total_ = 1;
  for (int64_t dim : dims) total_ *= dim;
  const Coalesced coalesced = coalesce(dims, perm);
  const size_t rank = coalesced.dims.size();
  bool identity = true;
  for (size_t k = 0; k < rank; ++k) identity = identity && coalesced.perm[k] == static_cast<int>(k);
  if (identity || total_ == 0) return;
  if (is_batched_swap(coalesced.perm)) {
    path_ = Path::kBatched2d;
    rows_ = coalesced.dims[rank - 2];
    cols_ = coalesced.dims[rank - 1];
    batch_ = total_ / (rows_ * cols_);
    return;
  }
  path_ = Path::kGeneral;
  std::vector<int64_t> strides(rank, 1);
  for (size_t k = rank - 1; k-- > 0;) strides[k] = strides[k + 1] * coalesced.dims[k + 1];
  std::vector<std::vector<int64_t>> tables(rank);
  for (size_t k = 0; k < rank; ++k) {
    const auto axis = static_cast<size_t>(coalesced.perm[k]);
    tables[k].resize(static_cast<size_t>(coalesced.dims[axis]));
    for (size_t i = 0; i < tables[k].size(); ++i) {
      tables[k][i] = static_cast<int64_t>(i) * strides[axis];
    }
  }
  general_ = AxisMapCopy(std::move(tables), element_size, 0);
}

void TransposePlan::run(const std::byte* in, std::byte* out, ThreadPool& threads) const {
  switch (path_) {
    case Path::kCopy:
      parallel_copy(in, out, static_cast<size_t>(total_) * element_size_, threads);
      return;
    case Path::kBatched2d:
      run_batched_2d(in, out, threads);
      return;
    case Path::kGeneral:
      general_.run(in, out, threads);
      return;
  }
}

void TransposePlan::run_batched_2d(const std::byte* in, std::byte* out, ThreadPool& threads) const {
  // One task = one batch x one stripe of kTile output rows: each task writes contiguous memory.
  const int64_t stripes = (cols_ + kTile - 1) / kTile;
  const int64_t min_tasks = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, rows_ * kTile));
  const int64_t plane = rows_ * cols_;
  threads.parallel_for(batch_ * stripes, min_tasks, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / stripes;
      const int64_t c_begin = (task % stripes) * kTile;
      const int64_t c_end = std::min(cols_, c_begin + kTile);
      const int64_t offset = b * plane * static_cast<int64_t>(element_size_);
      const std::byte* src = in + offset;
      std::byte* dst = out + offset;
      dispatch_element_size(element_size_, [&](auto tag) {
        using T = decltype(tag);
        transpose_tile_rows(reinterpret_cast<const T*>(src), reinterpret_cast<T*>(dst), rows_,
                            cols_, c_begin, c_end);
      });
    }
  });
}

}  // namespace onepool::cpu::data
