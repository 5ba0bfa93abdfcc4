// Max and min that propagate NaN, as the ONNX reference (numpy's maximum / minimum / max / min)
// does: once either operand is NaN the result is NaN, whatever the order of the operands.
// std::max(a, b) is `a < b ? b : a`: it drops a NaN in b, so a reduction built on it keeps or drops
// a NaN depending on where the NaN sits. These stay branch-free (a compare and a blend), so loops
// over them still vectorize. For integers they are the plain max and min.
#pragma once

namespace onepool::cpu {

/// b when it is larger or NaN; else a (which keeps a NaN already in a).
template <class T>
inline T nan_max(T a, T b) {
  return (b > a || b != b) ? b : a;
}

/// b when it is smaller or NaN; else a.
template <class T>
inline T nan_min(T a, T b) {
  return (b < a || b != b) ? b : a;
}

}  // namespace onepool::cpu
