// The Reduce* operators as policies: init (the value of an empty reduction), step (fold one
// input), combine (merge two partial results, for multi-lane loops) and finish (count = inputs
// folded). ReduceLogSumExp needs two passes and lives in reduce.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "runtime/cpu/kernels/nan_order.h"

namespace onepool::cpu::reduce_ops {

template <class T>
T abs_value(T x) {
  return x < T{0} ? static_cast<T>(-x) : x;
}

template <class T>
struct Sum {
  static T init() { return T{0}; }
  static T step(T acc, T x) { return acc + x; }
  static T combine(T a, T b) { return a + b; }
  static T finish(T acc, int64_t) { return acc; }
};

template <class T>
struct Mean : Sum<T> {
  // An integer mean of zero inputs is 0 rather than a division by zero.
  static T finish(T acc, int64_t count) {
    if (count == 0 && !std::is_floating_point_v<T>) return T{0};
    return static_cast<T>(acc / static_cast<T>(count));
  }
};

template <class T>
struct Max {
  static T init() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  }
  static T step(T acc, T x) { return nan_max(acc, x); }
  static T combine(T a, T b) { return step(a, b); }
  static T finish(T acc, int64_t) { return acc; }
};

template <class T>
struct Min {
  static T init() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  }
  static T step(T acc, T x) { return nan_min(acc, x); }
  static T combine(T a, T b) { return step(a, b); }
  static T finish(T acc, int64_t) { return acc; }
};

template <class T>
struct Prod {
  static T init() { return T{1}; }
  static T step(T acc, T x) { return acc * x; }
  static T combine(T a, T b) { return a * b; }
  static T finish(T acc, int64_t) { return acc; }
};

template <class T>
struct L1 : Sum<T> {
  static T step(T acc, T x) { return acc + abs_value(x); }
};

template <class T>
struct SumSquare : Sum<T> {
  static T step(T acc, T x) { return acc + x * x; }
};

template <class T>
struct L2 : SumSquare<T> {
  static T finish(T acc, int64_t) { return std::sqrt(acc); }
};

template <class T>
struct LogSum : Sum<T> {
  static T finish(T acc, int64_t) { return std::log(acc); }
};

}  // namespace onepool::cpu::reduce_ops
