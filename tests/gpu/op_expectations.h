// Expected results for the ONNX semantics the CUDA backend once got wrong, as plain tables shared
// by every backend's tests: tests/gpu/expectations_test.cc checks the CPU kernels and the CUDA
// backend's host-side preparation against them on any machine, and tests/gpu/parity_test.cc runs
// the same cases on the device. A new case added here is checked everywhere at once.
#pragma once

#include <cstdint>
#include <limits>

#include "onepool/tensor.h"

namespace onepool::expectations {

// --- Mod -------------------------------------------------------------------------------------
// fmod = 0 (integers only): the remainder takes the divisor's sign (Python / numpy).
// fmod = 1: it takes the dividend's sign (C fmod / %). A divisor of 0 or -1 gives 0 in OnePool
// (ONNX leaves division by zero undefined; INT64_MIN % -1 would trap).
struct IntModCase {
  int64_t a, b;
  int64_t fmod;
  int64_t expected;
};

inline constexpr IntModCase kIntModCases[] = {
    {7, 3, 0, 1},
    {-7, 3, 0, 2},
    {7, -3, 0, -2},
    {-7, -3, 0, -1},
    {6, -3, 0, 0},
    {-6, 3, 0, 0},
    {7, 3, 1, 1},
    {-7, 3, 1, -1},
    {7, -3, 1, 1},
    {-7, -3, 1, -1},
    {5, 0, 0, 0},
    {5, 0, 1, 0},
    {-5, -1, 0, 0},
    {-5, -1, 1, 0},
    {std::numeric_limits<int64_t>::min(), -1, 1, 0},
    {std::numeric_limits<int64_t>::min(), 3, 0, 1},  // -9223372036854775808 = 3 * q + 1
};

// Float Mod needs fmod = 1 (a model with fmod = 0 is refused when the Session is created).
// Values exact in binary, so every backend must match them exactly.
struct FloatModCase {
  float a, b;
  float expected;
};

inline constexpr FloatModCase kFloatModCases[] = {
    {5.5f, 2.0f, 1.5f},   {-5.5f, 2.0f, -1.5f},   {5.5f, -2.0f, 1.5f}, {-5.5f, -2.0f, -1.5f},
    {7.5f, 2.25f, 0.75f}, {-7.5f, 2.25f, -0.75f}, {0.0f, 3.0f, 0.0f},  {3.0f, 4.0f, 3.0f},
};

// --- ConvTranspose padding (one spatial axis) ------------------------------------------------
// full = stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1. With output_shape
// (which overrides `pads`) or SAME_*, total = max(0, full - out) is split: SAME_UPPER puts
// total / 2 at the beginning, NOTSET and SAME_LOWER put total - total / 2 there (ONNX spec,
// ConvTranspose). An output larger than `full` leaves bias-only cells at its end.
struct ConvTransposePadCase {
  const char* name;
  int64_t in, kernel, stride, dilation, output_padding;
  int64_t pad_begin_attr, pad_end_attr;  // the `pads` attribute; -1: absent
  const char* auto_pad;                  // "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"
  int64_t output_shape;                  // the `output_shape` attribute; 0: absent
  int64_t expected_out, expected_begin, expected_end;
};

inline constexpr ConvTransposePadCase kConvTransposePadCases[] = {
    // 3 -> full 7 with k3 s2; output_shape 6: total 1, all of it at the beginning.
    {"output_shape odd total", 3, 3, 2, 1, 0, -1, -1, "NOTSET", 6, 6, 1, 0},
    // 4 -> full 10 with k4 s2; output_shape 7: total 3 = 2 (begin) + 1 (end).
    {"output_shape total 3", 4, 4, 2, 1, 0, -1, -1, "NOTSET", 7, 7, 2, 1},
    // pads present but output_shape given: output_shape wins (pads 0, 0 ignored).
    {"output_shape over pads", 3, 3, 2, 1, 0, 0, 0, "NOTSET", 6, 6, 1, 0},
    // output_shape 8 > full 7: no padding, the last cell is bias only.
    {"output_shape larger", 3, 3, 2, 1, 0, -1, -1, "NOTSET", 8, 8, 0, 0},
    // dilation 2: span 5, full 8; output_shape 7: total 1 at the beginning.
    {"output_shape dilated", 4, 3, 1, 2, 0, -1, -1, "NOTSET", 7, 7, 1, 0},
    // SAME_UPPER: out = in * stride = 6, total 1 at the end.
    {"SAME_UPPER", 3, 3, 2, 1, 0, -1, -1, "SAME_UPPER", 0, 6, 0, 1},
    // SAME_LOWER: total 1 at the beginning.
    {"SAME_LOWER", 3, 3, 2, 1, 0, -1, -1, "SAME_LOWER", 0, 6, 1, 0},
    // Explicit pads: out = full - pads = 7 - 1.
    {"explicit pads", 3, 3, 2, 1, 0, 1, 0, "NOTSET", 0, 6, 1, 0},
    // output_padding 1 adds a cell at the end: full 8, pads 1 + 1 -> 6.
    {"output_padding", 3, 3, 2, 1, 1, 1, 1, "NOTSET", 0, 6, 1, 1},
};

// --- Where dtypes ----------------------------------------------------------------------------
// Where copies bits, so every dtype of 1, 2, 4 or 8 bytes is supported on every backend.
inline constexpr DType kWhereDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
    DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,    DType::kUInt32,
    DType::kInt64,   DType::kUInt64,  DType::kBool,
};

// --- ReduceMax / ReduceMin -------------------------------------------------------------------
// Start from -inf / +inf (so all -inf gives -inf, not -FLT_MAX) and propagate NaN.
struct ReduceExtremaCase {
  const char* name;
  float values[4];
  float expected_max, expected_min;  // NaN: expect NaN
};

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kFloatMax = std::numeric_limits<float>::max();

inline constexpr ReduceExtremaCase kReduceExtremaCases[] = {
    {"all -inf", {-kInf, -kInf, -kInf, -kInf}, -kInf, -kInf},
    {"all +inf", {kInf, kInf, kInf, kInf}, kInf, kInf},
    {"NaN first", {kNaN, 1.0f, 2.0f, 3.0f}, kNaN, kNaN},
    {"NaN last", {1.0f, 2.0f, 3.0f, kNaN}, kNaN, kNaN},
    {"float max and -inf", {-kFloatMax, -kInf, -kFloatMax, -kInf}, -kFloatMax, -kInf},
    {"ordinary", {-2.0f, 5.0f, 0.5f, -7.0f}, 5.0f, -7.0f},
};

}  // namespace onepool::expectations
