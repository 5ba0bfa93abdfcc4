// NaN and Inf through every ONNX backend node test with a float32 data input, fused and unfused.
//
// For each test model OnePool loads (/usr/share/libonnx-testdata/data/node/test_*), each float32
// graph input that is data (not a scale, roi, depth, range bound or coordinate: kParameterInputs)
// and 8 element positions of it (first and last included), the model runs on test_data_set_0 with
// that element replaced by +1e30, -1e30, +Inf, -Inf, NaN, 0, 1 and -1. nan_inf_oracle.h judges
// the float outputs against the baseline: NaN reaches every element that +-1e30 moves (numpy,
// which generated the tests, propagates NaN through arithmetic), and neither NaN nor Inf changes
// an element that no other value at that position changes. Two short lists turn one rule off for
// an input, each with the reason from the ONNX reference: kNanToNumber (the reference maps NaN to
// a number) and kNanBeyondValues (NaN reaches elements no value reaches, in numpy too). Each model
// runs with --optimize none and, when the optimizer changes its graph (expanded GELU, Identity,
// weight-only nodes), with all.
//
// Exits 77 (CTest skip) when the node tests are not installed (ONEPOOL_NODE_TESTS_DIR overrides
// the folder). ONEPOOL_NAN_INF_POSITIONS sets the positions per input (default 8; 3 under
// sanitizers). About 2 s in a Release build, 16 s under ASan + UBSan (Debug).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/sanitizers.h"
#include "onepool/model.h"
#include "onepool/session.h"
#include "planner/core/shape_input_flag.h"
#include "planner/import/import_shape_inputs.h"
#include "planner/import/model_info.h"
#include "planner/import/tensor_proto.h"
#include "runtime/nan_inf_oracle.h"

namespace onepool::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNodeTestsDir = "/usr/share/libonnx-testdata/data/node";
constexpr const char* kExpandedSuffix = "_expanded";

// A graph input of an operator's node tests, by name (nullptr: every input), and why it is listed.
struct InputRule {
  const char* op;
  const char* input;
  const char* why;
};

// Float inputs that are parameters, not data: they set the output's shape or where it reads, and
// the reference turns them into integers (int(NaN) raises in Python), so NaN there has no numpy
// semantics to compare with.
constexpr InputRule kParameterInputs[] = {
    {"Resize", "roi", "crop box coordinates"},
    {"Resize", "scales", "the output shape"},
    {"Upsample", "scales", "the output shape"},
    {"Range", nullptr, "start, limit, delta: the output length"},
    {"OneHot", "depth", "the output shape"},
    {"OneHot", "indices", "positions of the on value"},
    {"RoiAlign", "rois", "box coordinates (a non-finite one is an error)"},
    {"MelWeightMatrix", "lower_edge_hertz", "a frequency that becomes a bin index"},
    {"MelWeightMatrix", "upper_edge_hertz", "a frequency that becomes a bin index"},
    {"Unique", "X", "the values decide which are unique: the output's length and order"},
};

// Inputs whose ONNX reference (numpy) turns a NaN into a number in a float output that the input
// otherwise moves: the propagation rule is off, the leak rules stay.
constexpr InputRule kNanToNumber[] = {
    {"Hardmax", "x", "one-hot of np.argmax, which picks the first NaN: the output is 0 and 1"},
    {"TopK", "x",
     "np.sort puts NaN last (first after the flip for largest=1): one slot holds NaN, the other "
     "values shift"},
};

// Inputs where NaN reaches elements that no number and no Inf reaches, in numpy too: the NaN leak
// rule is off, propagation and the Inf rules stay.
constexpr InputRule kNanBeyondValues[] = {
    {"Clip", "min",
     "Min(max, Max(x, min)) is max where x >= max for every number and Inf as min, and NaN for a "
     "NaN min"},
    {"RNN", nullptr, "the gates saturate (tanh of +-1e30 or +-Inf is +-1) and NaN does not"},
    {"GRU", nullptr, "sigmoid(+-Inf) times the zero initial state is 0, sigmoid(NaN) * 0 is NaN"},
    {"LSTM", nullptr, "sigmoid(+-Inf) times the zero initial cell is 0, sigmoid(NaN) * 0 is NaN"},
    {"GridSample", "Grid",
     "+-1e30 and +-Inf read the padding, which can equal the baseline; a NaN coordinate samples "
     "NaN (the reference raises on int(NaN))"},
};

const InputRule* find_rule(std::span<const InputRule> rules, const std::string& op,
                           const std::string& input) {
  for (const InputRule& rule : rules) {
    if (op == rule.op && (rule.input == nullptr || input == rule.input)) return &rule;
  }
  return nullptr;
}

#if defined(ONEPOOL_TEST_SANITIZED)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

int positions_per_input() {
  if (const char* text = std::getenv("ONEPOOL_NAN_INF_POSITIONS")) {
    return std::clamp(std::atoi(text), 1, 64);
  }
  return kSanitized ? 3 : 8;
}

// `wanted` element positions spread evenly over an input of `count` elements, first and last
// included (3: first, middle, last; 1: the middle).
std::vector<int64_t> injected_positions(int64_t count, int wanted) {
  if (wanted == 1) return {count / 2};
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < wanted; ++i) {
    const int64_t position = i * (count - 1) / (wanted - 1);
    if (positions.empty() || positions.back() != position) positions.push_back(position);
  }
  return positions;
}

// A node test and the operator it tests.
struct NodeTest {
  fs::path dir;
  std::string name;
  std::string op;  // the model's one operator; for "_expanded" models, the base test's
  bool expanded = false;
};

// The single operator of a model (Constant nodes aside), or "" when it has several.
std::string single_op(const fs::path& dir) {
  Expected<ModelInfo> info = inspect_onnx_file((dir / "model.onnx").string());
  if (!info) return "";
  std::map<std::string, int64_t> ops = info->op_histogram;
  if (ops.size() > 1) ops.erase("Constant");
  return ops.size() == 1 ? ops.begin()->first : "";
}

std::vector<NodeTest> list_node_tests(const fs::path& root) {
  std::vector<NodeTest> tests;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!fs::exists(entry.path() / "model.onnx")) continue;
    tests.push_back({entry.path(), entry.path().filename().string(), single_op(entry.path())});
  }
  std::sort(tests.begin(), tests.end(),
            [](const NodeTest& a, const NodeTest& b) { return a.name < b.name; });
  std::map<std::string, std::string> op_of;
  for (const NodeTest& test : tests) op_of[test.name] = test.op;
  for (NodeTest& test : tests) {
    if (!test.op.empty() || !test.name.ends_with(kExpandedSuffix)) continue;
    const std::string base = test.name.substr(0, test.name.size() - std::strlen(kExpandedSuffix));
    test.op = op_of.count(base) != 0 ? op_of[base] : "";
    test.expanded = !test.op.empty();
  }
  return tests;
}

// The model's shape inputs (Reshape's shape, Slice's starts, Resize's scales...) with their
// test_data_set_0 values, bound at load as the conformance runner does (empty when the model has
// none or they cannot be read: the load then fails and the test is skipped).
std::map<std::string, ShapeInputValues> shape_input_values(const fs::path& dir) {
  std::map<std::string, ShapeInputValues> values;
  Expected<std::vector<ShapeInputUse>> uses =
      find_shape_inputs_in_file((dir / "model.onnx").string());
  if (!uses) return values;
  for (const ShapeInputUse& use : *uses) {
    const fs::path path = dir / "test_data_set_0" / str_cat("input_", use.model_position, ".pb");
    auto named = read_tensor_proto_file(path.string());
    if (named) values[use.input] = shape_input_values_of(named->second);
  }
  return values;
}

bool is_shape_input(const Model& model, size_t position) {
  for (const ShapeInputInfo& info : model.shape_inputs()) {
    if (info.model_position == position) return true;
  }
  return false;
}

// The inputs of test_data_set_0 in Model::inputs() order (the bound shape inputs left out); an
// error when they do not fit the model (a few tests ship data that disagrees with their own
// model; the conformance run skips those too).
Expected<std::vector<HostTensor>> read_inputs(const fs::path& dir, const Model& model) {
  std::vector<HostTensor> inputs;
  for (size_t i = 0;; ++i) {
    const fs::path path = dir / "test_data_set_0" / str_cat("input_", i, ".pb");
    if (!fs::exists(path)) break;
    if (is_shape_input(model, i)) continue;
    ONEPOOL_ASSIGN_OR_RETURN(auto named, read_tensor_proto_file(path.string()));
    inputs.push_back(std::move(named.second));
  }
  if (inputs.size() != model.inputs().size()) {
    return make_status(StatusCode::kUnsupported, inputs.size(), " inputs on disk, the model has ",
                       model.inputs().size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& info = model.inputs()[i];
    if (info.dtype == DType::kBFloat16 && inputs[i].dtype == DType::kUInt16) {
      inputs[i].dtype = DType::kBFloat16;  // the test data stores bfloat16 as uint16 bits
    }
    const TensorView view{inputs[i].data.data(), inputs[i].dtype, inputs[i].shape, Device{}};
    ONEPOOL_RETURN_IF_ERROR(check_tensor_matches(info, view, "test data input"));
  }
  return inputs;
}

// Where a flattened float output element came from.
struct ElementOrigin {
  size_t output = 0;
  int64_t index = 0;
};

// One Session over a model and the test's inputs. run() returns the float outputs flattened.
class Runner {
 public:
  static Expected<std::unique_ptr<Runner>> create(std::shared_ptr<const Model> model,
                                                  std::vector<HostTensor> inputs) {
    SessionOptions options;
    options.threads = 1;  // deterministic and cheap on a busy 2-core machine
    ONEPOOL_ASSIGN_OR_RETURN(auto session, Session::create(model, options));
    auto runner = std::unique_ptr<Runner>(new Runner());
    runner->session_ = std::move(session);
    runner->inputs_ = std::move(inputs);
    for (const TensorInfo& info : model->outputs()) {
      HostTensor output;
      output.dtype = info.dtype;
      output.shape = info.shape;
      output.data.resize(static_cast<size_t>(info.shape.element_count()) * dtype_size(info.dtype));
      runner->outputs_.push_back(std::move(output));
    }
    return runner;
  }

  float* input_floats(size_t i) { return inputs_[i].as_mutable<float>(); }

  Expected<std::vector<FloatBits>> run() {
    std::vector<TensorView> in;
    std::vector<TensorView> out;
    for (HostTensor& t : inputs_) in.push_back({t.data.data(), t.dtype, t.shape, Device{}});
    for (HostTensor& t : outputs_) out.push_back({t.data.data(), t.dtype, t.shape, Device{}});
    ONEPOOL_RETURN_IF_ERROR(session_->run(in, out));
    std::vector<FloatBits> floats;
    for (const HostTensor& t : outputs_) {
      if (is_float_dtype(t.dtype))
        append_float_bits(t.dtype, t.data.data(), t.element_count(), floats);
    }
    return floats;
  }

  // The output and index of flattened float element `e`.
  ElementOrigin origin(size_t e) const {
    for (size_t o = 0; o < outputs_.size(); ++o) {
      if (!is_float_dtype(outputs_[o].dtype)) continue;
      const auto count = static_cast<size_t>(outputs_[o].element_count());
      if (e < count) return {o, static_cast<int64_t>(e)};
      e -= count;
    }
    return {};
  }

 private:
  Runner() = default;
  std::unique_ptr<Session> session_;
  std::vector<HostTensor> inputs_;
  std::vector<HostTensor> outputs_;
};

// Counts per operator, for the closing message.
struct OpTally {
  int tests = 0;
  int cases = 0;
  int failed_cases = 0;
  std::set<std::string> exceptions;  // the reasons of the rules turned off
};

struct Report {
  std::map<std::string, OpTally> ops;
  int cases = 0;
  int failed_cases = 0;
  int exception_cases = 0;  // cases with one rule off
  int fused_models = 0;
  std::map<std::string, int> skipped;  // reason → tests
};

// What one case (a model, a level, an input, a position) needs to name itself.
struct CaseContext {
  const NodeTest* test = nullptr;
  const Model* model = nullptr;
  const char* level = "";
  size_t input = 0;
  int64_t position = 0;
};

std::string describe_violation(const CaseContext& c, const Runner& runner,
                               const std::vector<FloatBits>& baseline,
                               const std::vector<FloatBits>& perturbed, const OracleViolation& v) {
  const ElementOrigin origin = runner.origin(v.element);
  const std::string where =
      str_cat(c.test->name, " [optimize ", c.level, "]: input '", c.model->inputs()[c.input].name,
              "'[", c.position, "] = ", perturbation_name(v.perturbation), ": output '",
              c.model->outputs()[origin.output].name, "'[", origin.index,
              "] = ", perturbed[v.element].value, " (baseline ", baseline[v.element].value, ")");
  if (v.kind == OracleViolation::Kind::kNanDropped) {
    return str_cat(where, ", expected NaN: +-1e30 there moves it");
  }
  return str_cat(where, ": no other injected value moves it");
}

// Runs the eight perturbations at one position and judges them. False when the case failed.
bool check_position(const CaseContext& c, Runner& runner, const std::vector<FloatBits>& baseline,
                    OracleRules rules) {
  float* data = runner.input_floats(c.input);
  const float original = data[c.position];
  std::array<std::vector<FloatBits>, kPerturbationCount> runs;
  for (size_t p = 0; p < kPerturbationCount; ++p) {
    data[c.position] = perturbation_value(p);
    Expected<std::vector<FloatBits>> floats = runner.run();
    data[c.position] = original;
    if (!floats) {
      FAIL_CHECK(str_cat(c.test->name, " [optimize ", c.level, "]: input '",
                         c.model->inputs()[c.input].name, "'[", c.position,
                         "] = ", perturbation_name(p), ": ", floats.status().to_string()));
      return false;
    }
    runs[p] = std::move(floats).value();
  }
  const OracleVerdict verdict = judge_perturbations(baseline, runs, rules);
  const size_t shown = std::min<size_t>(verdict.violations.size(), 3);
  for (size_t i = 0; i < shown; ++i) {
    const OracleViolation& v = verdict.violations[i];
    FAIL_CHECK(describe_violation(c, runner, baseline, runs[v.perturbation], v));
  }
  return verdict.violations.empty();
}

// The float32 inputs of `model` that are data, per kParameterInputs.
std::vector<size_t> float_data_inputs(const NodeTest& test, const Model& model) {
  std::vector<size_t> inputs;
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const TensorInfo& info = model.inputs()[i];
    if (info.dtype != DType::kFloat32 || info.shape.element_count() == 0) continue;
    if (find_rule(kParameterInputs, test.op, info.name) != nullptr) continue;
    inputs.push_back(i);
  }
  return inputs;
}

// Every case of one model at one optimization level.
void check_model(const NodeTest& test, std::shared_ptr<const Model> model, const char* level,
                 const std::vector<HostTensor>& inputs, Report& report) {
  const std::string key = test.expanded ? str_cat(test.op, " (expanded)") : test.op;
  auto runner = Runner::create(model, inputs);
  if (!runner) {
    ++report.skipped[str_cat("session: ", status_code_name(runner.status().code()))];
    return;
  }
  Expected<std::vector<FloatBits>> baseline = (*runner)->run();
  if (!baseline) {
    ++report.skipped[str_cat("run: ", status_code_name(baseline.status().code()))];
    return;
  }
  Expected<std::vector<FloatBits>> again = (*runner)->run();
  const bool deterministic =
      again && std::equal(baseline->begin(), baseline->end(), again->begin(), again->end(),
                          [](FloatBits a, FloatBits b) { return same_value(a, b); });
  if (!deterministic) {
    ++report.skipped["random outputs (two runs differ)"];
    return;
  }
  if (baseline->empty()) {
    ++report.skipped["no float output"];
    return;
  }
  OpTally& tally = report.ops[key];
  ++tally.tests;
  for (size_t input : float_data_inputs(test, *model)) {
    const std::string& name = model->inputs()[input].name;
    const InputRule* to_number = find_rule(kNanToNumber, test.op, name);
    const InputRule* beyond = find_rule(kNanBeyondValues, test.op, name);
    if (to_number != nullptr) tally.exceptions.insert(to_number->why);
    if (beyond != nullptr) tally.exceptions.insert(beyond->why);
    const OracleRules rules{to_number == nullptr, beyond == nullptr};
    const int64_t count = model->inputs()[input].shape.element_count();
    for (int64_t position : injected_positions(count, positions_per_input())) {
      const CaseContext c{&test, model.get(), level, input, position};
      const bool ok = check_position(c, **runner, *baseline, rules);
      ++tally.cases;
      ++report.cases;
      if (to_number != nullptr || beyond != nullptr) ++report.exception_cases;
      if (ok) continue;
      ++tally.failed_cases;
      ++report.failed_cases;
    }
  }
}

void check_node_test(const NodeTest& test, Report& report) {
  if (test.op.empty()) return;  // a multi-node model with no base test: no operator to name
  LoadOptions none;
  none.optimize = "none";
  none.shape_input_values = shape_input_values(test.dir);
  Expected<std::shared_ptr<const Model>> plain =
      Model::load((test.dir / "model.onnx").string(), none);
  if (!plain) {
    ++report.skipped[str_cat("load: ", status_code_name(plain.status().code()))];
    return;
  }
  if (float_data_inputs(test, **plain).empty()) return;
  Expected<std::vector<HostTensor>> inputs = read_inputs(test.dir, **plain);
  if (!inputs) {
    ++report.skipped["test data disagrees with the model"];
    return;
  }
  CAPTURE(test.name);
  check_model(test, *plain, "none", *inputs, report);
  LoadOptions all = none;
  all.optimize = "all";
  Expected<std::shared_ptr<const Model>> fused =
      Model::load((test.dir / "model.onnx").string(), all);
  REQUIRE_MESSAGE(fused.has_value(),
                  str_cat(test.name, ": --optimize all: ", fused.status().to_string()));
  if ((*fused)->graph().nodes.size() == (*plain)->graph().nodes.size()) return;  // same graph
  ++report.fused_models;
  check_model(test, *fused, "all", *inputs, report);
}

std::string summary(const Report& report, double seconds) {
  std::string text =
      str_cat(report.ops.size(), " operators, ", report.cases, " cases (", positions_per_input(),
              " positions per float input; ", report.exception_cases, " with one rule off), ",
              report.fused_models, " models also run fused, ", report.failed_cases, " failed; ",
              seconds, " s\n");
  for (const auto& [op, tally] : report.ops) {
    text += str_cat("  ", op, ": ", tally.tests, " model runs, ", tally.cases, " cases");
    if (tally.failed_cases != 0) text += str_cat(", ", tally.failed_cases, " FAILED");
    for (const std::string& why : tally.exceptions) text += str_cat(" (exception: ", why, ")");
    text += "\n";
  }
  text += "skipped:";
  for (const auto& [reason, count] : report.skipped) text += str_cat(" ", reason, " x", count, ";");
  return text;
}

}  // namespace

// The oracle catches a NaN that a kernel drops and one that leaks. Three outputs of a Relu-like
// op: element 0 follows the input (+1e30 → 1e30, NaN → 0: dropped), element 1 ignores it
// (but NaN → NaN: leaked), element 2 is 0 * x (±1e30 → 0, ±Inf and NaN → NaN: fine).
TEST_CASE("NaN/Inf oracle: flags a dropped NaN and a leaked one, accepts Inf * 0") {
  auto element = [](float value) {
    std::vector<FloatBits> bits;
    append_float_bits(DType::kFloat32, reinterpret_cast<const std::byte*>(&value), 1, bits);
    return bits[0];
  };
  const float nan = perturbation_value(kNanValue);
  const std::vector<FloatBits> baseline = {element(2.0f), element(5.0f), element(0.0f)};
  std::array<std::vector<FloatBits>, kPerturbationCount> runs;
  runs[kPlusBig] = {element(1e30f), element(5.0f), element(0.0f)};
  runs[kMinusBig] = {element(0.0f), element(5.0f), element(0.0f)};
  runs[kPlusInf] = {element(perturbation_value(kPlusInf)), element(5.0f), element(nan)};
  runs[kMinusInf] = {element(0.0f), element(5.0f), element(nan)};
  runs[kNanValue] = {element(0.0f), element(nan), element(nan)};
  runs[kZero] = {element(0.0f), element(5.0f), element(0.0f)};
  runs[kOne] = {element(1.0f), element(5.0f), element(0.0f)};
  runs[kMinusOne] = {element(0.0f), element(5.0f), element(0.0f)};
  const OracleVerdict verdict = judge_perturbations(baseline, runs);
  CHECK(verdict.strongly_dependent == 1);
  REQUIRE(verdict.violations.size() == 2);
  CHECK(verdict.violations[0].kind == OracleViolation::Kind::kNanDropped);
  CHECK(verdict.violations[0].element == 0);
  CHECK(verdict.violations[1].kind == OracleViolation::Kind::kLeaked);
  CHECK(verdict.violations[1].element == 1);
  // With either rule off (the test's exception lists) only the other violation is left.
  const OracleVerdict to_number = judge_perturbations(baseline, runs, {false, true});
  REQUIRE(to_number.violations.size() == 1);
  CHECK(to_number.violations[0].kind == OracleViolation::Kind::kLeaked);
  const OracleVerdict beyond = judge_perturbations(baseline, runs, {true, false});
  REQUIRE(beyond.violations.size() == 1);
  CHECK(beyond.violations[0].kind == OracleViolation::Kind::kNanDropped);
}

// An Inf that changes an element no finite value and not the other Inf changes is a leak.
// float16 elements compare by their bits: 0x7e00 is NaN, 0x7c00 is +Inf.
TEST_CASE("NaN/Inf oracle: flags a leaked Inf and reads float16") {
  std::vector<FloatBits> halves;
  const uint16_t bits[] = {0x3c00, 0x7c00, 0x7e00};  // 1, +Inf, NaN
  append_float_bits(DType::kFloat16, reinterpret_cast<const std::byte*>(bits), 3, halves);
  CHECK(halves[0].value == 1.0);
  CHECK_FALSE(halves[1].nan);
  CHECK(halves[2].nan);
  const std::vector<FloatBits> baseline = {halves[0]};
  std::array<std::vector<FloatBits>, kPerturbationCount> runs;
  for (auto& run : runs) run = baseline;
  runs[kPlusInf] = {halves[1]};
  const OracleVerdict verdict = judge_perturbations(baseline, runs);
  REQUIRE(verdict.violations.size() == 1);
  CHECK(verdict.violations[0].perturbation == kPlusInf);
}

// Every node test with a float32 data input (608 models of 123 operators, 20 of them also fused,
// 6213 cases when written; the message gives the counts per operator): NaN propagates to every
// element that the input moves, and neither NaN nor Inf changes any other element.
TEST_CASE("NaN/Inf: every ONNX node test with a float input, fused and unfused") {
  const char* dir = std::getenv("ONEPOOL_NODE_TESTS_DIR");
  const fs::path root = dir != nullptr ? dir : kNodeTestsDir;
  if (!fs::is_directory(root)) {
    std::printf("skipped: no ONNX node tests at %s\n", root.c_str());
    std::exit(77);
  }
  const auto start = std::chrono::steady_clock::now();
  Report report;
  for (const NodeTest& test : list_node_tests(root)) check_node_test(test, report);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  MESSAGE(summary(report, seconds.count()));
  CHECK(report.ops.size() >= 100);
  CHECK(report.failed_cases == 0);
}

}  // namespace onepool::testing
