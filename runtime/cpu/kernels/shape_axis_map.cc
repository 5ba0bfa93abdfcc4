#include "runtime/cpu/kernels/shape_axis_map.h"

#include <algorithm>
#include <cstring>

#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu::data {

namespace {

// Rows shorter than this are merged with the axis above so that per-row overhead stays small;
// a merged table may hold at most kMaxMergedTable entries (it is prepared memory).
constexpr size_t kMinRowLength = 256;
constexpr size_t kMaxMergedTable = size_t{1} << 16;

std::vector<int64_t> merge_tables(const std::vector<int64_t>& outer,
                                  const std::vector<int64_t>& inner) {
  std::vector<int64_t> merged;
  merged.reserve(outer.size() * inner.size());
  for (int64_t a : outer) {
    for (int64_t b : inner) {
      merged.push_back(a == AxisMapCopy::kFill || b == AxisMapCopy::kFill ? AxisMapCopy::kFill
                                                                          : a + b);
    }
  }
  return merged;
}

template <class T>
void gather_row(const std::byte* in, const int64_t* table, int64_t count, std::byte* out,
                uint64_t fill_bits, bool has_fill) {
  const T* src = reinterpret_cast<const T*>(in);
  T* dst = reinterpret_cast<T*>(out);
  if (!has_fill) {
    for (int64_t i = 0; i < count; ++i) dst[i] = src[table[i]];
    return;
  }
  T fill;
  std::memcpy(&fill, &fill_bits, sizeof(T));
  for (int64_t i = 0; i < count; ++i) {
    dst[i] = table[i] == AxisMapCopy::kFill ? fill : src[table[i]];
  }
}

}  // namespace

AxisMapCopy::AxisMapCopy(std::vector<std::vector<int64_t>> tables, size_t element_size,
                         uint64_t fill_bits)
    : tables_(std::move(tables)), element_size_(element_size), fill_bits_(fill_bits) {
  if (tables_.empty()) tables_.push_back({0});
  for (const auto& table : tables_) output_count_ *= static_cast<int64_t>(table.size());
  merge_small_trailing_axes();
  const std::vector<int64_t>& row = tables_.back();
  row_length_ = static_cast<int64_t>(row.size());
  row_count_ = row_length_ == 0 ? 0 : output_count_ / row_length_;
  row_has_fill_ = std::find(row.begin(), row.end(), kFill) != row.end();
  row_contiguous_ = !row_has_fill_;
  for (size_t i = 1; i < row.size() && row_contiguous_; ++i) {
    row_contiguous_ = row[i] == row[0] + static_cast<int64_t>(i);
  }
}

void AxisMapCopy::merge_small_trailing_axes() {
  while (tables_.size() >= 2) {
    const auto& inner = tables_.back();
    const auto& outer = tables_[tables_.size() - 2];
    if (inner.size() >= kMinRowLength || inner.size() * outer.size() > kMaxMergedTable) return;
    std::vector<int64_t> merged = merge_tables(outer, inner);
    tables_.pop_back();
    tables_.back() = std::move(merged);
  }
}

void AxisMapCopy::run(const std::byte* in, std::byte* out, ThreadPool& threads,
                      const void* fill) const {
  uint64_t fill_bits = fill_bits_;
  if (fill != nullptr) std::memcpy(&fill_bits, fill, element_size_);
  if (row_count_ == 0) return;
  const int64_t min_rows = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, row_length_));
  threads.parallel_for(row_count_, min_rows, [&](int64_t begin, int64_t end) {
    run_rows(in, out, fill_bits, begin, end);
  });
}

void AxisMapCopy::run_rows(const std::byte* in, std::byte* out, uint64_t fill, int64_t first_row,
                           int64_t end_row) const {
  const size_t outer_rank = tables_.size() - 1;
  int64_t index[16] = {};
  int64_t rest = first_row;
  for (size_t k = outer_rank; k-- > 0;) {
    const auto size = static_cast<int64_t>(tables_[k].size());
    index[k] = rest % size;
    rest /= size;
  }
  const auto element = static_cast<int64_t>(element_size_);
  const int64_t* row_table = tables_.back().data();
  for (int64_t row = first_row; row < end_row; ++row) {
    int64_t base = 0;
    bool fill_row = false;
    for (size_t k = 0; k < outer_rank; ++k) {
      const int64_t offset = tables_[k][static_cast<size_t>(index[k])];
      fill_row = fill_row || offset == kFill;
      base += offset;
    }
    std::byte* dst = out + row * row_length_ * element;
    if (fill_row) {
      fill_elements(dst, row_length_, element_size_, &fill);
    } else if (row_contiguous_) {
      std::memcpy(dst, in + (base + row_table[0]) * element,
                  static_cast<size_t>(row_length_ * element));
    } else {
      const std::byte* src = in + base * element;
      dispatch_element_size(element_size_, [&](auto tag) {
        gather_row<decltype(tag)>(src, row_table, row_length_, dst, fill, row_has_fill_);
      });
    }
    for (size_t k = outer_rank; k-- > 0;) {
      if (++index[k] < static_cast<int64_t>(tables_[k].size())) break;
      index[k] = 0;
    }
  }
}

Status AxisMapKernel::run(const RunContext& context) {
  const void* fill = nullptr;
  const auto fill_index = static_cast<size_t>(fill_input_);
  if (fill_input_ >= 0 && fill_index < context.inputs.size() &&
      context.inputs[fill_index].data != nullptr &&
      context.inputs[fill_index].shape.element_count() > 0) {
    fill = context.inputs[fill_index].data;
  }
  copy_.run(static_cast<const std::byte*>(context.inputs[0].data),
            static_cast<std::byte*>(context.outputs[0].data), *context.threads, fill);
  return Status::ok();
}

}  // namespace onepool::cpu::data
