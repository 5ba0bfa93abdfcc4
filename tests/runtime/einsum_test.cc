// Einsum: each kind of equation (matmul, batch matmul, transpose, reduction, inner and outer
// product, diagonal, "..." broadcast, implicit output, three inputs, integers) against loops
// written out by hand in the test, and malformed equations.
#include <doctest/doctest.h>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

AttributeMap equation(const std::string& text) {
  AttributeMap attributes;
  attributes.set("equation", string_attr(text));
  return attributes;
}

std::vector<float> run_einsum(const std::string& text, const std::vector<TestInput>& inputs,
                              Shape out) {
  std::vector<std::optional<TestInput>> optional(inputs.begin(), inputs.end());
  auto result = run_single_node("Einsum", optional, {{DType::kFloat32, out}}, equation(text));
  REQUIRE(result.has_value());
  return values_of<float>(result.value()[0]);
}

void check_close(const std::vector<float>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element ", i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-5));
  }
}

}  // namespace

// "ij,jk->ik" on [3, 4] x [4, 5] and "bij, bjk -> bik" (spaces) on [2, 3, 4] x [2, 4, 5].
TEST_CASE("Einsum matmul and batched matmul against the triple loop") {
  const std::vector<float> a = random_values(24, 1), b = random_values(40, 2);
  std::vector<double> expected(2 * 3 * 5, 0.0);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 5; ++k)
        for (int64_t j = 0; j < 4; ++j)
          expected[static_cast<size_t>((n * 3 + i) * 5 + k)] +=
              double(a[static_cast<size_t>((n * 3 + i) * 4 + j)]) *
              b[static_cast<size_t>((n * 4 + j) * 5 + k)];
  check_close(run_einsum("bij, bjk -> bik", {f32(Shape{2, 3, 4}, a), f32(Shape{2, 4, 5}, b)},
                         Shape{2, 3, 5}),
              expected);
  const std::vector<float> a0(a.begin(), a.begin() + 12), b0(b.begin(), b.begin() + 20);
  check_close(run_einsum("ij,jk->ik", {f32(Shape{3, 4}, a0), f32(Shape{4, 5}, b0)}, Shape{3, 5}),
              std::vector<double>(expected.begin(), expected.begin() + 15));
}

// x = [[1, 2, 3], [4, 5, 6]]: "ij->ji" = [[1, 4], [2, 5], [3, 6]]; "ij->i" = [6, 15];
// "ij->" = 21; implicit "ij" is the identity; implicit "ji" transposes (labels sorted: i, j).
TEST_CASE("Einsum transpose, reductions, implicit output") {
  const auto x = f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(run_einsum("ij->ji", {x}, Shape{3, 2}) == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(run_einsum("ij->i", {x}, Shape{2}) == std::vector<float>{6, 15});
  CHECK(run_einsum("ij->", {x}, Shape{}) == std::vector<float>{21});
  CHECK(run_einsum("ij", {x}, Shape{2, 3}) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(run_einsum("ji", {x}, Shape{3, 2}) == std::vector<float>{1, 4, 2, 5, 3, 6});
}

// "i,i" = 1*4 + 2*5 + 3*6 = 32; "i,j->ij" = outer product; "ii->i" = diagonal [0, 4, 8];
// "ii" (implicit, no free label) = trace 12.
TEST_CASE("Einsum inner, outer product, diagonal and trace") {
  const auto u = f32(Shape{3}, {1, 2, 3}), v = f32(Shape{3}, {4, 5, 6});
  CHECK(run_einsum("i,i", {u, v}, Shape{}) == std::vector<float>{32});
  CHECK(run_einsum("i,j->ij", {u, v}, Shape{3, 3}) ==
        std::vector<float>{4, 5, 6, 8, 10, 12, 12, 15, 18});
  const auto m = f32(Shape{3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(run_einsum("ii->i", {m}, Shape{3}) == std::vector<float>{0, 4, 8});
  CHECK(run_einsum("ii", {m}, Shape{}) == std::vector<float>{12});
}

// "...ii ->...i" on [2, 3, 3] = each matrix's diagonal; "...k,...k->..." on [2, 1, 3] and
// [4, 3] broadcasts the "..." dims [2, 1] and [4] to [2, 4]: out[n, m] = sum_k a[n, 0, k] b[m, k].
TEST_CASE("Einsum ellipsis: batch diagonal and broadcasting") {
  const std::vector<float> x = random_values(18, 4);
  std::vector<double> diagonal;
  for (size_t n = 0; n < 2; ++n)
    for (size_t i = 0; i < 3; ++i) diagonal.push_back(x[n * 9 + i * 4]);
  check_close(run_einsum("...ii ->...i", {f32(Shape{2, 3, 3}, x)}, Shape{2, 3}), diagonal);

  const std::vector<float> a = random_values(6, 5), b = random_values(12, 6);
  std::vector<double> expected;
  for (size_t n = 0; n < 2; ++n)
    for (size_t m = 0; m < 4; ++m) {
      double sum = 0.0;
      for (size_t k = 0; k < 3; ++k) sum += double(a[n * 3 + k]) * b[m * 3 + k];
      expected.push_back(sum);
    }
  check_close(
      run_einsum("...k,...k->...", {f32(Shape{2, 1, 3}, a), f32(Shape{4, 3}, b)}, Shape{2, 4}),
      expected);
}

// Three inputs: "i,ij,j->" = u^T M v with u = [1, 2], M = [[1, 2], [3, 4]], v = [5, 6]:
// u^T M = [7, 10]; · v = 35 + 60 = 95.
TEST_CASE("Einsum with three inputs") {
  CHECK(run_einsum("i,ij,j->",
                   {f32(Shape{2}, {1, 2}), f32(Shape{2, 2}, {1, 2, 3, 4}), f32(Shape{2}, {5, 6})},
                   Shape{}) == std::vector<float>{95});
}

// int64 "ij,jk" = [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
TEST_CASE("Einsum on int64") {
  auto result =
      run_single_node("Einsum", {i64(Shape{2, 2}, {1, 2, 3, 4}), i64(Shape{2, 2}, {5, 6, 7, 8})},
                      {{DType::kInt64, Shape{2, 2}}}, equation("ij,jk"));
  REQUIRE(result.has_value());
  CHECK(values_of<int64_t>(result.value()[0]) == std::vector<int64_t>{19, 22, 43, 50});
}

TEST_CASE("Einsum rejects malformed equations and mismatched sizes") {
  const auto x = f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<std::pair<std::string, Shape>> bad = {
      {"ijk->i", Shape{2}},     // three labels for rank 2
      {"ij,jk->ik", Shape{2}},  // two terms, one input
      {"i1->i", Shape{2}},      // bad character
      {"ij->k", Shape{2}},      // output label not in an input
      {"ij->ii", Shape{2, 2}},  // repeated output label
      {"ij->i", Shape{3}},      // wrong output shape
  };
  for (const auto& [text, out] : bad) {
    const std::string equation_text = text;
    INFO(equation_text);
    auto result = run_single_node("Einsum", {x}, {{DType::kFloat32, out}}, equation(text));
    REQUIRE_FALSE(result.has_value());
    CHECK(result.status().code() == StatusCode::kInvalidModel);
  }
  auto sizes = run_single_node("Einsum", {x, f32(Shape{2, 2}, {1, 2, 3, 4})},
                               {{DType::kFloat32, Shape{2, 2}}}, equation("ij,jk->ik"));
  REQUIRE_FALSE(sizes.has_value());
  CHECK(sizes.status().code() == StatusCode::kInvalidModel);
}
