// Writes .npy files for tests, byte by byte from the format's description (independent of the
// CLI's own reader and writer).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace onepool::test {

/// A version 1.0, little-endian float32 .npy of `shape` holding `values` (zeros when empty).
inline void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape,
                          std::vector<float> values = {}) {
  std::string dims;
  int64_t count = 1;
  for (int64_t dim : shape) {
    dims += std::to_string(dim) + ",";
    count *= dim;
  }
  if (values.empty()) values.assign(static_cast<size_t>(count), 0.0f);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::ofstream out(path, std::ios::binary);
  out << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(dict.size() & 0xff)
      << static_cast<char>(dict.size() >> 8) << dict;
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
}

}  // namespace onepool::test
