// MatMul and Gemm CPU kernels: hand-computed cases, numpy broadcasting against a naive loop, and
// cases converted from the ONNX node tests (test_matmul_3d, test_gemm_*).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

void check_close(const std::vector<float>& actual, const std::vector<float>& expected,
                 double epsilon = 1e-5) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(epsilon));
  }
}

// Deterministic values in [-1, 1) (a small LCG), so failures reproduce.
std::vector<float> pseudo_random(size_t count, uint32_t seed) {
  std::vector<float> values(count);
  for (auto& value : values) {
    seed = seed * 1664525u + 1013904223u;
    value = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return values;
}

std::vector<float> run_f32(const std::string& op, const std::vector<std::optional<TestInput>>& in,
                           Shape out, const AttributeMap& attributes = {}) {
  auto result = run_single_node(op, in, {{DType::kFloat32, out}}, attributes);
  REQUIRE_MESSAGE(result.has_value(), result.status().to_string());
  return values_of<float>((*result)[0]);
}

AttributeMap gemm_attributes(float alpha, float beta, int64_t trans_a, int64_t trans_b) {
  AttributeMap attributes;
  attributes.set("alpha", float_attr(alpha));
  attributes.set("beta", float_attr(beta));
  attributes.set("transA", int_attr(trans_a));
  attributes.set("transB", int_attr(trans_b));
  return attributes;
}

const std::vector<float> kA23 = {1, 2, 3, 4, 5, 6};
const std::vector<float> kB32 = {7, 8, 9, 10, 11, 12};

// [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]].
TEST_CASE("MatMul 2-D") {
  check_close(run_f32("MatMul", {f32({2, 3}, kA23), f32({3, 2}, kB32)}, {2, 2}),
              {58, 64, 139, 154});
}

// A 1-D left operand is a row: [1,2,3] x B = [58,64], and the output drops that dim.
TEST_CASE("MatMul 1-D x 2-D") {
  check_close(run_f32("MatMul", {f32({3}, {1, 2, 3}), f32({3, 2}, kB32)}, {2}), {58, 64});
}

// A 1-D right operand is a column: A x [1,1,1] = row sums [6,15].
TEST_CASE("MatMul 2-D x 1-D") {
  check_close(run_f32("MatMul", {f32({2, 3}, kA23), f32({3}, {1, 1, 1})}, {2}), {6, 15});
}

// [2,1,4,8] x [3,8,5] broadcasts the batch to [2,3]: Y[p,q] = A[p,0] x B[q], checked against a
// naive triple loop over 120 outputs.
TEST_CASE("MatMul batched broadcast [2,1,4,8] x [3,8,5]") {
  const auto a = pseudo_random(2 * 4 * 8, 1);
  const auto b = pseudo_random(3 * 8 * 5, 2);
  std::vector<float> expected(2 * 3 * 4 * 5, 0.0f);
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 3; ++q) {
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 5; ++j) {
          float sum = 0.0f;
          for (int k = 0; k < 8; ++k) sum += a[p * 32 + i * 8 + k] * b[q * 40 + k * 5 + j];
          expected[((p * 3 + q) * 4 + i) * 5 + j] = sum;
        }
      }
    }
  }
  check_close(run_f32("MatMul", {f32({2, 1, 4, 8}, a), f32({3, 8, 5}, b)}, {2, 3, 4, 5}), expected,
              1e-4);
}

// [2,3,4] activations x a constant [4,5] weight: folded into one [6,4] x [4,5] product; the
// result must equal the per-batch naive loop. Also the reverse broadcast [4,5] x [2,5,3].
TEST_CASE("MatMul weight fold and left-operand broadcast") {
  const auto a = pseudo_random(2 * 3 * 4, 3);
  const auto w = pseudo_random(4 * 5, 4);
  std::vector<float> expected(2 * 3 * 5, 0.0f);
  for (int row = 0; row < 6; ++row) {
    for (int j = 0; j < 5; ++j) {
      for (int k = 0; k < 4; ++k) expected[row * 5 + j] += a[row * 4 + k] * w[k * 5 + j];
    }
  }
  check_close(run_f32("MatMul", {f32({2, 3, 4}, a), f32({4, 5}, w, true)}, {2, 3, 5}), expected,
              1e-4);

  const auto b = pseudo_random(2 * 5 * 3, 5);
  std::vector<float> expected_left(2 * 4 * 3, 0.0f);
  for (int batch = 0; batch < 2; ++batch) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int k = 0; k < 5; ++k) {
          expected_left[(batch * 4 + i) * 3 + j] += w[i * 5 + k] * b[batch * 15 + k * 3 + j];
        }
      }
    }
  }
  check_close(run_f32("MatMul", {f32({4, 5}, w), f32({2, 5, 3}, b)}, {2, 4, 3}), expected_left,
              1e-4);
}

// 1-D x 3-D: [1,2] x B[2,2,2] = one row per batch: [1*1+2*3, 1*2+2*4] = [7,10] and [19,22].
TEST_CASE("MatMul 1-D x 3-D") {
  check_close(
      run_f32("MatMul", {f32({2}, {1, 2}), f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}, {2, 2}),
      {7, 10, 19, 22});
}

// ONNX node test test_matmul_3d: [2,3,4] x [2,4,3].
TEST_CASE("MatMul onnx test_matmul_3d") {
  const std::vector<float> a = {2.2697546f,   -1.4543657f, 0.045758516f, -0.18718386f, 1.5327792f,
                                1.4693588f,   0.15494743f, 0.37816253f,  -0.88778573f, -1.9807965f,
                                -0.34791216f, 0.15634897f, 1.2302907f,   1.2023798f,   -0.3873268f,
                                -0.30230275f, -1.048553f,  -1.420018f,   -1.7062702f,  1.9507754f,
                                -0.5096522f,  -0.4380743f, -1.2527953f,  0.7774904f};
  const std::vector<float> b = {
      -1.6138978f,   -0.21274029f, -0.89546657f, 0.3869025f,   -0.51080513f, -1.1806322f,
      -0.028182229f, 0.42833188f,  0.06651722f,  0.3024719f,   -0.6343221f,  -0.36274117f,
      -0.67246044f,  -0.35955316f, -0.8131463f,  -1.7262826f,  0.17742614f,  -0.40178093f,
      -1.6301984f,   0.46278226f,  -0.9072984f,  0.051945396f, 0.7290906f,   0.12898292f};
  const std::vector<float> expected = {
      -4.2837567f, 0.39836392f, -0.24447522f, -1.7952335f, -1.2501478f,  -3.2341933f,
      0.7235164f,  0.9524713f,  3.053718f,    -2.287253f,  -0.62867534f, -1.1710705f,
      6.0393553f,  0.75772256f, 3.222876f,    3.181653f,   0.09261068f,  1.8273739f};
  check_close(run_f32("MatMul", {f32({2, 3, 4}, a), f32({2, 4, 3}, b)}, {2, 3, 3}), expected);
}

// Fused Relu epilogue: [1,-1] x I = [1,-1] -> [1,0]; with Clip(0, 0.5) on [2,3]x[3,2]: all 0.5.
TEST_CASE("MatMul fused activation") {
  AttributeMap relu;
  relu.set("onepool_activation", string_attr("Relu"));
  check_close(run_f32("MatMul", {f32({1, 2}, {1, -1}), f32({2, 2}, {1, 0, 0, 1})}, {1, 2}, relu),
              {1, 0});
  AttributeMap clip;
  clip.set("onepool_activation", string_attr("Clip"));
  clip.set("onepool_alpha", float_attr(0.0f));
  clip.set("onepool_beta", float_attr(0.5f));
  check_close(run_f32("MatMul", {f32({2, 3}, kA23), f32({3, 2}, kB32)}, {2, 2}, clip),
              {0.5f, 0.5f, 0.5f, 0.5f});
}

// int64: [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]; float64 gives the same numbers.
TEST_CASE("MatMul int64 and float64") {
  auto result = run_single_node("MatMul", {i64({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {5, 6, 7, 8})},
                                {{DType::kInt64, {2, 2}}});
  REQUIRE(result.has_value());
  CHECK(values_of<int64_t>((*result)[0]) == std::vector<int64_t>{19, 22, 43, 50});

  auto f64 = [](std::vector<double> v) {
    return TestInput{make_host_tensor(DType::kFloat64, Shape{2, 2}, v), false};
  };
  auto doubles = run_single_node("MatMul", {f64({1, 2, 3, 4}), f64({5, 6, 7, 8})},
                                 {{DType::kFloat64, {2, 2}}});
  REQUIRE(doubles.has_value());
  CHECK(values_of<double>((*doubles)[0]) == std::vector<double>{19, 22, 43, 50});
}

// K = 0: [2,0] x [0,3] is a [2,3] of empty sums, all 0 (the output starts as 0xCD garbage).
TEST_CASE("MatMul empty inner dim") {
  check_close(run_f32("MatMul", {f32({2, 0}, {}), f32({0, 3}, {})}, {2, 3}), {0, 0, 0, 0, 0, 0});
}

// Errors name the inputs and dims: K 3 vs 4, an unbroadcastable batch 2 vs 3, a wrong output.
TEST_CASE("MatMul shape errors") {
  auto inner = run_single_node("MatMul", {f32({2, 3}, kA23), f32({4, 1}, {1, 2, 3, 4})},
                               {{DType::kFloat32, {2, 1}}});
  REQUIRE_FALSE(inner.has_value());
  CHECK(inner.status().code() == StatusCode::kInvalidModel);
  CHECK(inner.status().message().find("K = 3 vs 4") != std::string::npos);
  CHECK(inner.status().message().find("test_node") != std::string::npos);

  auto batch = run_single_node("MatMul", {f32({2, 1, 1}, {1, 2}), f32({3, 1, 1}, {1, 2, 3})},
                               {{DType::kFloat32, {3, 1, 1}}});
  REQUIRE_FALSE(batch.has_value());
  CHECK(batch.status().message().find("(2 vs 3)") != std::string::npos);

  auto output = run_single_node("MatMul", {f32({2, 3}, kA23), f32({3, 2}, kB32)},
                                {{DType::kFloat32, {2, 3}}});
  REQUIRE_FALSE(output.has_value());
  CHECK(output.status().message().find("expected shape [2,2]") != std::string::npos);
}

// A = [[1,2],[3,4]], B = I: A x B + C for C of each broadcastable shape.
//   C [2] = [10,20]    -> [11,22,13,24]   (broadcast along rows)
//   C [1,2]            -> same
//   C [2,1] = [10,20]  -> [11,12,23,24]   (broadcast along columns)
//   C [] = 5           -> [6,7,8,9]
//   C [2,2]            -> elementwise
TEST_CASE("Gemm bias shapes") {
  const auto a = f32({2, 2}, {1, 2, 3, 4});
  const auto identity = f32({2, 2}, {1, 0, 0, 1});
  check_close(run_f32("Gemm", {a, identity, f32({2}, {10, 20})}, {2, 2}), {11, 22, 13, 24});
  check_close(run_f32("Gemm", {a, identity, f32({1, 2}, {10, 20})}, {2, 2}), {11, 22, 13, 24});
  check_close(run_f32("Gemm", {a, identity, f32({2, 1}, {10, 20})}, {2, 2}), {11, 12, 23, 24});
  check_close(run_f32("Gemm", {a, identity, f32({}, {5})}, {2, 2}), {6, 7, 8, 9});
  check_close(run_f32("Gemm", {a, identity, f32({2, 2}, {1, 1, 2, 2})}, {2, 2}), {2, 3, 5, 6});
  check_close(run_f32("Gemm", {a, identity}, {2, 2}), {1, 2, 3, 4});
}

// alpha=2, beta=0.5, transA: A^T = [[1,3],[2,4]]; transB with B = [[0,1],[1,0]] (B^T = B):
// A^T B^T = [[3,1],[4,2]] -> *2 = [[6,2],[8,4]] + 0.5*[10,20] = [[11,12],[13,14]].
// beta = 0 ignores C entirely: [[6,2],[8,4]].
TEST_CASE("Gemm alpha beta transA transB") {
  const auto a = f32({2, 2}, {1, 2, 3, 4});
  const auto b = f32({2, 2}, {0, 1, 1, 0});
  check_close(run_f32("Gemm", {a, b, f32({2}, {10, 20})}, {2, 2}, gemm_attributes(2, 0.5f, 1, 1)),
              {11, 12, 13, 14});
  check_close(run_f32("Gemm", {a, b, f32({2}, {10, 20})}, {2, 2}, gemm_attributes(2, 0, 1, 1)),
              {6, 2, 8, 4});
}

// Non-square transposes: A [3,2] with transA is [2,3]; B [4,3] with transB is [3,4]:
// A^T = [[1,3,5],[2,4,6]], B^T columns = rows of B.
// Row 0: [1,3,5].[1,0,0]=1, .[0,1,0]=3, .[0,0,1]=5, .[1,1,1]=9; row 1: 2, 4, 6, 12.
TEST_CASE("Gemm non-square transposes") {
  const auto a = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const auto b = f32({4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  check_close(run_f32("Gemm", {a, b}, {2, 4}, gemm_attributes(1, 1, 1, 1)),
              {1, 3, 5, 9, 2, 4, 6, 12});
}

// Fused Relu on Gemm: [[1,-2]] x I + [0.5,0.5] = [1.5,-1.5] -> [1.5,0].
TEST_CASE("Gemm fused Relu") {
  AttributeMap relu;
  relu.set("onepool_activation", string_attr("Relu"));
  check_close(
      run_f32("Gemm", {f32({1, 2}, {1, -2}), f32({2, 2}, {1, 0, 0, 1}), f32({2}, {0.5f, 0.5f})},
              {1, 2}, relu),
      {1.5f, 0.0f});
}

// ONNX node test test_gemm_all_attributes: alpha 0.25, beta 0.35, transA, transB, C [1,5].
TEST_CASE("Gemm onnx test_gemm_all_attributes") {
  const std::vector<float> a = {0.5488135f,  0.71518934f, 0.60276335f, 0.5448832f,
                                0.4236548f,  0.6458941f,  0.4375872f,  0.891773f,
                                0.96366274f, 0.3834415f,  0.79172504f, 0.5288949f};
  const std::vector<float> b = {0.56804454f, 0.92559665f, 0.071036056f, 0.0871293f, 0.020218397f,
                                0.83261985f, 0.77815676f, 0.87001216f,  0.9786183f, 0.7991586f,
                                0.46147937f, 0.7805292f,  0.11827443f,  0.639921f,  0.14335328f,
                                0.9446689f,  0.5218483f,  0.41466194f,  0.2645556f, 0.7742337f};
  const std::vector<float> c = {0.45615032f, 0.56843394f, 0.0187898f, 0.6176355f, 0.6120957f};
  const std::vector<float> expected = {0.37979913f, 0.4836736f,  0.37501436f, 0.42580932f,
                                       0.44547832f, 0.39233345f, 0.63644016f, 0.52356744f,
                                       0.5240351f,  0.5636829f,  0.42334533f, 0.63895106f,
                                       0.49747032f, 0.49676925f, 0.5259358f};
  check_close(run_f32("Gemm", {f32({4, 3}, a), f32({5, 4}, b), f32({1, 5}, c)}, {3, 5},
                      gemm_attributes(0.25f, 0.35f, 1, 1)),
              expected);
}

// ONNX node test test_gemm_default_scalar_bias: C is a rank-0 3.14.
TEST_CASE("Gemm onnx test_gemm_default_scalar_bias") {
  const std::vector<float> a = {0.5488135f, 0.71518934f, 0.60276335f,
                                0.5448832f, 0.4236548f,  0.6458941f};
  const std::vector<float> b = {0.4375872f,   0.891773f,  0.96366274f,  0.3834415f,
                                0.79172504f,  0.5288949f, 0.56804454f,  0.92559665f,
                                0.071036056f, 0.0871293f, 0.020218397f, 0.83261985f};
  const std::vector<float> expected = {3.9892051f, 4.0601954f, 4.0873175f, 4.5142875f,
                                       3.759734f,  3.9062574f, 3.9187975f, 4.2788486f};
  check_close(run_f32("Gemm", {f32({2, 3}, a), f32({3, 4}, b), f32({}, {3.14f})}, {2, 4}),
              expected);
}

// Gemm errors: C [3] cannot broadcast to [2,2]; a 3-D A is not a matrix.
TEST_CASE("Gemm shape errors") {
  const auto a = f32({2, 2}, {1, 2, 3, 4});
  auto bias = run_single_node("Gemm", {a, a, f32({3}, {1, 2, 3})}, {{DType::kFloat32, {2, 2}}});
  REQUIRE_FALSE(bias.has_value());
  CHECK(bias.status().message().find("cannot broadcast to [2,2]") != std::string::npos);
  auto rank =
      run_single_node("Gemm", {f32({1, 2, 2}, {1, 2, 3, 4}), a}, {{DType::kFloat32, {2, 2}}});
  REQUIRE_FALSE(rank.has_value());
  CHECK(rank.status().message().find("expected a 2-D matrix") != std::string::npos);
}

}  // namespace
}  // namespace onepool::testing
