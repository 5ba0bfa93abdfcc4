// Facts about the machine and the process that bench and run report.
#include "tools/onepool/host_info.h"

#include <doctest/doctest.h>

namespace onepool::cli {

// "VmHWM:\t    2048 kB" is 2 MiB; another key, a longer key or a line without " kB" is not it.
TEST_CASE("host info: /proc/self/status lines") {
  CHECK(parse_status_kb_line("VmHWM:\t    2048 kB", "VmHWM") == size_t{2048 * 1024});
  CHECK_FALSE(parse_status_kb_line("VmRSS:\t    2048 kB", "VmHWM").has_value());
  CHECK_FALSE(parse_status_kb_line("VmHWMX:\t   2048 kB", "VmHWM").has_value());
  CHECK_FALSE(parse_status_kb_line("VmHWM:\t    2048", "VmHWM").has_value());
  CHECK_FALSE(parse_status_kb_line("VmHWM", "VmHWM").has_value());
}

// This process has touched at least a megabyte; on Linux the peak is known.
TEST_CASE("host info: the peak resident set of this process") {
  const auto peak = peak_rss_bytes();
  REQUIRE(peak.has_value());
  CHECK(*peak > size_t{1} << 20);
}

// --threads 0 is every logical core, shared among streams (at least 1 each); a given count is
// kept as it is.
TEST_CASE("host info: the thread count a Session really uses") {
  const int cores = logical_cores();
  CHECK(cores >= 1);
  CHECK(resolve_threads(0) == cores);
  CHECK(resolve_threads(0, 4) == std::max(1, cores / 4));
  CHECK(resolve_threads(0, 1000) == 1);
  CHECK(resolve_threads(3, 4) == 3);
}

}  // namespace onepool::cli
