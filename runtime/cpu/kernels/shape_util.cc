#include "runtime/cpu/kernels/shape_util.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "runtime/cpu/half_convert.h"

namespace onepool::cpu::data {

Expected<int> normalize_axis(const NodeContext& node, int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    return node.error(StatusCode::kInvalidModel, what, " ", axis, " is out of range for rank ",
                      rank, " (expected [", -rank, ", ", rank, "))");
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Expected<size_t> movable_element_size(const NodeContext& node, DType dtype) {
  const size_t size = dtype_size(dtype);
  if (size == 1 || size == 2 || size == 4 || size == 8) return size;
  return node.error(StatusCode::kUnsupported, "dtype ", dtype_name(dtype),
                    " is not supported (expected an element of 1, 2, 4 or 8 bytes)");
}

std::vector<int64_t> host_ints(const HostTensor& tensor) {
  std::vector<int64_t> values(static_cast<size_t>(tensor.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = tensor.int_at(static_cast<int64_t>(i));
  return values;
}

Expected<std::optional<std::vector<int64_t>>> ints_from_input_or_attribute(const NodeContext& node,
                                                                           size_t index,
                                                                           const char* name) {
  if (node.has_input(index)) {
    const HostTensor* constant = node.constant_input(index);
    if (constant == nullptr) {
      return node.error(StatusCode::kUnsupported, "input ", index, " ('", node.input(index).name,
                        "', ", name, ") must be a constant (weight) for the CPU kernel");
    }
    return std::optional<std::vector<int64_t>>(host_ints(*constant));
  }
  if (node.node().attributes.has(name)) {
    return std::optional<std::vector<int64_t>>(node.node().attributes.get_ints(name));
  }
  return std::optional<std::vector<int64_t>>();
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()), 1);
  for (int axis = shape.rank() - 2; axis >= 0; --axis) {
    strides[static_cast<size_t>(axis)] = strides[static_cast<size_t>(axis) + 1] * shape[axis + 1];
  }
  return strides;
}

Expected<int64_t> checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return make_status(StatusCode::kOutOfRange, what, ": ", a, " * ", b, " overflows int64");
  }
  return product;
}

void parallel_copy(const void* src, void* dst, size_t bytes, ThreadPool& threads) {
  if (src == dst || bytes == 0) return;
  constexpr int64_t kChunk = 1 << 16;  // below this a thread hand-off costs more than the copy
  const auto* from = static_cast<const std::byte*>(src);
  auto* to = static_cast<std::byte*>(dst);
  threads.parallel_for(static_cast<int64_t>(bytes), kChunk, [&](int64_t begin, int64_t end) {
    std::memcpy(to + begin, from + begin, static_cast<size_t>(end - begin));
  });
}

void fill_elements(std::byte* dst, int64_t count, size_t element_size, const void* value) {
  if (count <= 0) return;
  std::memcpy(dst, value, element_size);
  // Doubling copies: log2(count) memcpy calls instead of one per element.
  int64_t filled = 1;
  while (filled < count) {
    const int64_t chunk = std::min(filled, count - filled);
    std::memcpy(dst + filled * static_cast<int64_t>(element_size), dst,
                static_cast<size_t>(chunk) * element_size);
    filled += chunk;
  }
}

uint64_t element_bits(DType dtype, double value) {
  uint64_t bits = 0;
  auto store = [&bits](auto typed) { std::memcpy(&bits, &typed, sizeof(typed)); };
  switch (dtype) {
    case DType::kFloat32:
      store(static_cast<float>(value));
      break;
    case DType::kFloat64:
      store(value);
      break;
    case DType::kFloat16:
      store(float_to_half_bits(static_cast<float>(value)));
      break;
    case DType::kBFloat16:
      store(float_to_bfloat_bits(static_cast<float>(value)));
      break;
    case DType::kInt8:
      store(static_cast<int8_t>(value));
      break;
    case DType::kUInt8:
      store(static_cast<uint8_t>(value));
      break;
    case DType::kInt16:
      store(static_cast<int16_t>(value));
      break;
    case DType::kUInt16:
      store(static_cast<uint16_t>(value));
      break;
    case DType::kInt32:
      store(static_cast<int32_t>(value));
      break;
    case DType::kUInt32:
      store(static_cast<uint32_t>(value));
      break;
    case DType::kInt64:
      store(static_cast<int64_t>(value));
      break;
    case DType::kUInt64:
      store(static_cast<uint64_t>(value));
      break;
    case DType::kBool:
      store(static_cast<uint8_t>(value != 0.0));
      break;
    default:
      break;
  }
  return bits;
}

namespace {
class ConstantBytesKernel final : public Kernel {
 public:
  explicit ConstantBytesKernel(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  Status run(const RunContext& context) override {
    if (!bytes_.empty()) std::memcpy(context.outputs[0].data, bytes_.data(), bytes_.size());
    return Status::ok();
  }

 private:
  std::vector<std::byte> bytes_;
};
}  // namespace

std::unique_ptr<Kernel> make_constant_bytes_kernel(std::vector<std::byte> bytes) {
  return std::make_unique<ConstantBytesKernel>(std::move(bytes));
}

std::vector<std::byte> int64_bytes(const std::vector<int64_t>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

Status check_output_count(const NodeContext& node, size_t index, int64_t expected) {
  if (!node.has_output(index)) {
    return node.error(StatusCode::kInvalidModel, "output ", index, " is missing");
  }
  const Value& output = node.output(index);
  if (output.shape.element_count() != expected) {
    return node.error(StatusCode::kInvalidModel, "output '", output.name, "': expected ", expected,
                      " elements, got shape ", output.shape.to_string());
  }
  return Status::ok();
}

}  // namespace onepool::cpu::data
