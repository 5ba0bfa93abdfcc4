// The one byte formatter: exact bytes with separators, a binary unit from 1 KiB up.
#include "planner/core/byte_units.h"

#include <doctest/doctest.h>

namespace onepool {

// 0 and 512 stay plain bytes ("512 B", never "0.00 MB"); 1,024 is 1.00 KiB; 2,143,232 is
// 2.04 MiB; one byte short of 1 GiB rounds to "1.00 GiB", not "1024.00 MiB"; 5 TiB.
TEST_CASE("byte units: exact bytes and a binary unit") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1023) == "1,023 B");
  CHECK(format_bytes(1024) == "1,024 B (1.00 KiB)");
  CHECK(format_bytes(2143232) == "2,143,232 B (2.04 MiB)");
  CHECK(format_bytes((uint64_t{1} << 30) - 1) == "1,073,741,823 B (1.00 GiB)");
  CHECK(format_bytes(uint64_t{5} << 40) == "5,497,558,138,880 B (5.00 TiB)");
  CHECK(binary_size(26214400) == "25.00 MiB");
  CHECK(with_commas(1234567) == "1,234,567");
  CHECK(with_commas(999) == "999");
}

// A width right-aligns the exact number for tables: "      5,376 B (5.25 KiB)".
TEST_CASE("byte units: aligned in a column") {
  CHECK(format_bytes(5376, 11) == "      5,376 B (5.25 KiB)");
  CHECK(format_bytes(512, 6) == "   512 B");
  CHECK(format_bytes(1234567, 3) == "1,234,567 B (1.18 MiB)");  // never cut
}

}  // namespace onepool
