#include "planner/core/byte_units.h"

#include <cstdio>

namespace onepool {

namespace {
constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
}  // namespace

std::string with_commas(uint64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string binary_size(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  // 1023.999 MiB would print as "1024.00 MiB": move up once the rounded value reaches 1024.
  while (value >= 1024.0 - 0.005 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof(text), "%.2f %s", value, kUnits[unit]);
  return text;
}

std::string format_bytes(uint64_t bytes, size_t number_width) {
  std::string number = with_commas(bytes);
  if (number.size() < number_width) number.insert(0, number_width - number.size(), ' ');
  if (bytes < 1024) return number + " B";
  return number + " B (" + binary_size(bytes) + ")";
}

}  // namespace onepool
