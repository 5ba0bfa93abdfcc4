// Tests for the --values parser and printer (planner/core/shape_input_flag.h).
#include <doctest/doctest.h>

#include <limits>

#include "planner/core/shape_input_flag.h"

namespace onepool {
namespace {

std::map<std::string, ShapeInputValues> parse(const std::string& text) {
  std::map<std::string, ShapeInputValues> values;
  const Status status = parse_values_flag(text, &values);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return values;
}

std::string parse_error(const std::string& text) {
  std::map<std::string, ShapeInputValues> values;
  const Status status = parse_values_flag(text, &values);
  REQUIRE_FALSE(status.is_ok());
  CHECK(status.code() == StatusCode::kInvalidArgument);
  return status.message();
}

}  // namespace

// "axes:1,-1;k:3": two entries, both integer lists: axes = [1, -1], k = [3].
TEST_CASE("values flag: integer entries separated by ';'") {
  const auto values = parse("axes:1,-1;k:3");
  REQUIRE(values.size() == 2);
  CHECK(std::get<std::vector<int64_t>>(values.at("axes")) == std::vector<int64_t>{1, -1});
  CHECK(std::get<std::vector<int64_t>>(values.at("k")) == std::vector<int64_t>{3});
}

// One float item makes the list float: scales = [1, 1, 0.5, 2]. "[1,2]" is a bracketed list,
// "[]" and "" are empty lists, and int64's largest value (Slice's usual "to the end") is exact.
TEST_CASE("values flag: floats, brackets, empty lists, int64 extremes") {
  const auto values = parse("scales:1,1,0.5,2;b:[1,2];e:[];f:;end:9223372036854775807,+4");
  CHECK(std::get<std::vector<double>>(values.at("scales")) ==
        std::vector<double>{1.0, 1.0, 0.5, 2.0});
  CHECK(std::get<std::vector<int64_t>>(values.at("b")) == std::vector<int64_t>{1, 2});
  CHECK(std::get<std::vector<int64_t>>(values.at("e")).empty());
  CHECK(std::get<std::vector<int64_t>>(values.at("f")).empty());
  CHECK(std::get<std::vector<int64_t>>(values.at("end")) ==
        std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 4});
}

// A repeated flag adds entries; naming an input twice (in one text or across flags) is an error.
TEST_CASE("values flag: repeated flags accumulate, a name twice is an error") {
  std::map<std::string, ShapeInputValues> values;
  REQUIRE(parse_values_flag("a:1", &values).is_ok());
  REQUIRE(parse_values_flag("b:2", &values).is_ok());
  CHECK(values.size() == 2);
  const Status twice = parse_values_flag("a:3", &values);
  REQUIRE_FALSE(twice.is_ok());
  CHECK(twice.message() == "--values names input 'a' twice");
  CHECK(parse_error("x:1;x:2") == "--values names input 'x' twice");
}

// Each bad entry fails with a message quoting it.
TEST_CASE("values flag: bad entries") {
  CHECK(parse_error("axes") ==
        "--values entry 'axes' has no ':'; expected name:1,2,3 (entries separated by ';')");
  CHECK(parse_error(":1") == "--values entry ':1' has an empty input name");
  CHECK(parse_error("a:1,x") == "--values entry 'a:1,x': 'x' is not an int64 integer");
  CHECK(parse_error("a:1,,2") == "--values entry 'a:1,,2': '' is not an int64 integer");
  CHECK(parse_error("a:0.5,z.") == "--values entry 'a:0.5,z.': 'z.' is not a number");
  CHECK(parse_error("a:99999999999999999999") ==
        "--values entry 'a:99999999999999999999': '99999999999999999999' is not an int64 "
        "integer");
}

// Printing: "[1,-1]" in messages, "axes:1,-1" as a flag entry (parsed back to the same values);
// more than 16 values are cut with the count.
TEST_CASE("values flag: printing") {
  const ShapeInputValues ints = std::vector<int64_t>{1, -1};
  CHECK(format_shape_input_values(ints) == "[1,-1]");
  CHECK(format_values_entry("axes", ints) == "axes:1,-1");
  CHECK(format_shape_input_values(ShapeInputValues(std::vector<double>{0.6, 2})) == "[0.6,2]");
  const auto round_trip = parse(format_values_entry("axes", ints));
  CHECK(std::get<std::vector<int64_t>>(round_trip.at("axes")) == std::vector<int64_t>{1, -1});
  const ShapeInputValues many = std::vector<int64_t>(20, 7);
  CHECK(format_shape_input_values(many) == "[7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,... (20 values)]");
}

}  // namespace onepool
