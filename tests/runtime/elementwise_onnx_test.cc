// Elementwise kernels against the official ONNX node-test reference data
// (onnx/backend/test/data/node/<case>/test_data_set_0), converted offline with onnx.numpy_helper
// into the inline tables below. Large cases keep only their first elements (every op here is
// elementwise, so a prefix of the input gives the same prefix of the output).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernel_test_util.h"

namespace onepool::testing {
namespace {

TestInput f64(Shape shape, const std::vector<double>& values) {
  return {make_host_tensor(DType::kFloat64, shape, values), false};
}
TestInput i32(Shape shape, const std::vector<int32_t>& values) {
  return {make_host_tensor(DType::kInt32, shape, values), false};
}
TestInput b8(Shape shape, const std::vector<uint8_t>& values) {
  return {make_host_tensor(DType::kBool, shape, values), false};
}

struct ReferenceCase {
  std::string name;
  std::string op;
  std::vector<std::pair<std::string, Attribute>> attributes;
  std::vector<TestInput> inputs;
  TestInput expected;
};

// Each entry: inputs and output_0 of test_data_set_0, values printed with 9 (float32) or 17
// (float64) significant digits, so they round-trip exactly.
std::vector<ReferenceCase> reference_cases() {
  // One generated entry per ONNX node test, kept as printed.
  // clang-format off
  return {
// test_add_bcast (opset 14)
{"test_add_bcast", "Add", {},
 {f32({3,4,5}, {1.76405239f, 0.400157213f, 0.97873801f, 2.24089313f, 1.867558f, -0.977277875f, 0.950088441f, -0.151357204f, -0.103218853f, 0.410598516f, 0.144043565f, 1.45427346f, 0.761037707f, 0.121675014f, 0.443863243f, 0.333674341f, 1.49407911f, -0.205158263f, 0.313067704f, -0.854095757f, -2.55298972f, 0.653618574f, 0.864436209f, -0.742165029f, 2.26975465f, -1.45436573f, 0.0457585156f, -0.187183857f, 1.53277922f, 1.4693588f, 0.15494743f, 0.378162533f, -0.887785733f, -1.98079646f, -0.347912163f, 0.156348974f, 1.23029065f, 1.20237982f, -0.387326807f, -0.302302748f, -1.04855299f, -1.42001796f, -1.70627022f, 1.95077538f, -0.509652197f, -0.438074291f, -1.25279534f, 0.777490377f, -1.6138978f, -0.212740287f, -0.895466566f, 0.386902511f, -0.51080513f, -1.18063223f, -0.028182229f, 0.428331882f, 0.0665172189f, 0.302471906f, -0.634322107f, -0.362741172f}),
  f32({5}, {-0.672460437f, -0.359553158f, -0.813146293f, -1.7262826f, 0.177426144f})},
 f32({3,4,5}, {1.09159195f, 0.0406040549f, 0.165591717f, 0.514610529f, 2.0449841f, -1.64973831f, 0.590535283f, -0.964503527f, -1.82950139f, 0.588024676f, -0.528416872f, 1.09472036f, -0.0521085858f, -1.60460758f, 0.621289372f, -0.338786095f, 1.13452601f, -1.01830459f, -1.41321492f, -0.676669598f, -3.22545004f, 0.294065416f, 0.051289916f, -2.46844769f, 2.44718075f, -2.12682629f, -0.313794643f, -1.00033021f, -0.19350338f, 1.6467849f, -0.517513037f, 0.0186093748f, -1.70093203f, -3.70707893f, -0.170486018f, -0.516111493f, 0.870737493f, 0.38923353f, -2.11360931f, -0.124876603f, -1.72101343f, -1.77957106f, -2.51941657f, 0.224492788f, -0.332226038f, -1.11053467f, -1.61234856f, -0.0356559157f, -3.3401804f, -0.0353141427f, -1.567927f, 0.0273493528f, -1.32395148f, -2.90691471f, 0.149243921f, -0.244128555f, -0.293035924f, -0.510674357f, -2.36060476f, -0.185315028f})},
// test_div_bcast (opset 14)
{"test_div_bcast", "Div", {},
 {f32({3,4,5}, {1.76405239f, 0.400157213f, 0.97873801f, 2.24089313f, 1.867558f, -0.977277875f, 0.950088441f, -0.151357204f, -0.103218853f, 0.410598516f, 0.144043565f, 1.45427346f, 0.761037707f, 0.121675014f, 0.443863243f, 0.333674341f, 1.49407911f, -0.205158263f, 0.313067704f, -0.854095757f, -2.55298972f, 0.653618574f, 0.864436209f, -0.742165029f, 2.26975465f, -1.45436573f, 0.0457585156f, -0.187183857f, 1.53277922f, 1.4693588f, 0.15494743f, 0.378162533f, -0.887785733f, -1.98079646f, -0.347912163f, 0.156348974f, 1.23029065f, 1.20237982f, -0.387326807f, -0.302302748f, -1.04855299f, -1.42001796f, -1.70627022f, 1.95077538f, -0.509652197f, -0.438074291f, -1.25279534f, 0.777490377f, -1.6138978f, -0.212740287f, -0.895466566f, 0.386902511f, -0.51080513f, -1.18063223f, -0.028182229f, 0.428331882f, 0.0665172189f, 0.302471906f, -0.634322107f, -0.362741172f}),
  f32({5}, {1.29614019f, 1.11872768f, 1.31798315f, 1.41426301f, 1.06414747f})},
 f32({3,4,5}, {1.36100435f, 0.357689559f, 0.742602825f, 1.58449531f, 1.75498044f, -0.753990889f, 0.849258006f, -0.114840016f, -0.0729841962f, 0.38584739f, 0.111132704f, 1.29993522f, 0.577425957f, 0.086034216f, 0.417106897f, 0.257436931f, 1.33551633f, -0.155660763f, 0.221364558f, -0.802610338f, -1.96968639f, 0.584251702f, 0.655878067f, -0.524771571f, 2.13293242f, -1.12207437f, 0.040902283f, -0.142022952f, 1.08380067f, 1.38078499f, 0.119545273f, 0.338029116f, -0.673594117f, -1.40058565f, -0.326939791f, 0.120626591f, 1.0997231f, 0.912287712f, -0.273871839f, -0.28407976f, -0.80898118f, -1.26931512f, -1.29460704f, 1.37935829f, -0.478930056f, -0.337983727f, -1.11983943f, 0.589909196f, -1.14115822f, -0.199916169f, -0.690871716f, 0.345841557f, -0.387565762f, -0.834803879f, -0.0264833868f, 0.330467254f, 0.0594579168f, 0.229496032f, -0.44851777f, -0.34087491f})},
// test_pow_bcast_array (opset 15)
{"test_pow_bcast_array", "Pow", {},
 {f32({2,3}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}),
  f32({3}, {1.0f, 2.0f, 3.0f})},
 f32({2,3}, {1.0f, 4.0f, 27.0f, 4.0f, 25.0f, 216.0f})},
// test_pow_types_float32_int64 (opset 15)
{"test_pow_types_float32_int64", "Pow", {},
 {f32({3}, {1.0f, 2.0f, 3.0f}),
  i64({3}, {4, 5, 6})},
 f32({3}, {1.0f, 32.0f, 729.0f})},
// test_where_example (opset 16)
{"test_where_example", "Where", {},
 {b8({2,2}, {1, 0, 1, 1}),
  f32({2,2}, {1.0f, 2.0f, 3.0f, 4.0f}),
  f32({2,2}, {9.0f, 8.0f, 7.0f, 6.0f})},
 f32({2,2}, {1.0f, 8.0f, 3.0f, 4.0f})},
// test_where_long_example (opset 16)
{"test_where_long_example", "Where", {},
 {b8({2,2}, {1, 0, 1, 1}),
  i64({2,2}, {1, 2, 3, 4}),
  i64({2,2}, {9, 8, 7, 6})},
 i64({2,2}, {1, 8, 3, 4})},
// test_cast_FLOAT_to_DOUBLE (opset 13)
{"test_cast_FLOAT_to_DOUBLE", "Cast", {{"to", int_attr(11)}},
 {f32({3,4}, {0.568044543f, 0.925596654f, 0.0710360557f, 0.0871293023f, 0.0202183966f, 0.832619846f, 0.778156757f, 0.870012164f, 0.978618324f, 0.799158573f, 0.461479366f, 0.780529201f})},
 f64({3,4}, {0.56804454326629639, 0.92559665441513062, 0.071036055684089661, 0.087129302322864532, 0.020218396559357643, 0.83261984586715698, 0.77815675735473633, 0.87001216411590576, 0.978618323802948, 0.79915857315063477, 0.46147936582565308, 0.7805292010307312})},
// test_clip_default_inbounds (opset 13)
{"test_clip_default_inbounds", "Clip", {},
 {f32({3}, {-1.0f, 0.0f, 1.0f})},
 f32({3}, {-1.0f, 0.0f, 1.0f})},
// test_clip_example (opset 13)
{"test_clip_example", "Clip", {},
 {f32({3}, {-2.0f, 0.0f, 2.0f}),
  f32({}, {-1.0f}),
  f32({}, {1.0f})},
 f32({3}, {-1.0f, 0.0f, 1.0f})},
// test_erf (opset 13), first 24 elements
{"test_erf", "Erf", {},
 {f32({24}, {1.76405239f, 0.400157213f, 0.97873801f, 2.24089313f, 1.867558f, -0.977277875f, 0.950088441f, -0.151357204f, -0.103218853f, 0.410598516f, 0.144043565f, 1.45427346f, 0.761037707f, 0.121675014f, 0.443863243f, 0.333674341f, 1.49407911f, -0.205158263f, 0.313067704f, -0.854095757f, -2.55298972f, 0.653618574f, 0.864436209f, -0.742165029f})},
 f32({24}, {0.987395287f, 0.428543508f, 0.833685815f, 0.998470902f, 0.991736889f, -0.833052754f, 0.820931256f, -0.169493034f, -0.116057694f, 0.438539803f, 0.161418587f, 0.960280418f, 0.718193412f, 0.136620998f, 0.469810933f, 0.362992406f, 0.965394676f, -0.228289023f, 0.342049509f, -0.772904217f, -0.999694347f, 0.644699156f, 0.778480411f, -0.706088662f})},
// test_hardswish (opset 14)
{"test_hardswish", "HardSwish", {},
 {f32({3,4,5}, {1.76405239f, 0.400157213f, 0.97873801f, 2.24089313f, 1.867558f, -0.977277875f, 0.950088441f, -0.151357204f, -0.103218853f, 0.410598516f, 0.144043565f, 1.45427346f, 0.761037707f, 0.121675014f, 0.443863243f, 0.333674341f, 1.49407911f, -0.205158263f, 0.313067704f, -0.854095757f, -2.55298972f, 0.653618574f, 0.864436209f, -0.742165029f, 2.26975465f, -1.45436573f, 0.0457585156f, -0.187183857f, 1.53277922f, 1.4693588f, 0.15494743f, 0.378162533f, -0.887785733f, -1.98079646f, -0.347912163f, 0.156348974f, 1.23029065f, 1.20237982f, -0.387326807f, -0.302302748f, -1.04855299f, -1.42001796f, -1.70627022f, 1.95077538f, -0.509652197f, -0.438074291f, -1.25279534f, 0.777490377f, -1.6138978f, -0.212740287f, -0.895466566f, 0.386902511f, -0.51080513f, -1.18063223f, -0.028182229f, 0.428331882f, 0.0665172189f, 0.302471906f, -0.634322107f, -0.362741172f})},
 f32({3,4,5}, {1.40067303f, 0.226766244f, 0.649023712f, 1.95738029f, 1.51507449f, -0.329460263f, 0.625488877f, -0.0718604326f, -0.0498337373f, 0.233397797f, 0.0754798725f, 1.07962203f, 0.477048606f, 0.0633049756f, 0.254767388f, 0.185393602f, 1.11908495f, -0.0955641493f, 0.172869086f, -0.305467933f, -0.190202057f, 0.398012161f, 0.556759775f, -0.27928102f, 1.99350834f, -0.374652892f, 0.0232282318f, -0.0877522975f, 1.15795839f, 1.09451532f, 0.081475161f, 0.212915748f, -0.312532276f, -0.336472452f, -0.153782263f, 0.0822486505f, 0.867414534f, 0.84214282f, -0.168659732f, -0.135920212f, -0.341032565f, -0.373933822f, -0.367908746f, 1.60964191f, -0.2115352f, -0.187052295f, -0.364814937f, 0.489493757f, -0.372837871f, -0.0988270715f, -0.314089894f, 0.21840018f, -0.211915568f, -0.358000696f, -0.0139587419f, 0.244743988f, 0.0339960344f, 0.166484162f, -0.250100315f, -0.159440383f})},
// test_sigmoid_example (opset 13)
{"test_sigmoid_example", "Sigmoid", {},
 {f32({3}, {-1.0f, 0.0f, 1.0f})},
 f32({3}, {0.268941402f, 0.5f, 0.731058598f})},
// test_selu_example (opset 6)
{"test_selu_example", "Selu", {{"alpha", float_attr(2.0f)}, {"gamma", float_attr(3.0f)}},
 {f32({3}, {-1.0f, 0.0f, 1.0f})},
 f32({3}, {-3.79272366f, 0.0f, 3.0f})},
// test_mod_mixed_sign_int32 (opset 13)
{"test_mod_mixed_sign_int32", "Mod", {},
 {i32({6}, {-4, 7, 5, 4, -7, 8}),
  i32({6}, {2, -3, 8, -2, 3, 5})},
 i32({6}, {0, -2, 5, 0, 2, 3})},
// test_max_example (opset 13)
{"test_max_example", "Max", {},
 {f32({3}, {3.0f, 2.0f, 1.0f}),
  f32({3}, {1.0f, 4.0f, 4.0f}),
  f32({3}, {2.0f, 5.0f, 3.0f})},
 f32({3}, {3.0f, 5.0f, 4.0f})},
// test_mean_example (opset 13)
{"test_mean_example", "Mean", {},
 {f32({3}, {3.0f, 0.0f, 2.0f}),
  f32({3}, {1.0f, 3.0f, 4.0f}),
  f32({3}, {2.0f, 6.0f, 6.0f})},
 f32({3}, {2.0f, 3.0f, 4.0f})},
  };
  // clang-format on
}

template <class T>
void check_close(const HostTensor& actual, const HostTensor& expected, double tolerance) {
  const auto got = values_of<T>(actual);
  const auto want = values_of<T>(expected);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    const double scale = std::max(1.0, std::fabs(static_cast<double>(want[i])));
    CHECK(std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <=
          tolerance * scale);
  }
}

void check_equal_bytes(const HostTensor& actual, const HostTensor& expected) {
  REQUIRE(actual.data.size() == expected.data.size());
  CHECK(actual.data == expected.data);
}

// float32 results must match the reference to 1e-6 (relative above 1); float64 to 1e-12;
// integers and bools exactly.
TEST_CASE("elementwise kernels match the ONNX node-test reference outputs") {
  for (const ReferenceCase& reference : reference_cases()) {
    SUBCASE(reference.name.c_str()) {
      AttributeMap attributes;
      for (const auto& [name, value] : reference.attributes) attributes.set(name, value);
      std::vector<std::optional<TestInput>> inputs(reference.inputs.begin(),
                                                   reference.inputs.end());
      const HostTensor& expected = reference.expected.tensor;
      auto outputs =
          run_single_node(reference.op, inputs, {{expected.dtype, expected.shape}}, attributes);
      REQUIRE_MESSAGE(outputs.has_value(), outputs.status().to_string());
      const HostTensor& actual = (*outputs)[0];
      CHECK(actual.shape == expected.shape);
      if (expected.dtype == DType::kFloat32) {
        check_close<float>(actual, expected, 1e-6);
      } else if (expected.dtype == DType::kFloat64) {
        check_close<double>(actual, expected, 1e-12);
      } else {
        check_equal_bytes(actual, expected);
      }
    }
  }
}

}  // namespace
}  // namespace onepool::testing
