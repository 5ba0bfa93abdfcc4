// The one way OnePool's tools print a byte count: exact bytes with thousands separators, plus a
// binary unit from 1 KiB up: "2,143,232 B (2.04 MiB)", "512 B". Plan dumps, the HTML and diff
// views, and every CLI summary use it, so a number reads the same everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onepool {

/// "2,143,232".
std::string with_commas(uint64_t value);

/// The binary unit alone, two decimals: "512 B", "1.00 KiB", "2.04 MiB", "1.50 GiB", "2.00 TiB".
std::string binary_size(uint64_t bytes);

/// "2,143,232 B (2.04 MiB)"; below 1 KiB just "512 B". `number_width` right-aligns the exact
/// number in that many characters (for tables).
std::string format_bytes(uint64_t bytes, size_t number_width = 0);

}  // namespace onepool
