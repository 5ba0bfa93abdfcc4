// OneHot: output[..., j, ...] (j on `axis`) = on_value where j == indices[...] (a negative index
// counts from depth), else off_value. An index outside [-depth, depth) gives a row of off_value,
// as the spec says. The output's shape is fixed at prepare time, so `depth` (a runtime scalar of
// any numeric type, cast to int64) must equal the output's dim on `axis`: a different value is a
// kInvalidArgument naming both, never a write outside the output.
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"
#include "runtime/cpu/kernels/shape_util.h"

namespace onepool::cpu {
namespace {

// Element i of a numeric tensor as int64 (floats truncate toward zero, as a cast does; NaN and
// values beyond int64 become INT64_MIN, which no depth accepts).
int64_t int_value_at(const TensorView& view, int64_t i) {
  auto from_float = [](double v) {
    if (!(v > -9.2e18 && v < 9.2e18)) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(v);
  };
  switch (view.dtype) {
    case DType::kFloat32:
      return from_float(view.as<const float>()[i]);
    case DType::kFloat64:
      return from_float(view.as<const double>()[i]);
    case DType::kInt8:
      return view.as<const int8_t>()[i];
    case DType::kInt16:
      return view.as<const int16_t>()[i];
    case DType::kInt32:
      return view.as<const int32_t>()[i];
    case DType::kInt64:
      return view.as<const int64_t>()[i];
    case DType::kUInt8:
      return view.as<const uint8_t>()[i];
    case DType::kUInt16:
      return view.as<const uint16_t>()[i];
    case DType::kUInt32:
      return view.as<const uint32_t>()[i];
    case DType::kUInt64: {
      const uint64_t v = view.as<const uint64_t>()[i];
      return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::min()
                 : static_cast<int64_t>(v);
    }
    default:
      return std::numeric_limits<int64_t>::min();
  }
}

constexpr DTypeSet kIndexTypes = kNumericTypes;

template <class E>
class OneHotKernel final : public Kernel {
 public:
  OneHotKernel(std::string node, int64_t outer, int64_t depth, int64_t inner)
      : node_(std::move(node)), outer_(outer), depth_(depth), inner_(inner) {}

  Status run(const RunContext& context) override {
    const int64_t depth = int_value_at(context.inputs[1], 0);
    if (depth != depth_) {
      return make_status(StatusCode::kInvalidArgument, node_, ": depth ", depth,
                         " differs from the output's dim ", depth_, " on axis; the output ",
                         "shape is fixed when the session is created");
    }
    const TensorView& indices = context.inputs[0];
    const E* values = context.inputs[2].as<const E>();
    const E off = values[0];
    const E on = values[1];
    E* out = context.outputs[0].as<E>();
    context.threads->parallel_for(outer_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        E* block = out + o * depth_ * inner_;
        for (int64_t i = 0; i < depth_ * inner_; ++i) block[i] = off;
        for (int64_t i = 0; i < inner_; ++i) {
          int64_t index = int_value_at(indices, o * inner_ + i);
          if (index < 0 && index >= -depth_) index += depth_;
          if (index >= 0 && index < depth_) block[index * inner_ + i] = on;
        }
      }
    });
    return Status::ok();
  }

 private:
  std::string node_;
  int64_t outer_, depth_, inner_;
};

Expected<PreparedKernel> make_onehot_kernel(const NodeContext& node) {
  for (size_t i = 0; i < 3; ++i) {
    if (!node.has_input(i)) {
      return node.error(StatusCode::kInvalidModel, "input ", i,
                        " is required (indices, depth, values)");
    }
  }
  if (!node.has_output(0)) return node.error(StatusCode::kInvalidModel, "output 0 is required");
  const Value& indices = node.input(0);
  const Value& depth = node.input(1);
  const Value& values = node.input(2);
  for (const Value* v : {&indices, &depth}) {
    if ((kIndexTypes & dtype_bit(v->dtype)) == 0) {
      return node.error(StatusCode::kInvalidModel, "input '", v->name,
                        "': expected a numeric dtype, got ", dtype_name(v->dtype));
    }
  }
  if (depth.shape.element_count() != 1 || depth.shape.rank() > 1) {
    return node.error(StatusCode::kInvalidModel, "depth '", depth.name,
                      "': expected a scalar or one-element tensor, got ", depth.shape.to_string());
  }
  if (values.shape.element_count() != 2 || values.shape.rank() != 1) {
    return node.error(StatusCode::kInvalidModel, "values '", values.name,
                      "': expected shape [2] (off_value, on_value), got ",
                      values.shape.to_string());
  }
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, values.dtype));
  ONEPOOL_ASSIGN_OR_RETURN(size_t element_size, data::movable_element_size(node, values.dtype));
  const Shape& out = node.output(0).shape;
  const int out_rank = indices.shape.rank() + 1;
  ONEPOOL_ASSIGN_OR_RETURN(
      int axis,
      data::normalize_axis(node, node.node().attributes.get_int("axis", -1), out_rank, "axis"));
  // The output is indices' shape with the depth inserted at `axis`.
  bool shape_ok = out.rank() == out_rank;
  int64_t outer = 1, inner = 1;
  for (int a = 0, k = 0; shape_ok && a < out_rank; ++a) {
    if (a == axis) continue;
    shape_ok = out[a] == indices.shape[k++];
    (a < axis ? outer : inner) *= out[a];
  }
  if (!shape_ok) {
    return node.error(StatusCode::kInvalidModel, "output '", node.output(0).name, "' ",
                      out.to_string(), " must be indices ", indices.shape.to_string(),
                      " with the depth inserted at axis ", axis);
  }
  const int64_t depth_dim = out[axis];
  if (const HostTensor* constant = node.constant_input(1)) {
    const double value = constant->float_at(0);
    if (static_cast<double>(depth_dim) != std::trunc(value)) {
      return node.error(StatusCode::kInvalidModel, "depth ", value, " differs from the output's ",
                        "dim ", depth_dim, " on axis ", axis);
    }
  }
  std::string name = describe_node(node.node());
  PreparedKernel prepared;
  data::dispatch_element_size(element_size, [&](auto tag) {
    prepared.kernel =
        std::make_unique<OneHotKernel<decltype(tag)>>(std::move(name), outer, depth_dim, inner);
  });
  return prepared;
}

}  // namespace

void register_onehot_kernel(KernelRegistry& registry) {
  registry.add("OneHot", &make_onehot_kernel);
}

}  // namespace onepool::cpu
