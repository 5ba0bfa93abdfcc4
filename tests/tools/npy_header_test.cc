// The .npy header parser: what numpy writes parses; a repeated key, a malformed shape tuple, an
// unknown or missing key, or trailing text is a clear error (each was accepted before).
#include "tools/onepool/npy_header.h"

#include <doctest/doctest.h>

namespace onepool::cli {

// numpy's own header for np.zeros((1,3,48,192), np.float32), padding and newline included.
TEST_CASE("npy header: what numpy writes") {
  auto header = parse_npy_header(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 48, 192), }          \n");
  REQUIRE_MESSAGE(header.has_value(), header.status().to_string());
  CHECK(header->descr == "<f4");
  CHECK_FALSE(header->fortran_order);
  CHECK(header->shape == std::vector<int64_t>{1, 3, 48, 192});
  auto scalar = parse_npy_header("{'descr': '<i8', 'fortran_order': True, 'shape': (), }\n");
  REQUIRE(scalar.has_value());
  CHECK(scalar->shape.empty());
  CHECK(scalar->fortran_order);
  auto one = parse_npy_header("{\"descr\": \"|u1\", \"shape\": (5,), \"fortran_order\": False}");
  REQUIRE(one.has_value());
  CHECK(one->shape == std::vector<int64_t>{5});
}

TEST_CASE("npy header: malformed headers are errors") {
  struct Bad {
    const char* header;
    const char* expected;
  };
  const Bad cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,3,48,192,,), }",
       "expected a dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (3,), }",
       "key 'shape' repeated"},
      {"{'descr': '<f4', 'descr': '<i8', 'fortran_order': False, 'shape': (2,)}",
       "key 'descr' repeated"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f4', 'shape': (2,)}", "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
       "unknown key 'extra'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", "expected a dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "dimension too large"},
      {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,)}", "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} tail", "text after"},
      {"{'descr': '<f4, 'fortran_order': False", "expected ',' or '}' after a value"},
      {"'descr': '<f4'", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ','"},
      {"", "expected '{'"},
  };
  for (const Bad& bad : cases) {
    CAPTURE(std::string(bad.header));
    auto header = parse_npy_header(bad.header);
    REQUIRE_FALSE(header.has_value());
    CHECK(header.status().code() == StatusCode::kInvalidArgument);
    CHECK_MESSAGE(header.status().message().find(bad.expected) != std::string::npos,
                  header.status().message());
  }
}

}  // namespace onepool::cli
