// Linear Resize over the last two axes, separable and row-cached: see resize_linear_2d.h.
#include "runtime/cpu/kernels/resize_linear_2d.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/cpu/kernels/isa_clones.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

// Below this many output elements per thread, handing work to another thread costs more than
// it saves (the generic path uses the same bound).
constexpr int64_t kMinPartElements = 8192;
// Cached rows start on 64-byte boundaries (relative to the workspace).
constexpr int64_t kRowAlignFloats = 16;

// The x taps as flat tables: output column o reads first_index[o] with first_weight[o] and, with
// 2 taps, second_index[o] with second_weight[o] (an unused slot repeats the first index with
// weight 0, as AxisTaps does, and is computed like any tap so the bits match the generic path).
struct ColumnTaps {
  int taps = 1;
  std::vector<int32_t> first_index, second_index;
  std::vector<float> first_weight, second_weight;
};

ColumnTaps make_column_taps(const LinearAxisTaps& x) {
  ColumnTaps columns;
  columns.taps = x.taps;
  const auto width = static_cast<size_t>(x.taps);
  const size_t count = x.index.size() / width;
  for (size_t o = 0; o < count; ++o) {
    columns.first_index.push_back(static_cast<int32_t>(x.index[o * width]));
    columns.first_weight.push_back(x.weight[o * width]);
    if (x.taps < 2) continue;
    columns.second_index.push_back(static_cast<int32_t>(x.index[o * width + 1]));
    columns.second_weight.push_back(x.weight[o * width + 1]);
  }
  return columns;
}

// One input row interpolated along x: dst[o] = (0 + w0[o] * src[i0[o]]) + w1[o] * src[i1[o]],
// the generic path's row sum from 0 in tap order.
ONEPOOL_ISA_CLONES void interpolate_columns(const ColumnTaps& columns, int64_t count,
                                            const float* __restrict src, float* __restrict dst) {
  const int32_t* __restrict i0 = columns.first_index.data();
  const float* __restrict w0 = columns.first_weight.data();
  if (columns.taps < 2) {
    for (int64_t o = 0; o < count; ++o) {
      float sum = 0.0f;
      sum += w0[o] * src[i0[o]];
      dst[o] = sum;
    }
    return;
  }
  const int32_t* __restrict i1 = columns.second_index.data();
  const float* __restrict w1 = columns.second_weight.data();
  for (int64_t o = 0; o < count; ++o) {
    float sum = 0.0f;
    sum += w0[o] * src[i0[o]];
    sum += w1[o] * src[i1[o]];
    dst[o] = sum;
  }
}

// One output row from its y taps' x-interpolated rows: out[o] = (0 + wt * top[o]) + wb *
// bottom[o] (just the first term with 1 tap), the generic path's sum from 0 over the y taps.
ONEPOOL_ISA_CLONES void blend_rows(int taps, const float* __restrict top, float top_weight,
                                   const float* __restrict bottom, float bottom_weight,
                                   int64_t count, float* __restrict out) {
  if (taps < 2) {
    for (int64_t o = 0; o < count; ++o) {
      float sum = 0.0f;
      sum += top_weight * top[o];
      out[o] = sum;
    }
    return;
  }
  for (int64_t o = 0; o < count; ++o) {
    float sum = 0.0f;
    sum += top_weight * top[o];
    sum += bottom_weight * bottom[o];
    out[o] = sum;
  }
}

// One thread's two x-interpolated input rows, keyed by their row number over all planes
// (plane * in_h + row). With monotonic y taps (every coordinate mode) each input row is
// interpolated once per run of output rows that reads it.
class RowCache {
 public:
  RowCache(float* storage, int64_t row_stride)
      : rows_{storage, storage + row_stride}, keys_{kEmpty, kEmpty} {}

  // The row `key`, filled by fill(key, dst) unless cached; the row `keep` stays cached.
  template <class Fill>
  const float* get(int64_t key, int64_t keep, const Fill& fill) {
    for (int slot = 0; slot < 2; ++slot) {
      if (keys_[slot] == key) return rows_[slot];
    }
    const int slot = keys_[0] == keep ? 1 : 0;
    fill(key, rows_[slot]);
    keys_[slot] = key;
    return rows_[slot];
  }

 private:
  static constexpr int64_t kEmpty = -1;
  float* rows_[2];
  int64_t keys_[2];
};

// The y taps, copied: output row oy blends input rows index[oy * taps + t] with weight[...].
struct RowTaps {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

struct Linear2dPlan {
  RowTaps y;
  ColumnTaps x;
  int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t parts = 1;       // threads the rows are split over, each with its own cache
  int64_t row_stride = 0;  // floats between the cached rows in the workspace
};

class Linear2dKernel final : public Kernel {
 public:
  explicit Linear2dKernel(Linear2dPlan plan) : plan_(std::move(plan)) {}

  Status run(const RunContext& context) override {
    const float* in = context.inputs[0].as<const float>();
    float* out = context.outputs[0].as<float>();
    auto* scratch = reinterpret_cast<float*>(context.workspace);
    const int64_t rows = plan_.planes * plan_.out_h;
    const int64_t part_rows = (rows + plan_.parts - 1) / plan_.parts;
    context.threads->parallel_for(plan_.parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t first = std::min(rows, part * part_rows);
        run_rows(first, std::min(rows, first + part_rows), in, out,
                 scratch + part * 2 * plan_.row_stride);
      }
    });
    return Status::ok();
  }

 private:
  // Output rows [begin, end) over all planes (row = plane * out_h + oy).
  void run_rows(int64_t begin, int64_t end, const float* in, float* out, float* scratch) const {
    const Linear2dPlan& p = plan_;
    RowCache cache(scratch, p.row_stride);
    const auto fill = [&](int64_t key, float* dst) {
      interpolate_columns(p.x, p.out_w, in + key * p.in_w, dst);
    };
    const auto taps = static_cast<size_t>(p.y.taps);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t plane_row = row / p.out_h * p.in_h;
      const size_t first_tap = static_cast<size_t>(row % p.out_h) * taps;
      const size_t last_tap = first_tap + taps - 1;
      const int64_t top_key = plane_row + p.y.index[first_tap];
      const int64_t bottom_key = plane_row + p.y.index[last_tap];
      const float* top = cache.get(top_key, bottom_key, fill);
      const float* bottom = cache.get(bottom_key, top_key, fill);
      blend_rows(p.y.taps, top, p.y.weight[first_tap], bottom, p.y.weight[last_tap], p.out_w,
                 out + row * p.out_w);
    }
  }

  Linear2dPlan plan_;
};

}  // namespace

bool linear_2d_fits(const LinearAxisTaps& y, const LinearAxisTaps& x) {
  if (y.taps < 1 || y.taps > 2 || x.taps < 1 || x.taps > 2) return false;
  return std::all_of(x.index.begin(), x.index.end(), [](int64_t index) {
    return index >= 0 && index <= std::numeric_limits<int32_t>::max();
  });
}

Expected<PreparedKernel> make_linear_2d_kernel(const NodeContext& node, const LinearAxisTaps& y,
                                               const LinearAxisTaps& x, int64_t planes,
                                               int64_t in_h, int64_t in_w) {
  Linear2dPlan plan;
  plan.y = RowTaps{y.taps, {y.index.begin(), y.index.end()}, {y.weight.begin(), y.weight.end()}};
  plan.x = make_column_taps(x);
  plan.planes = planes;
  plan.in_h = in_h;
  plan.in_w = in_w;
  plan.out_h = static_cast<int64_t>(y.index.size()) / y.taps;
  plan.out_w = static_cast<int64_t>(x.index.size()) / x.taps;
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t plane_elements,
                           checked_mul(plan.out_h, plan.out_w, "resize output plane"));
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t elements,
                           checked_mul(planes, plane_elements, "resize output"));
  const int64_t useful_parts = std::max<int64_t>(1, elements / kMinPartElements);
  plan.parts = std::clamp<int64_t>(useful_parts, 1, std::max(1, node.threads()));
  plan.parts = std::min(plan.parts, planes * plan.out_h);
  plan.row_stride = (plan.out_w + kRowAlignFloats - 1) / kRowAlignFloats * kRowAlignFloats;
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t part_floats,
                           checked_mul(plan.row_stride, 2, "resize row cache"));
  ONEPOOL_ASSIGN_OR_RETURN(const int64_t floats,
                           checked_mul(part_floats, plan.parts, "resize row cache"));
  ONEPOOL_ASSIGN_OR_RETURN(
      const int64_t bytes,
      checked_mul(floats, static_cast<int64_t>(sizeof(float)), "resize row cache"));
  PreparedKernel prepared;
  prepared.workspace_bytes = static_cast<size_t>(bytes);
  prepared.kernel = std::make_unique<Linear2dKernel>(std::move(plan));
  return prepared;
}

}  // namespace onepool::cpu::data
