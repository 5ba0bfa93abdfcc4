// CPU Reduce* kernels (ReduceSum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp)
// over the loop plans of reduce_layout.h, parallel over output elements; and the registration of
// the reduction family (Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/reduce_family.h"
#include "runtime/cpu/kernels/reduce_layout.h"
#include "runtime/cpu/kernels/reduce_ops.h"

namespace onepool::cpu {
namespace {

// Work per parallel chunk, in input elements: below this, splitting costs more than it saves.
constexpr int64_t kMinChunkElements = 1 << 15;
// Columns per work item of the column path.
constexpr int64_t kColumnBlock = 256;

int64_t min_chunk_for(int64_t elements_per_item) {
  return std::max<int64_t>(1, kMinChunkElements / std::max<int64_t>(1, elements_per_item));
}

// Folds n contiguous inputs with 8 independent accumulators so the compiler can vectorize.
template <class T, class Op>
T fold_contiguous(const T* x, int64_t n) {
  constexpr int kLanes = 8;
  T lanes[kLanes];
  for (T& lane : lanes) lane = Op::init();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = Op::step(lanes[l], x[i + l]);
  }
  T acc = lanes[0];
  for (int l = 1; l < kLanes; ++l) acc = Op::combine(acc, lanes[l]);
  for (; i < n; ++i) acc = Op::step(acc, x[i]);
  return acc;
}

// Calls fn(value) for every input of one output, given the input at the output's kept offset.
template <class T, class Fn>
void visit_reduced(const T* x, const AxisGroup& group, const Fn& fn) {
  if (group.rank == 0) {
    fn(x[0]);
    return;
  }
  const int last = group.rank - 1;
  const int64_t n = group.dims[static_cast<size_t>(last)];
  const int64_t stride = group.strides[static_cast<size_t>(last)];
  std::array<int64_t, Shape::kMaxRank> index{};
  int64_t offset = 0;
  for (;;) {
    for (int64_t i = 0; i < n; ++i) fn(x[offset + i * stride]);
    int axis = last - 1;
    for (; axis >= 0; --axis) {
      const auto a = static_cast<size_t>(axis);
      ++index[a];
      offset += group.strides[a];
      if (index[a] < group.dims[a]) break;
      offset -= group.strides[a] * index[a];
      index[a] = 0;
    }
    if (axis < 0) return;
  }
}

// Input offset of output element `o` from the kept dims.
int64_t kept_offset(const AxisGroup& kept, int64_t o) {
  int64_t offset = 0;
  for (int axis = kept.rank - 1; axis >= 0; --axis) {
    const auto a = static_cast<size_t>(axis);
    offset += (o % kept.dims[a]) * kept.strides[a];
    o /= kept.dims[a];
  }
  return offset;
}

template <class T, class Op>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(ReduceLayout layout) : layout_(layout) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    switch (layout_.path) {
      case ReducePath::kCopy:
        std::copy(x, x + layout_.output_count, y);
        break;
      case ReducePath::kInner:
        run_inner(x, y, *context.threads);
        break;
      case ReducePath::kColumn:
        run_column(x, y, *context.threads);
        break;
      case ReducePath::kGeneral:
        run_general(x, y, *context.threads);
        break;
    }
    return Status::ok();
  }

 private:
  void run_inner(const T* x, T* y, ThreadPool& threads) const {
    const int64_t n = layout_.reduce_count;
    threads.parallel_for(layout_.outer, min_chunk_for(n), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o)
        y[o] = Op::finish(fold_contiguous<T, Op>(x + o * n, n), n);
    });
  }

  // Each work item is one block of up to kColumnBlock columns of one outer slice.
  void run_column(const T* x, T* y, ThreadPool& threads) const {
    const int64_t rows = layout_.reduce_count;
    const int64_t columns = layout_.inner;
    const int64_t blocks = (columns + kColumnBlock - 1) / kColumnBlock;
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t o = item / blocks;
        const int64_t first = (item % blocks) * kColumnBlock;
        const int64_t last = std::min(columns, first + kColumnBlock);
        T* y_row = y + o * columns;
        const T* x_slice = x + o * rows * columns;
        for (int64_t j = first; j < last; ++j) y_row[j] = Op::init();
        for (int64_t r = 0; r < rows; ++r) {
          const T* x_row = x_slice + r * columns;
          for (int64_t j = first; j < last; ++j) y_row[j] = Op::step(y_row[j], x_row[j]);
        }
        for (int64_t j = first; j < last; ++j) y_row[j] = Op::finish(y_row[j], rows);
      }
    };
    threads.parallel_for(layout_.outer * blocks, min_chunk_for(rows * kColumnBlock), body);
  }

  void run_general(const T* x, T* y, ThreadPool& threads) const {
    const int64_t n = layout_.reduce_count;
    threads.parallel_for(layout_.output_count, min_chunk_for(n), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        T acc = Op::init();
        visit_reduced(x + kept_offset(layout_.kept, o), layout_.reduced,
                      [&acc](T value) { acc = Op::step(acc, value); });
        y[o] = Op::finish(acc, n);
      }
    });
  }

  ReduceLayout layout_;
};

// log(sum(exp(x))) computed as max + log(sum(exp(x - max))) so large inputs do not overflow.
template <class T>
class ReduceLogSumExpKernel final : public Kernel {
 public:
  explicit ReduceLogSumExpKernel(ReduceLayout layout) : layout_(layout) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    T* y = context.outputs[0].as<T>();
    if (layout_.path == ReducePath::kCopy) {
      std::copy(x, x + layout_.output_count, y);
      return Status::ok();
    }
    if (layout_.reduce_count == 0) {
      std::fill(y, y + layout_.output_count, -std::numeric_limits<T>::infinity());
      return Status::ok();
    }
    context.threads->parallel_for(layout_.output_count, min_chunk_for(2 * layout_.reduce_count),
                                  [&](int64_t begin, int64_t end) {
                                    for (int64_t o = begin; o < end; ++o)
                                      y[o] = reduce_one(x + kept_offset(layout_.kept, o));
                                  });
    return Status::ok();
  }

 private:
  T reduce_one(const T* x) const {
    T max = -std::numeric_limits<T>::infinity();
    visit_reduced(x, layout_.reduced, [&max](T value) { max = value > max ? value : max; });
    if (std::isinf(max)) return max;  // all -inf gives -inf; any +inf gives +inf
    T sum = 0;
    visit_reduced(x, layout_.reduced, [&](T value) { sum += std::exp(value - max); });
    return max + std::log(sum);
  }

  ReduceLayout layout_;
};

enum class DTypes : uint8_t { kAll, kFloatOnly };

template <template <class> class Op>
Expected<PreparedKernel> make_reduce(const NodeContext& node, DTypes dtypes) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "input 0 and output 0 are required");
  }
  const DType dtype = node.input(0).dtype;
  if (node.output(0).dtype != dtype) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "': expected ",
                      dtype_name(dtype), " like input '", node.input(0).name, "', got ",
                      dtype_name(node.output(0).dtype));
  }
  ONEPOOL_ASSIGN_OR_RETURN(const ReduceLayout layout, plan_reduce(node));
  PreparedKernel result;
  const bool integers = dtypes == DTypes::kAll;
  if (dtype == DType::kFloat32) result.kernel = std::make_unique<Op<float>>(layout);
  if (dtype == DType::kFloat64) result.kernel = std::make_unique<Op<double>>(layout);
  if (integers && dtype == DType::kInt32) result.kernel = std::make_unique<Op<int32_t>>(layout);
  if (integers && dtype == DType::kInt64) result.kernel = std::make_unique<Op<int64_t>>(layout);
  if (result.kernel == nullptr) {
    return node.error(StatusCode::kUnsupported, "input '", node.input(0).name, "': dtype ",
                      dtype_name(dtype), " is not supported by the CPU kernel");
  }
  return result;
}

template <template <class> class Policy>
struct WithPolicy {
  template <class T>
  using Kernel = ReduceKernel<T, Policy<T>>;
};

template <template <class> class Policy, DTypes kDTypes>
Expected<PreparedKernel> reduce_factory(const NodeContext& node) {
  return make_reduce<WithPolicy<Policy>::template Kernel>(node, kDTypes);
}

Expected<PreparedKernel> log_sum_exp_factory(const NodeContext& node) {
  return make_reduce<ReduceLogSumExpKernel>(node, DTypes::kFloatOnly);
}

}  // namespace

void register_reduce_kernels(KernelRegistry& registry) {
  using namespace reduce_ops;
  registry.add("ReduceSum", &reduce_factory<Sum, DTypes::kAll>);
  registry.add("ReduceMean", &reduce_factory<Mean, DTypes::kAll>);
  registry.add("ReduceMax", &reduce_factory<Max, DTypes::kAll>);
  registry.add("ReduceMin", &reduce_factory<Min, DTypes::kAll>);
  registry.add("ReduceProd", &reduce_factory<Prod, DTypes::kAll>);
  registry.add("ReduceL1", &reduce_factory<L1, DTypes::kAll>);
  registry.add("ReduceSumSquare", &reduce_factory<SumSquare, DTypes::kAll>);
  registry.add("ReduceL2", &reduce_factory<L2, DTypes::kFloatOnly>);
  registry.add("ReduceLogSum", &reduce_factory<LogSum, DTypes::kFloatOnly>);
  registry.add("ReduceLogSumExp", &log_sum_exp_factory);
  register_arg_kernels(registry);
  register_softmax_kernels(registry);
}

}  // namespace onepool::cpu
