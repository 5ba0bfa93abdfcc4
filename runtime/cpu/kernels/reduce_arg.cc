// CPU ArgMax / ArgMin: the int64 index of the largest (smallest) element along one axis; the
// first such index, or the last with select_last_index=1. Parallel over output elements.
#include <algorithm>
#include <memory>

#include "runtime/cpu/kernels/reduce_family.h"
#include "runtime/cpu/kernels/reduce_layout.h"

namespace onepool::cpu {
namespace {

template <class T, bool kMax>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(AxisSplit split, bool select_last) : split_(split), select_last_(select_last) {}

  Status run(const RunContext& context) override {
    const T* x = context.inputs[0].as<const T>();
    int64_t* y = context.outputs[0].as<int64_t>();
    const int64_t min_chunk = std::max<int64_t>(1, (int64_t{1} << 15) / split_.dim);
    context.threads->parallel_for(split_.outer * split_.inner, min_chunk,
                                  [&](int64_t begin, int64_t end) {
                                    for (int64_t item = begin; item < end; ++item) {
                                      y[item] = arg_of(x, item);
                                    }
                                  });
    return Status::ok();
  }

 private:
  // Output `item` is (outer o, inner i); its inputs start at o*dim*inner + i, stride inner.
  int64_t arg_of(const T* x, int64_t item) const {
    const int64_t o = item / split_.inner;
    const int64_t i = item % split_.inner;
    const T* base = x + o * split_.dim * split_.inner + i;
    T best = base[0];
    int64_t best_index = 0;
    for (int64_t r = 1; r < split_.dim; ++r) {
      const T value = base[r * split_.inner];
      // NaN ranks above every number for both ArgMax and ArgMin (numpy's argmax / argmin): the
      // first NaN wins, or the last one with select_last_index.
      if (best != best && !(select_last_ && value != value)) continue;
      const bool better = value != value || (kMax ? value > best : value < best);
      if (better || (select_last_ && value == best)) {
        best = value;
        best_index = r;
      }
    }
    return best_index;
  }

  AxisSplit split_;
  bool select_last_;
};

Shape arg_output_shape(const Shape& input, int axis, bool keepdims) {
  Shape out;
  for (int i = 0; i < input.rank(); ++i) {
    if (i != axis) out.push_back(input[i]);
    if (i == axis && keepdims) out.push_back(1);
  }
  return out;
}

Status check_arg_node(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "input 0 and output 0 are required");
  }
  if (node.output(0).dtype != DType::kInt64) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected int64, got ", dtype_name(node.output(0).dtype));
  }
  return Status::ok();
}

template <class T, bool kMax>
PreparedKernel prepared(AxisSplit split, bool select_last) {
  PreparedKernel result;
  result.kernel = std::make_unique<ArgKernel<T, kMax>>(split, select_last);
  return result;
}

template <bool kMax>
Expected<PreparedKernel> make_arg_kernel(const NodeContext& node) {
  ONEPOOL_RETURN_IF_ERROR(check_arg_node(node));
  const AttributeMap& attributes = node.node().attributes;
  const Shape& input = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(const int axis,
                           normalize_axis(node, attributes.get_int("axis", 0), input.rank()));
  const bool keepdims = attributes.get_int("keepdims", 1) != 0;
  const bool select_last = attributes.get_int("select_last_index", 0) != 0;
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, arg_output_shape(input, axis, keepdims)));
  ONEPOOL_ASSIGN_OR_RETURN(const AxisSplit split, split_at_axis(node, axis, false));
  if (split.dim == 0) {
    return node.error(StatusCode::kInvalidModel, "input '", node.input(0).name, "' ",
                      input.to_string(), " has no elements along axis ", axis);
  }
  switch (node.input(0).dtype) {
    case DType::kFloat32:
      return prepared<float, kMax>(split, select_last);
    case DType::kFloat64:
      return prepared<double, kMax>(split, select_last);
    case DType::kInt32:
      return prepared<int32_t, kMax>(split, select_last);
    case DType::kInt64:
      return prepared<int64_t, kMax>(split, select_last);
    default:
      return node.error(StatusCode::kUnsupported, "input '", node.input(0).name, "': dtype ",
                        dtype_name(node.input(0).dtype), " is not supported by the CPU kernel");
  }
}

}  // namespace

void register_arg_kernels(KernelRegistry& registry) {
  registry.add("ArgMax", &make_arg_kernel<true>);
  registry.add("ArgMin", &make_arg_kernel<false>);
}

}  // namespace onepool::cpu
