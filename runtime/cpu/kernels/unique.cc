// CPU Unique: the distinct values of X (no axis: X flattened) or the distinct slices of X along
// `axis`, with indices (first occurrence), inverse_indices (for every element or slice, its
// position in Y) and counts. Outputs 1-3 are optional. The importer plans Y, indices and counts
// at the bound numel(X) (or dim[axis]); run() writes them densely with the actual count along the
// axis, checks that count against each view's bound, and reports the actual shapes.
//
// Order, as the ONNX spec and ONNX Runtime have it: sorted=1 ascending (slices compared element
// by element in row-major order of the slice, lexicographically); sorted=0 in order of first
// occurrence. Equal values keep the first occurrence's bits (so 0.0 and -0.0 are one value, shown
// as whichever came first).
// NaN: ONNX Runtime keys a std::map on the values, which NaN breaks (its result is unspecified);
// this kernel follows numpy's np.unique (equal_nan=True, what the ONNX reference runs): every NaN
// equals every other NaN, and NaN sorts after every number, so all NaNs become one value, last
// when sorted. The same element rule applies inside slices with an axis.
//
// Algorithm (O(n log n · slice) for n slices, no allocation): Step 1 sorts an index array in the
// workspace by (slice, index) with std::sort; Step 2 walks it to number the groups of equal
// slices (a group's first entry is its first occurrence, thanks to the index tie-break); Step 3
// gives each group its output position (the group number when sorted, else the order in which
// X's elements first reach it); Step 4 writes the outputs.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/bounded_output.h"
#include "runtime/cpu/kernels/reduce_layout.h"

namespace onepool::cpu {
namespace {

constexpr size_t kOutputs = 4;  // Y, indices, inverse_indices, counts

// Three-way comparison of two elements; NaN equals NaN and sorts after every number.
template <class T>
struct Ordered {
  using Storage = T;
  static int compare(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool a_nan = a != a;
      const bool b_nan = b != b;
      if (a_nan || b_nan) return static_cast<int>(a_nan) - static_cast<int>(b_nan);
    }
    return static_cast<int>(a > b) - static_cast<int>(a < b);
  }
};

// float16 (infinity 0x7c00) and bfloat16 (0x7f80) bits: sign and magnitude, so the magnitude
// orders each sign; -0 and +0 are equal.
template <uint16_t kInfinityBits>
struct HalfOrdered {
  using Storage = uint16_t;
  static int compare(uint16_t a, uint16_t b) { return Ordered<int32_t>::compare(key(a), key(b)); }
  static int32_t key(uint16_t bits) {
    const int32_t magnitude = bits & 0x7fff;
    if (magnitude > kInfinityBits) return 0x10000;  // NaN, above +infinity
    return (bits & 0x8000) != 0 ? -magnitude : magnitude;
  }
};

// Static parameters of one Unique node.
struct UniqueLayout {
  AxisSplit split;  // n = split.dim slices of outer × inner elements
  bool sorted = true;
  Shape y_actual;  // Y's actual shape, y_axis still to be set to the group count
  int y_axis = 0;
  std::array<bool, kOutputs> present{};
  std::array<std::string, kOutputs> names;
};

template <class Traits>
class UniqueKernel final : public Kernel {
  using T = typename Traits::Storage;

 public:
  UniqueKernel(UniqueLayout layout, std::string node)
      : layout_(std::move(layout)), node_(std::move(node)) {}

  Status run(const RunContext& context) override {
    ONEPOOL_RETURN_IF_ERROR(require_output_shapes(context, node_));
    const T* x = context.inputs[0].as<const T>();
    const int64_t n = layout_.split.dim;
    auto* order = reinterpret_cast<int64_t*>(context.workspace);
    int64_t* group_of = order + n;
    int64_t* position = group_of + n;
    int64_t* group_start = position + n;  // n + 1 entries
    // Step 1. Slices by value, equal ones by index.
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order, order + n, [&](int64_t a, int64_t b) {
      const int order_ab = compare_slices(x, a, b);
      return order_ab != 0 ? order_ab < 0 : a < b;
    });
    // Step 2. Groups of equal slices.
    int64_t groups = 0;
    for (int64_t k = 0; k < n; ++k) {
      if (k == 0 || compare_slices(x, order[k - 1], order[k]) != 0) group_start[groups++] = k;
      group_of[order[k]] = groups - 1;
    }
    group_start[groups] = n;
    // Step 3. Output positions.
    std::fill(position, position + groups, int64_t{-1});
    for (int64_t i = 0, next = 0; i < n; ++i) {
      int64_t& slot = position[group_of[i]];
      if (slot < 0) slot = layout_.sorted ? group_of[i] : next++;
    }
    // Step 4. Outputs.
    ONEPOOL_RETURN_IF_ERROR(report_shapes(context, groups));
    write_outputs(context, x, groups, order, group_start, position);
    write_inverse(context, group_of, position);
    return Status::ok();
  }

 private:
  // Lexicographic comparison of slices a and b (row-major order within the slice).
  int compare_slices(const T* x, int64_t a, int64_t b) const {
    const AxisSplit& s = layout_.split;
    for (int64_t o = 0; o < s.outer; ++o) {
      const T* pa = x + (o * s.dim + a) * s.inner;
      const T* pb = x + (o * s.dim + b) * s.inner;
      for (int64_t j = 0; j < s.inner; ++j) {
        const int order = Traits::compare(pa[j], pb[j]);
        if (order != 0) return order;
      }
    }
    return 0;
  }

  // Checks every present output's actual shape against its bound, then reports it.
  Status report_shapes(const RunContext& context, int64_t groups) const {
    Shape actual[kOutputs] = {layout_.y_actual, Shape{groups}, Shape{layout_.split.dim},
                              Shape{groups}};
    actual[0][layout_.y_axis] = groups;
    for (size_t i = 0; i < kOutputs; ++i) {
      if (!present(context, i)) continue;
      ONEPOOL_RETURN_IF_ERROR(
          check_within_bound(node_, layout_.names[i], context.outputs[i].shape, actual[i]));
    }
    for (size_t i = 0; i < kOutputs; ++i) {
      if (present(context, i)) context.output_shapes[i] = actual[i];
    }
    return Status::ok();
  }

  bool present(const RunContext& context, size_t i) const {
    return layout_.present[i] && i < context.outputs.size() && context.outputs[i].data != nullptr;
  }

  // Y, indices and counts: group g at position[g], its first occurrence order[group_start[g]].
  void write_outputs(const RunContext& context, const T* x, int64_t groups, const int64_t* order,
                     const int64_t* group_start, const int64_t* position) const {
    const AxisSplit& s = layout_.split;
    T* y = present(context, 0) ? context.outputs[0].as<T>() : nullptr;
    int64_t* indices = present(context, 1) ? context.outputs[1].as<int64_t>() : nullptr;
    int64_t* counts = present(context, 3) ? context.outputs[3].as<int64_t>() : nullptr;
    const size_t slice_bytes = static_cast<size_t>(s.inner) * sizeof(T);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t p = position[g];
      const int64_t first = order[group_start[g]];
      if (indices != nullptr) indices[p] = first;
      if (counts != nullptr) counts[p] = group_start[g + 1] - group_start[g];
      if (y == nullptr || slice_bytes == 0) continue;
      for (int64_t o = 0; o < s.outer; ++o) {
        std::memcpy(y + (o * groups + p) * s.inner, x + (o * s.dim + first) * s.inner, slice_bytes);
      }
    }
  }

  void write_inverse(const RunContext& context, const int64_t* group_of,
                     const int64_t* position) const {
    if (!present(context, 2)) return;
    int64_t* inverse = context.outputs[2].as<int64_t>();
    for (int64_t i = 0; i < layout_.split.dim; ++i) inverse[i] = position[group_of[i]];
  }

  UniqueLayout layout_;
  std::string node_;
};

// Every present output: Y in X's dtype with the bound's rank and non-axis dims; the rest 1-D int64.
Status check_unique_outputs(const NodeContext& node, const UniqueLayout& layout) {
  const Value& y = node.output(0);
  bool y_matches = y.dtype == node.input(0).dtype && y.shape.rank() == layout.y_actual.rank();
  for (int axis = 0; y_matches && axis < y.shape.rank(); ++axis) {
    y_matches = axis == layout.y_axis || y.shape[axis] == layout.y_actual[axis];
  }
  if (!y_matches) {
    Shape expected = layout.y_actual;
    expected[layout.y_axis] = layout.split.dim;
    return node.error(StatusCode::kInvalidModel, "output '", y.name, "': expected ",
                      dtype_name(node.input(0).dtype), " with a bound of ", expected.to_string(),
                      ", got ", dtype_name(y.dtype), " ", y.shape.to_string());
  }
  for (size_t i = 1; i < kOutputs; ++i) {
    if (!layout.present[i]) continue;
    const Value& output = node.output(i);
    if (output.dtype == DType::kInt64 && output.shape.rank() == 1) continue;
    return node.error(StatusCode::kInvalidModel, "output ", i, " '", output.name,
                      "': expected a 1-D int64 tensor, got ", dtype_name(output.dtype), " ",
                      output.shape.to_string());
  }
  return Status::ok();
}

Expected<UniqueLayout> unique_layout(const NodeContext& node) {
  const Shape& x = node.input(0).shape;
  const AttributeMap& attributes = node.node().attributes;
  UniqueLayout layout;
  layout.sorted = attributes.get_int("sorted", 1) != 0;
  if (attributes.has("axis")) {
    ONEPOOL_ASSIGN_OR_RETURN(layout.y_axis,
                             normalize_axis(node, attributes.get_int("axis", 0), x.rank()));
    ONEPOOL_ASSIGN_OR_RETURN(layout.split, split_at_axis(node, layout.y_axis, false));
    layout.y_actual = x;
  } else {
    ONEPOOL_ASSIGN_OR_RETURN(layout.split.dim, x.element_count_checked());
    layout.y_actual = Shape{0};
  }
  for (size_t i = 0; i < kOutputs; ++i) {
    layout.present[i] = node.has_output(i);
    if (layout.present[i]) layout.names[i] = node.output(i).name;
  }
  return layout;
}

template <class Traits>
Expected<PreparedKernel> unique_prepared(const NodeContext& node, UniqueLayout layout) {
  // order, group_of, position: n each; group_start: n + 1.
  const int64_t n = layout.split.dim;
  if (n > (std::numeric_limits<int64_t>::max() / 8 - 1) / 4) {
    return node.error(StatusCode::kOutOfRange, "input '", node.input(0).name, "': ", n,
                      " slices need more workspace than fits in int64");
  }
  PreparedKernel result;
  result.workspace_bytes = static_cast<size_t>(4 * n + 1) * sizeof(int64_t);
  result.kernel =
      std::make_unique<UniqueKernel<Traits>>(std::move(layout), describe_node(node.node()));
  result.data_dependent_outputs = true;
  return result;
}

Expected<PreparedKernel> make_unique_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "input 0 and output 0 (Y) are required");
  }
  ONEPOOL_ASSIGN_OR_RETURN(UniqueLayout layout, unique_layout(node));
  ONEPOOL_RETURN_IF_ERROR(check_unique_outputs(node, layout));
  switch (node.input(0).dtype) {
    case DType::kFloat32:
      return unique_prepared<Ordered<float>>(node, std::move(layout));
    case DType::kFloat64:
      return unique_prepared<Ordered<double>>(node, std::move(layout));
    case DType::kFloat16:
      return unique_prepared<HalfOrdered<0x7c00>>(node, std::move(layout));
    case DType::kBFloat16:
      return unique_prepared<HalfOrdered<0x7f80>>(node, std::move(layout));
    case DType::kInt8:
      return unique_prepared<Ordered<int8_t>>(node, std::move(layout));
    case DType::kBool:
    case DType::kUInt8:
      return unique_prepared<Ordered<uint8_t>>(node, std::move(layout));
    case DType::kInt16:
      return unique_prepared<Ordered<int16_t>>(node, std::move(layout));
    case DType::kUInt16:
      return unique_prepared<Ordered<uint16_t>>(node, std::move(layout));
    case DType::kInt32:
      return unique_prepared<Ordered<int32_t>>(node, std::move(layout));
    case DType::kUInt32:
      return unique_prepared<Ordered<uint32_t>>(node, std::move(layout));
    case DType::kInt64:
      return unique_prepared<Ordered<int64_t>>(node, std::move(layout));
    case DType::kUInt64:
      return unique_prepared<Ordered<uint64_t>>(node, std::move(layout));
    default:
      return node.error(StatusCode::kUnsupported, "input '", node.input(0).name, "': dtype ",
                        dtype_name(node.input(0).dtype), " is not supported by the CPU kernel");
  }
}

}  // namespace

void register_unique_kernel(KernelRegistry& registry) {
  registry.add("Unique", &make_unique_kernel);
}

}  // namespace onepool::cpu
