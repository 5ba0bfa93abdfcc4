// TfIdfVectorizer: the spec's example counted by hand (bigrams without skips; unigrams and
// bigrams with skips up to 5), batched rows, IDF and TFIDF weighting, and malformed pools.
#include <doctest/doctest.h>

#include "runtime/kernel_test_util.h"

using namespace onepool;
using namespace onepool::testing;

namespace {

TestInput i32(Shape shape, const std::vector<int32_t>& values) {
  return {make_host_tensor(DType::kInt32, shape, values), false};
}

// The spec's pool: unigrams 2, 3, 5, 4 (columns 0-3); bigrams (5, 6), (7, 8), (6, 7) (4-6).
AttributeMap pool_attributes(int64_t min_gram, int64_t max_gram, int64_t skip,
                             const std::string& mode = "TF") {
  AttributeMap attributes;
  attributes.set("min_gram_length", int_attr(min_gram));
  attributes.set("max_gram_length", int_attr(max_gram));
  attributes.set("max_skip_count", int_attr(skip));
  attributes.set("mode", string_attr(mode));
  attributes.set("ngram_counts", ints_attr({0, 4}));
  attributes.set("ngram_indexes", ints_attr({0, 1, 2, 3, 4, 5, 6}));
  attributes.set("pool_int64s", ints_attr({2, 3, 5, 4, 5, 6, 7, 8, 6, 7}));
  return attributes;
}

const std::vector<int32_t> kTokens = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};

std::vector<float> run_tfidf(const AttributeMap& attributes) {
  auto result = run_single_node("TfIdfVectorizer", {i32(Shape{12}, kTokens)},
                                {{DType::kFloat32, Shape{7}}}, attributes);
  REQUIRE(result.has_value());
  return values_of<float>(result.value()[0]);
}

}  // namespace

// Adjacent pairs of X: (7, 8) at 5-6, (6, 7) at 7-8, (5, 6) at 9-10 → [0, 0, 0, 0, 1, 1, 1].
TEST_CASE("TfIdfVectorizer bigrams without skips") {
  CHECK(run_tfidf(pool_attributes(2, 2, 0)) == std::vector<float>{0, 0, 0, 0, 1, 1, 1});
}

// Unigrams once each: 3 three times, 5 once. Bigrams with distance 1..6: (5, 6) once (9-10),
// (7, 8) three times (5-6, 5-11, 8-11), (6, 7) once (7-8) → [0, 3, 1, 0, 1, 3, 1].
TEST_CASE("TfIdfVectorizer unigrams and bigrams with skips") {
  CHECK(run_tfidf(pool_attributes(1, 2, 5)) == std::vector<float>{0, 3, 1, 0, 1, 3, 1});
}

// IDF: 1 for every n-gram present; TFIDF with weights w_k = k + 1: counts × weights.
TEST_CASE("TfIdfVectorizer IDF and TFIDF weighting") {
  CHECK(run_tfidf(pool_attributes(1, 2, 5, "IDF")) == std::vector<float>{0, 1, 1, 0, 1, 1, 1});
  AttributeMap weighted = pool_attributes(1, 2, 5, "TFIDF");
  weighted.set("weights", floats_attr({1, 2, 3, 4, 5, 6, 7}));
  CHECK(run_tfidf(weighted) == std::vector<float>{0, 6, 3, 0, 5, 18, 7});
}

// Two rows [[1, 1, 3, 3, 3, 7], [8, 6, 7, 5, 6, 8]]: n-grams never span rows.
TEST_CASE("TfIdfVectorizer batched rows are counted separately") {
  auto result = run_single_node("TfIdfVectorizer", {i32(Shape{2, 6}, kTokens)},
                                {{DType::kFloat32, Shape{2, 7}}}, pool_attributes(1, 2, 0));
  REQUIRE(result.has_value());
  CHECK(values_of<float>(result.value()[0]) ==
        std::vector<float>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1});
}

TEST_CASE("TfIdfVectorizer rejects a pool that does not split into n-grams") {
  AttributeMap attributes = pool_attributes(1, 2, 0);
  attributes.set("ngram_counts", ints_attr({0, 5}));  // 5 bigram items
  auto result = run_single_node("TfIdfVectorizer", {i32(Shape{12}, kTokens)},
                                {{DType::kFloat32, Shape{7}}}, attributes);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
  AttributeMap columns = pool_attributes(1, 2, 0);
  columns.set("ngram_indexes", ints_attr({0, 1, 2, 3, 4, 5, 9}));
  auto out_of_range = run_single_node("TfIdfVectorizer", {i32(Shape{12}, kTokens)},
                                      {{DType::kFloat32, Shape{7}}}, columns);
  REQUIRE_FALSE(out_of_range.has_value());
  CHECK(out_of_range.status().code() == StatusCode::kInvalidModel);
}
