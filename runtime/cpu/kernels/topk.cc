// CPU TopK: the K largest (largest=1) or smallest elements along one axis, and their int64
// indices. K is input 1 (opset 10+; a constant, or a shape input bound at load) or the `k`
// attribute (opset 1); a runtime K is read and checked against the declared output. Outputs
// planned at a --bound (Value::bound: K known only at run time) take any K up to the bound: the
// run writes [.., K, ..] densely from the start and reports that shape (a data-dependent
// kernel); a K beyond the bound or the axis is an error naming both.
//
// Order, as the ONNX spec and ONNX Runtime have it: by value (descending for largest), equal
// values by lower index first. NaN ranks above every number (ORT, and numpy's sort puts it last
// ascending): first for largest=1, last for largest=0; NaNs among themselves by lower index.
// sorted=0 leaves the order unspecified; this kernel returns the sorted order then too.
// Per slice (outer, inner): a partial sort of the slice's indices in the workspace (dim int64),
// O(dim log K); slices run one after another (TopK is rarely hot).
#include <algorithm>
#include <memory>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/reduce_layout.h"

namespace onepool::cpu {
namespace {

// NaN ranks above every number.
template <class T>
bool ranks_above(T a, T b) {
  if (a != a) return b == b;
  return a > b;
}

template <class T>
class TopKKernel final : public Kernel {
 public:
  TopKKernel(AxisSplit split, int axis, int64_t k, bool k_constant, bool bounded, bool largest,
             std::string node)
      : split_(split),
        axis_(axis),
        k_(k),
        k_bound_(k),
        k_constant_(k_constant),
        bounded_(bounded),
        largest_(largest),
        node_(std::move(node)) {}

  Status run(const RunContext& context) override {
    if (bounded_) {
      ONEPOOL_RETURN_IF_ERROR(take_runtime_k(context));
    } else if (!k_constant_) {
      ONEPOOL_RETURN_IF_ERROR(check_runtime_k(context.inputs[1]));
    }
    const T* x = context.inputs[0].as<const T>();
    T* values = context.outputs[0].as<T>();
    int64_t* indices = context.outputs.size() > 1 ? context.outputs[1].as<int64_t>() : nullptr;
    auto* order = reinterpret_cast<int64_t*>(context.workspace);
    for (int64_t o = 0; o < split_.outer; ++o) {
      for (int64_t i = 0; i < split_.inner; ++i) {
        const T* in = x + o * split_.dim * split_.inner + i;
        const int64_t out = o * k_ * split_.inner + i;
        select(in, order);
        for (int64_t r = 0; r < k_; ++r) {
          if (values != nullptr) values[out + r * split_.inner] = in[order[r] * split_.inner];
          if (indices != nullptr) indices[out + r * split_.inner] = order[r];
        }
      }
    }
    return Status::ok();
  }

 private:
  // The first k_ entries of `order` become the slice's top indices, in output order.
  void select(const T* in, int64_t* order) const {
    for (int64_t r = 0; r < split_.dim; ++r) order[r] = r;
    const int64_t stride = split_.inner;
    const bool largest = largest_;
    std::partial_sort(order, order + k_, order + split_.dim, [&](int64_t a, int64_t b) {
      const T va = in[a * stride];
      const T vb = in[b * stride];
      if (largest ? ranks_above(va, vb) : ranks_above(vb, va)) return true;
      if (largest ? ranks_above(vb, va) : ranks_above(va, vb)) return false;
      return a < b;  // equal values (or two NaNs): the lower index first
    });
  }

  static int64_t read_k(const TensorView& k) {
    return k.dtype == DType::kInt32 ? *k.as<const int32_t>() : *k.as<const int64_t>();
  }

  // Bounded outputs: K from input 1, at most the planned bound and the axis; the outputs' actual
  // shapes reported.
  Status take_runtime_k(const RunContext& context) {
    if (context.output_shapes == nullptr) {
      return make_status(StatusCode::kInternal, node_, ": run without RunContext::output_shapes");
    }
    const int64_t value = read_k(context.inputs[1]);
    if (value < 0 || value > split_.dim) {
      return make_status(StatusCode::kInvalidArgument, node_, ": input 1 (K) is ", value,
                         " at run time, outside [0, ", split_.dim, "] (the axis)");
    }
    if (value > k_bound_) {
      return make_status(StatusCode::kOutOfRange, node_, ": input 1 (K) is ", value,
                         " at run time, the outputs are planned for at most ", k_bound_,
                         " (--bound): give a larger --bound");
    }
    k_ = value;
    for (size_t i = 0; i < context.outputs.size(); ++i) {
      context.output_shapes[i] = context.outputs[i].shape;
      context.output_shapes[i][axis_] = value;
    }
    return Status::ok();
  }

  Status check_runtime_k(const TensorView& k) const {
    const int64_t value = read_k(k);
    if (value == k_) return Status::ok();
    return make_status(StatusCode::kInvalidArgument, node_, ": input 1 (K) is ", value,
                       " at run time, the declared output has ", k_, " along the axis");
  }

  AxisSplit split_;
  int axis_;
  int64_t k_;        // this run's K
  int64_t k_bound_;  // the planned K (bounded outputs: the most a run may take)
  bool k_constant_;
  bool bounded_;
  bool largest_;
  std::string node_;
};

struct TopKParameters {
  int axis = 0;
  int64_t k = 0;
  bool k_constant = true;
  bool bounded = false;  // outputs planned at a --bound: K read at run time
};

// K from the constant input 1, the opset-1 attribute, or (runtime K) the declared output.
Expected<TopKParameters> topk_parameters(const NodeContext& node) {
  TopKParameters parameters;
  const Shape& input = node.input(0).shape;
  ONEPOOL_ASSIGN_OR_RETURN(
      parameters.axis,
      normalize_axis(node, node.node().attributes.get_int("axis", -1), input.rank()));
  const int64_t dim = input[parameters.axis];
  if (node.has_input(1)) {
    const Value& k = node.input(1);
    if ((k.dtype != DType::kInt64 && k.dtype != DType::kInt32) || k.shape.element_count() != 1) {
      return node.error(StatusCode::kInvalidModel, "input 1 (K) '", k.name,
                        "': expected one int64, got ", dtype_name(k.dtype), " ",
                        k.shape.to_string());
    }
    const HostTensor* constant = node.constant_input(1);
    parameters.bounded = !node.output(0).bound.empty();
    parameters.k_constant = constant != nullptr && !parameters.bounded;
    parameters.k =
        parameters.k_constant ? constant->int_at(0) : node.output(0).shape[parameters.axis];
  } else {
    parameters.k = node.node().attributes.get_int("k", -1);
  }
  if (parameters.k < 0 || parameters.k > dim) {
    return node.error(StatusCode::kInvalidModel, "K = ", parameters.k, " is outside [0, ", dim,
                      "] (input '", node.input(0).name, "' ", input.to_string(), ", axis ",
                      parameters.axis, ")");
  }
  return parameters;
}

Status check_topk_outputs(const NodeContext& node, const TopKParameters& parameters) {
  Shape expected = node.input(0).shape;
  expected[parameters.axis] = parameters.k;
  ONEPOOL_RETURN_IF_ERROR(check_output_shape(node, expected));
  if (node.output(0).dtype != node.input(0).dtype) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name,
                      "': expected dtype ", dtype_name(node.input(0).dtype), ", got ",
                      dtype_name(node.output(0).dtype));
  }
  if (!node.has_output(1)) return Status::ok();
  if (node.output(1).dtype != DType::kInt64 ||
      node.output(1).shape.dims().size() != expected.dims().size()) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(1).name,
                      "': expected int64 ", expected.to_string(), ", got ",
                      dtype_name(node.output(1).dtype), " ", node.output(1).shape.to_string());
  }
  for (int axis = 0; axis < expected.rank(); ++axis) {
    if (node.output(1).shape[axis] == expected[axis]) continue;
    return node.error(StatusCode::kInvalidModel, "output '", node.output(1).name, "': expected ",
                      expected.to_string(), ", got ", node.output(1).shape.to_string());
  }
  return Status::ok();
}

template <class T>
PreparedKernel prepared(const NodeContext& node, AxisSplit split,
                        const TopKParameters& parameters) {
  PreparedKernel result;
  const bool largest = node.node().attributes.get_int("largest", 1) != 0;
  result.kernel =
      std::make_unique<TopKKernel<T>>(split, parameters.axis, parameters.k, parameters.k_constant,
                                      parameters.bounded, largest, describe_node(node.node()));
  result.workspace_bytes = static_cast<size_t>(split.dim) * sizeof(int64_t);
  result.data_dependent_outputs = parameters.bounded;
  return result;
}

Expected<PreparedKernel> make_topk_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "input 0 and output 0 are required");
  }
  ONEPOOL_ASSIGN_OR_RETURN(const TopKParameters parameters, topk_parameters(node));
  ONEPOOL_RETURN_IF_ERROR(check_topk_outputs(node, parameters));
  ONEPOOL_ASSIGN_OR_RETURN(const AxisSplit split, split_at_axis(node, parameters.axis, false));
  switch (node.input(0).dtype) {
    case DType::kFloat32:
      return prepared<float>(node, split, parameters);
    case DType::kFloat64:
      return prepared<double>(node, split, parameters);
    case DType::kInt32:
      return prepared<int32_t>(node, split, parameters);
    case DType::kInt64:
      return prepared<int64_t>(node, split, parameters);
    default:
      return node.error(StatusCode::kUnsupported, "input '", node.input(0).name, "': dtype ",
                        dtype_name(node.input(0).dtype),
                        " is not supported by the CPU kernel (float32, float64, int32, int64)");
  }
}

}  // namespace

void register_topk_kernel(KernelRegistry& registry) { registry.add("TopK", &make_topk_kernel); }

}  // namespace onepool::cpu
