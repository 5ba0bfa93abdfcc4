// Tests for the --shapes and --dim parsers (planner/core/shape_binding.h).
#include "planner/core/shape_binding.h"

#include <doctest/doctest.h>

namespace onepool {

// "x:1x3x224x224" is one input of rank 4: dims 1, 3, 224, 224.
TEST_CASE("shapes flag: the AxBxC syntax") {
  auto shapes = parse_shapes_flag("x:1x3x224x224");
  REQUIRE(shapes.has_value());
  REQUIRE(shapes->size() == 1);
  CHECK((*shapes)[0].first == "x");
  CHECK((*shapes)[0].second == std::vector<int64_t>{1, 3, 224, 224});
}

// "x:[1,3,224,224]" is the same shape written with brackets; commas inside [] do not split.
TEST_CASE("shapes flag: the [A,B,C] syntax, mixed with AxB, several inputs") {
  auto shapes = parse_shapes_flag("x:[1,3,224,224],mask:2x10,ids:[7]");
  REQUIRE(shapes.has_value());
  REQUIRE(shapes->size() == 3);
  CHECK((*shapes)[0].second == std::vector<int64_t>{1, 3, 224, 224});
  CHECK((*shapes)[1].first == "mask");
  CHECK((*shapes)[1].second == std::vector<int64_t>{2, 10});
  CHECK((*shapes)[2].first == "ids");
  CHECK((*shapes)[2].second == std::vector<int64_t>{7});
}

// A name may contain ':' (only the last ':' separates the dims): "a:b:4x5" is input "a:b".
// "s:[]" is a scalar (rank 0).
TEST_CASE("shapes flag: names with ':' and scalars") {
  auto shapes = parse_shapes_flag("a:b:4x5,s:[]");
  REQUIRE(shapes.has_value());
  CHECK((*shapes)[0].first == "a:b");
  CHECK((*shapes)[0].second == std::vector<int64_t>{4, 5});
  CHECK((*shapes)[1].first == "s");
  CHECK((*shapes)[1].second.empty());
}

// Each bad value fails with kInvalidArgument and a message quoting the entry.
TEST_CASE("shapes flag: bad values") {
  const char* bad[] = {"x:0x3", "x:-1x3", "x:1xAx3", "x1x3x224",    "x:[1,0]",
                       ":1x3",  "x:1x",   "x:",      "x:1x2,x:1x2", "x:99999999999999999999"};
  for (const char* text : bad) {
    CAPTURE(text);
    auto shapes = parse_shapes_flag(text);
    REQUIRE_FALSE(shapes.has_value());
    CHECK(shapes.status().code() == StatusCode::kInvalidArgument);
  }
  auto zero = parse_shapes_flag("x:1x0x3");
  CHECK(zero.status().message().find("must be positive") != std::string::npos);
  auto letters = parse_shapes_flag("x:1xAx3");
  CHECK(letters.status().message().find("'A' is not an integer") != std::string::npos);
  auto colon = parse_shapes_flag("x1x3");
  CHECK(colon.status().message().find("has no ':'") != std::string::npos);
}

// "--dim batch=8" binds batch to 8; the value must be a positive integer.
TEST_CASE("dim flag: name=value") {
  auto dim = parse_dim_flag("batch=8");
  REQUIRE(dim.has_value());
  CHECK(dim->first == "batch");
  CHECK(dim->second == 8);
  for (const char* text : {"batch", "batch=0", "batch=-2", "batch=x", "=4", "batch="}) {
    CAPTURE(text);
    CHECK(parse_dim_flag(text).status().code() == StatusCode::kInvalidArgument);
  }
}

// Formatting round-trips: [1,3,224,224] and [1,10] → "x:1x3x224x224,y:1x10".
TEST_CASE("format_shapes_flag round-trips through parse_shapes_flag") {
  const std::vector<NamedShape> shapes = {{"x", {1, 3, 224, 224}}, {"y", {1, 10}}, {"s", {}}};
  const std::string text = format_shapes_flag(shapes);
  CHECK(text == "x:1x3x224x224,y:1x10,s:[]");
  auto parsed = parse_shapes_flag(text);
  REQUIRE(parsed.has_value());
  CHECK(*parsed == shapes);
}

}  // namespace onepool
