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

// make_npy_header writes what numpy writes for a [3, 784] float32 array: version 1.0, the dict
// padded so the data starts at byte 128, and parse_npy_start reads it back; (5,) keeps its
// comma. The start of a file without the magic, or of version 4, is an error.
TEST_CASE("npy header: written and read back") {
  const std::string header = make_npy_header("<f4", {3, 784});
  CHECK(header.size() % 64 == 0);
  CHECK(header.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(header.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 784), }") == 10);
  CHECK(header.back() == '\n');
  auto layout = parse_npy_start(header);
  REQUIRE_MESSAGE(layout.has_value(), layout.status().to_string());
  CHECK(layout->data_offset == header.size());
  CHECK(layout->header.shape == std::vector<int64_t>{3, 784});
  CHECK(layout->header.descr == "<f4");
  CHECK(make_npy_header("|u1", {5}).find("'shape': (5,), }") != std::string::npos);
  CHECK(make_npy_header("<f8", {}).find("'shape': (), }") != std::string::npos);
  auto no_magic = parse_npy_start("not a numpy file at all");
  REQUIRE_FALSE(no_magic.has_value());
  CHECK(no_magic.status().message().find("no NUMPY magic") != std::string::npos);
  std::string v4 = header;
  v4[6] = 4;
  auto future = parse_npy_start(v4);
  REQUIRE_FALSE(future.has_value());
  CHECK(future.status().message().find("version 4") != std::string::npos);
}

}  // namespace onepool::cli
