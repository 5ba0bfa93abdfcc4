// The header of a NumPy .npy file (reading the start of a file, writing a version 1.0 one): a
// Python dict literal with exactly the keys 'descr', 'fortran_order' and 'shape', each once. Parsed
// strictly: a repeated key, an unknown key, a malformed tuple such as (1,3,48,192,,) or anything
// after the closing brace is an error.
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

/// A .npy file's header and where its data starts.
struct NpyLayout {
  NpyHeader header;
  size_t data_offset = 0;
};

/// Parses the start of a .npy file: magic, version 1.0 to 3.0, header length, header dict.
/// `bytes` may be the whole file or only its first bytes. kInvalidArgument on anything else.
Expected<NpyLayout> parse_npy_start(const std::string& bytes);

/// Reads only the header of the .npy file at `path` (kNotFound when it cannot be opened).
Expected<NpyLayout> read_npy_layout(const std::string& path);

/// A version 1.0 header for `descr` ("<f4") and `shape` in C order: magic, length, the dict,
/// spaces and a newline so that the data starts at a multiple of 64 bytes.
std::string make_npy_header(const std::string& descr, const std::vector<int64_t>& shape);

}  // namespace onepool::cli
