// The header of a NumPy .npy file: a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape', each once. Parsed strictly: a repeated key, an unknown key, a
// malformed tuple such as (1,3,48,192,,) or anything after the closing brace is an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onepool/status.h"

namespace onepool::cli {

struct NpyHeader {
  std::string descr;  // "<f4", "|u1", ...
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

/// Parses the header dict (the text after the length field, padding and newline included).
/// kInvalidArgument saying what is wrong and where.
Expected<NpyHeader> parse_npy_header(const std::string& text);

}  // namespace onepool::cli
