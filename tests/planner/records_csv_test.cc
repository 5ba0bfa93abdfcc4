// MiniMalloc CSV records: valid files, the header line, every malformed case.
#include "planner/render/records_csv.h"

#include <doctest/doctest.h>

#include <string>

namespace onepool {
namespace {

std::string error_of(const std::string& text) {
  auto parsed = parse_records_csv(text);
  REQUIRE_FALSE(parsed.has_value());
  return parsed.status().message();
}

}  // namespace

// "a,0,2,64" lives in [0, 2): first 0, last 1, 64 bytes; "b,1,5,1024": first 1, last 4.
// Blank lines and CRLF endings are fine.
TEST_CASE("valid records: [lower, upper) becomes first = lower, last = upper - 1") {
  auto parsed = parse_records_csv("a,0,2,64\r\n\nb, 1 ,5,1024\n");
  REQUIRE_MESSAGE(parsed.has_value(), parsed.status().message());
  REQUIRE(parsed->records.size() == 2);
  CHECK(parsed->ids == std::vector<std::string>{"a", "b"});
  CHECK(parsed->records[0].first == 0);
  CHECK(parsed->records[0].last == 1);
  CHECK(parsed->records[0].bytes == 64);
  CHECK(parsed->records[1].first == 1);
  CHECK(parsed->records[1].last == 4);
  CHECK(parsed->records[1].bytes == 1024);
}

// MiniMalloc's header "id,lower,upper,size" is skipped on the first line; an empty file is zero
// records. A header anywhere else is a malformed line (line 2: 'lower' is not an integer).
TEST_CASE("an optional header line") {
  auto parsed = parse_records_csv("id,lower,upper,size\n0,0,1,16\n1,0,1,32\n");
  REQUIRE(parsed.has_value());
  CHECK(parsed->records.size() == 2);
  CHECK(parsed->ids[1] == "1");
  CHECK(parse_records_csv("").has_value());
  CHECK(parse_records_csv("")->records.empty());
  CHECK(error_of("0,0,1,16\nid,lower,upper,size\n").find("line 2") != std::string::npos);
}

// Each malformed line is reported with its line number and the reason.
TEST_CASE("malformed lines are rejected with line number and reason") {
  const std::string wrong_count = error_of("a,0,1,16\nb,0,1\n");
  CHECK(wrong_count.find("line 2") != std::string::npos);
  CHECK(wrong_count.find("expected 4 fields") != std::string::npos);
  CHECK(wrong_count.find("got 3") != std::string::npos);
  CHECK(error_of("a,0,1,16,9\n").find("got 5") != std::string::npos);

  const std::string not_integer = error_of("a,0,x1,16\n");
  CHECK(not_integer.find("line 1") != std::string::npos);
  CHECK(not_integer.find("upper 'x1' is not an integer") != std::string::npos);
  CHECK(error_of("a,0,1,1.5\n").find("size '1.5' is not an integer") != std::string::npos);
  CHECK(error_of("a,,1,16\n").find("lower '' is not an integer") != std::string::npos);

  CHECK(error_of("a,-1,1,16\n").find("lower '-1' is negative") != std::string::npos);
  CHECK(error_of("a,0,1,-16\n").find("size '-16' is negative") != std::string::npos);

  const std::string empty_life = error_of("\n\na,3,3,16\n");
  CHECK(empty_life.find("line 3") != std::string::npos);
  CHECK(empty_life.find("upper 3 must be greater than lower 3") != std::string::npos);
  CHECK(error_of("a,4,2,16\n").find("greater than lower 4") != std::string::npos);

  const std::string duplicate = error_of("a,0,1,16\nb,0,1,16\na,2,3,16\n");
  CHECK(duplicate.find("line 3") != std::string::npos);
  CHECK(duplicate.find("duplicate id 'a'") != std::string::npos);

  CHECK(error_of("a,0,1,99999999999999999999\n").find("overflows") != std::string::npos);
  CHECK(error_of(",0,1,16\n").find("id is empty") != std::string::npos);
}

// A missing file is kNotFound and names the path.
TEST_CASE("load_records_csv reports a missing file") {
  auto loaded = load_records_csv("no-such-dir/records.csv");
  REQUIRE_FALSE(loaded.has_value());
  CHECK(loaded.status().code() == StatusCode::kNotFound);
  CHECK(loaded.status().message().find("no-such-dir/records.csv") != std::string::npos);
}

}  // namespace onepool
