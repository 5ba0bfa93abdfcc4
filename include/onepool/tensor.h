// Element types, shapes, devices and the non-owning TensorView that crosses the API.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include "onepool/status.h"

namespace onepool {

/// Element type. Values equal ONNX TensorProto.DataType so import needs no table.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,  // never supported as a tensor dtype; listed so errors can name it
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// Bytes per element; 0 for kUndefined and kString.
size_t dtype_size(DType dtype);
/// "float32", "int64", ...; "dtype(N)" for codes OnePool does not know.
std::string dtype_name(DType dtype);
/// True for the dtypes a tensor may hold in OnePool (everything but undefined and string).
bool dtype_is_supported(DType dtype);
/// Parses "float32", "float", "int64", ... Returns kUndefined when unknown.
DType dtype_from_name(const std::string& name);

/// A static shape of at most kMaxRank dims. A value type: copying never allocates.
class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  /// Fails when dims.size() > kMaxRank or a dim is negative.
  static Expected<Shape> from_dims(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int64_t operator[](int axis) const { return dims_[static_cast<size_t>(axis)]; }
  int64_t& operator[](int axis) { return dims_[static_cast<size_t>(axis)]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }
  std::span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }
  /// Appends a dim; returns false when the rank would exceed kMaxRank.
  bool push_back(int64_t dim);

  /// Product of the dims (1 for rank 0). Only valid when element_count_checked() succeeded.
  int64_t element_count() const;
  /// Product of the dims with overflow and negative-dim checks.
  Expected<int64_t> element_count_checked() const;
  /// "[1,3,224,224]"
  std::string to_string() const;

  friend bool operator==(const Shape& a, const Shape& b);

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

/// Bytes of a tensor of `shape` and `dtype`, overflow-checked.
Expected<size_t> tensor_bytes(const Shape& shape, DType dtype);

/// Where memory lives.
enum class DeviceKind : uint8_t { kCpu = 0, kCuda = 1 };
struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  /// "cpu" or "cuda:0".
  std::string to_string() const;
  /// Parses "cpu", "cuda", "cuda:N".
  static Expected<Device> parse(const std::string& text);
  friend bool operator==(const Device& a, const Device& b) = default;
};

/// A non-owning view of a tensor: the caller keeps `data` alive. Thread-compatible value type.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kUndefined;
  Shape shape;
  Device device;

  size_t bytes() const { return static_cast<size_t>(shape.element_count()) * dtype_size(dtype); }
  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

}  // namespace onepool
