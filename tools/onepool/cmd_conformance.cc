// onepool conformance DIR: runs the ONNX backend node tests (DIR/test_*/model.onnx with
// test_data_set_*/input_*.pb and output_*.pb). Each test passes, fails, or is skipped with the
// reason (an op, attribute or dtype OnePool does not support). Exit 1 on any failure.
//
// Each test belongs to an operator: the op type of the single node of its model.onnx (Constant
// nodes feeding it aside); for a model of several nodes (the "_expanded" function bodies), the op
// of the test of the same name without "_expanded", marked "(expanded)"; else the test name. The
// run ends with a table of passed / failed / skipped per operator and the commonest skip reason;
// `--op NAME` runs only the tests of one operator (its expanded tests included).
//
// Inputs at shape-parameter positions (Slice's starts, ReduceSum's axes, Resize's scales...:
// planner/import/import_shape_inputs.h) are shape inputs: they take their values from
// test_data_set_0 and are bound at load; every data set still feeds them, and the Session checks
// they agree.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "planner/core/shape_input_flag.h"
#include "planner/import/import_shape_inputs.h"
#include "planner/import/model_info.h"
#include "tools/onepool/cli_common.h"
#include "tools/onepool/commands.h"
#include "tools/onepool/run_inputs.h"
#include "tools/onepool/tensor_compare.h"
#include "tools/onepool/tensor_files.h"

namespace onepool::cli {

namespace {

struct ConformanceFlags {
  std::string directory;
  std::string filter;
  std::string op;
  std::string device = "cpu";
  double atol = 1e-5;
  double rtol = 1e-3;
  int min_pass = 0;
  int threads = 2;
  bool quiet = false;
};

enum class Verdict { kPass, kFail, kSkip };

struct TestResult {
  Verdict verdict = Verdict::kPass;
  std::string reason;
};

TestResult skip_or_fail(const Status& status, const char* phase) {
  const Verdict verdict =
      status.code() == StatusCode::kUnsupported ? Verdict::kSkip : Verdict::kFail;
  return {verdict, str_cat(phase, ": ", status.message())};
}

// The backend test data stores bfloat16 tensors as uint16 bit patterns: take them as bfloat16.
void adopt_bfloat16_bits(const std::vector<TensorInfo>& infos, std::vector<HostTensor>& tensors) {
  for (size_t i = 0; i < infos.size() && i < tensors.size(); ++i) {
    if (infos[i].dtype == DType::kBFloat16 && tensors[i].dtype == DType::kUInt16) {
      tensors[i].dtype = DType::kBFloat16;
    }
  }
}

// Every graph input of the model file in its order: Model::inputs() with the shape inputs put
// back at their positions (the order of the input_*.pb files).
std::vector<TensorInfo> all_input_infos(const Model& model) {
  std::vector<TensorInfo> infos = model.inputs();
  for (const ShapeInputInfo& shape_input : model.shape_inputs()) {
    const size_t at = std::min(shape_input.model_position, infos.size());
    infos.insert(infos.begin() + static_cast<std::ptrdiff_t>(at), shape_input.info);
  }
  return infos;
}

// Runs one data set; empty string when every output matches.
Expected<std::string> run_data_set(Session& session, const Model& model,
                                   const std::filesystem::path& data_dir,
                                   const ConformanceFlags& flags) {
  ONEPOOL_ASSIGN_OR_RETURN(auto inputs, read_pb_directory(data_dir.string(), "input_"));
  ONEPOOL_ASSIGN_OR_RETURN(auto expected, read_pb_directory(data_dir.string(), "output_"));
  const std::vector<TensorInfo> input_infos = all_input_infos(model);
  if (inputs.size() != input_infos.size() || expected.size() != model.outputs().size()) {
    return str_cat(data_dir.filename().string(), ": ", inputs.size(), " inputs / ", expected.size(),
                   " outputs on disk, the model has ", input_infos.size(), " / ",
                   model.outputs().size());
  }
  adopt_bfloat16_bits(input_infos, inputs);
  adopt_bfloat16_bits(model.outputs(), expected);
  // A few node tests ship data that disagrees with their own model (e.g. a [1] tensor for a
  // declared [3,4] input): no runtime can run those as written, so they are skipped, not failed.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorView view{inputs[i].data.data(), inputs[i].dtype, inputs[i].shape, Device{}};
    const Status matches = check_tensor_matches(input_infos[i], view, "test data input");
    if (!matches.is_ok()) {
      return make_status(StatusCode::kUnsupported,
                         "the test data disagrees with the model: ", matches.message());
    }
  }
  std::vector<HostTensor> outputs;
  for (const auto& info : model.outputs()) outputs.push_back(empty_tensor(info));
  std::vector<TensorView> in;
  std::vector<TensorView> out;
  for (auto& t : inputs) in.push_back(TensorView{t.data.data(), t.dtype, t.shape, Device{}});
  for (auto& t : outputs) out.push_back(TensorView{t.data.data(), t.dtype, t.shape, Device{}});
  ONEPOOL_RETURN_IF_ERROR(session.run(in, out));
  keep_actual_shapes(session, outputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Comparison c = compare_tensors(outputs[i], expected[i], flags.atol, flags.rtol);
    if (c.match) continue;
    if (!c.problem.empty()) return str_cat("output '", model.outputs()[i].name, "': ", c.problem);
    return str_cat("output '", model.outputs()[i].name, "': ", c.mismatches, " of ",
                   outputs[i].element_count(), " elements differ, max abs diff ", c.max_abs_diff,
                   " (first at ", c.first_mismatch, ": got ", c.first_actual, ", expected ",
                   c.first_expected, ")");
  }
  return std::string();
}

// The values of the model's shape inputs, from the first data set's input_*.pb files.
Expected<std::map<std::string, ShapeInputValues>> shape_input_values(
    const std::filesystem::path& model_path, const std::filesystem::path& data_dir) {
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<ShapeInputUse> uses,
                           find_shape_inputs_in_file(model_path.string()));
  std::map<std::string, ShapeInputValues> values;
  if (uses.empty()) return values;
  ONEPOOL_ASSIGN_OR_RETURN(auto inputs, read_pb_directory(data_dir.string(), "input_"));
  for (const ShapeInputUse& use : uses) {
    if (use.model_position >= inputs.size()) {
      return make_status(StatusCode::kUnsupported, "shape input '", use.input, "' (graph input ",
                         use.model_position, ") has no input_*.pb in ",
                         data_dir.filename().string());
    }
    values[use.input] = shape_input_values_of(inputs[use.model_position]);
  }
  return values;
}

// Tests whose expected outputs contradict the operator's spec, with the reason. ONNX 1.12 made
// its float -> bfloat16 Cast data by truncating float32; Cast rounds to nearest even (as ONNX
// Runtime and the later ONNX reference do), and so does OnePool.
const char* reference_deviation(const std::string& test) {
  if (test == "test_cast_FLOAT_to_BFLOAT16") {
    return "the expected bfloat16 values truncate float32 (ONNX 1.12's data); Cast rounds to "
           "nearest even, as ONNX Runtime does";
  }
  return nullptr;
}

TestResult run_test(const std::filesystem::path& test_dir, const ConformanceFlags& flags) {
  if (const char* reason = reference_deviation(test_dir.filename().string())) {
    return {Verdict::kSkip, reason};
  }
  std::vector<std::filesystem::path> data_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(test_dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      data_dirs.push_back(entry.path());
    }
  }
  std::sort(data_dirs.begin(), data_dirs.end());
  if (data_dirs.empty()) return {Verdict::kSkip, "no test_data_set_* folder"};
  LoadOptions load_options;
  Expected<std::map<std::string, ShapeInputValues>> values =
      shape_input_values(test_dir / "model.onnx", data_dirs.front());
  if (!values) return skip_or_fail(values.status(), "shape inputs");
  load_options.shape_input_values = std::move(values).value();
  Expected<std::shared_ptr<const Model>> model =
      Model::load((test_dir / "model.onnx").string(), load_options);
  if (!model) return skip_or_fail(model.status(), "load");
  Expected<Device> device = Device::parse(flags.device);
  if (!device) return {Verdict::kFail, device.status().message()};
  SessionOptions options;
  options.device = *device;
  options.threads = flags.threads;
  Expected<std::unique_ptr<Session>> session = Session::create(*model, options);
  if (!session) return skip_or_fail(session.status(), "session");
  for (const auto& data_dir : data_dirs) {
    Expected<std::string> problem = run_data_set(**session, **model, data_dir, flags);
    if (!problem) return skip_or_fail(problem.status(), "run");
    if (!problem->empty()) return {Verdict::kFail, *problem};
  }
  return {Verdict::kPass, ""};
}

constexpr std::string_view kExpandedSuffix = "_expanded";
constexpr std::string_view kExpandedMark = " (expanded)";

// The op types of a model's top-level nodes, Constant aside unless it is the only one (empty
// when the model cannot be read).
std::set<std::string> model_op_types(const std::filesystem::path& test_dir) {
  Expected<ModelInfo> info = inspect_onnx_file((test_dir / "model.onnx").string());
  std::set<std::string> ops;
  if (!info) return ops;
  for (const auto& [op, count] : info->op_histogram) ops.insert(op);
  if (ops.size() > 1) ops.erase("Constant");
  return ops;
}

// The operator of each test (see the file comment), in the order of `tests`.
std::vector<std::string> test_operators(const std::vector<std::filesystem::path>& tests) {
  std::vector<std::set<std::string>> ops;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < tests.size(); ++i) {
    ops.push_back(model_op_types(tests[i]));
    by_name[tests[i].filename().string()] = i;
  }
  std::vector<std::string> result;
  for (size_t i = 0; i < tests.size(); ++i) {
    const std::string name = tests[i].filename().string();
    if (ops[i].size() == 1) {
      result.push_back(*ops[i].begin());
      continue;
    }
    const bool expanded = name.size() > kExpandedSuffix.size() && name.ends_with(kExpandedSuffix);
    if (expanded) {
      const auto base = by_name.find(name.substr(0, name.size() - kExpandedSuffix.size()));
      if (base != by_name.end() && ops[base->second].size() == 1) {
        result.push_back(str_cat(*ops[base->second].begin(), kExpandedMark));
        continue;
      }
    }
    result.push_back(name.rfind("test_", 0) == 0 ? name.substr(5) : name);
  }
  return result;
}

bool operator_matches(const std::string& op, const std::string& wanted) {
  return op == wanted || op == str_cat(wanted, kExpandedMark);
}

// A skip reason without what differs between tests of one op: the last line of a multi-line
// reason, without the model path or node names ("node 'Foo_0' (Foo): ").
std::string reason_summary(const std::string& reason) {
  std::string line = reason;
  const size_t newline = line.find_last_of('\n', line.size() > 1 ? line.size() - 2 : 0);
  if (newline != std::string::npos && newline + 1 < line.size()) line = line.substr(newline + 1);
  line.erase(0, line.find_first_not_of(' '));
  const size_t model = line.find("/model.onnx': ");
  if (model != std::string::npos) {
    const size_t quote = line.rfind('\'', model);
    const size_t from = quote == std::string::npos ? 0 : quote;
    line.erase(from, model + 14 - from);
  }
  // Only a node prefix (at the start or after "phase: "), not "(from node 'x' (Add))".
  size_t at = line.find("node '");
  while (at != std::string::npos) {
    const size_t end = line.find("): ", at);
    if (end == std::string::npos) break;
    const bool prefix = at == 0 || (at >= 2 && line.compare(at - 2, 2, ": ") == 0);
    if (prefix) line.erase(at, end + 3 - at);
    at = line.find("node '", prefix ? at : at + 1);
  }
  return line;
}

struct OperatorSummary {
  int counts[3] = {0, 0, 0};
  std::map<std::string, int> skip_reasons;
};

void print_operator_table(const std::map<std::string, OperatorSummary>& table) {
  size_t width = 8;
  for (const auto& [op, summary] : table) width = std::max(width, std::min<size_t>(op.size(), 36));
  std::printf("\nper operator: passed / failed / skipped (commonest skip reason)\n");
  for (const auto& [op, summary] : table) {
    std::printf("  %-*s %3d / %d / %-3d", static_cast<int>(width), op.c_str(), summary.counts[0],
                summary.counts[1], summary.counts[2]);
    if (!summary.skip_reasons.empty()) {
      const auto top =
          std::max_element(summary.skip_reasons.begin(), summary.skip_reasons.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      std::printf("  %s", top->first.c_str());
      if (summary.skip_reasons.size() > 1) {
        std::printf(" (+%zu other reasons)", summary.skip_reasons.size() - 1);
      }
    }
    std::printf("\n");
  }
  std::printf("\n");
}

void print_progress(size_t done, size_t total, const int counts[3]) {
  const int width = 40;
  const auto filled = static_cast<int>(width * done / std::max<size_t>(total, 1));
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu  pass %d  fail %d  skip %d", filled,
               "########################################", width - filled, "", done, total,
               counts[0], counts[1], counts[2]);
  std::fflush(stderr);
}

int run_conformance(const ConformanceFlags& flags) {
  std::error_code error;
  std::vector<std::filesystem::path> tests;
  for (const auto& entry : std::filesystem::directory_iterator(flags.directory, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !std::filesystem::exists(entry.path() / "model.onnx")) continue;
    if (!flags.filter.empty() && name.find(flags.filter) == std::string::npos) continue;
    tests.push_back(entry.path());
  }
  if (error) {
    return report_error(make_status(StatusCode::kNotFound, "cannot read '", flags.directory,
                                    "': ", error.message()));
  }
  std::sort(tests.begin(), tests.end());
  std::vector<std::string> operators = test_operators(tests);
  if (!flags.op.empty()) {
    std::vector<std::filesystem::path> kept_tests;
    std::vector<std::string> kept_operators;
    for (size_t i = 0; i < tests.size(); ++i) {
      if (!operator_matches(operators[i], flags.op)) continue;
      kept_tests.push_back(tests[i]);
      kept_operators.push_back(operators[i]);
    }
    if (kept_tests.empty()) {
      return report_error(make_status(StatusCode::kNotFound, "no test in '", flags.directory,
                                      "' is of operator '", flags.op, "'"));
    }
    tests = std::move(kept_tests);
    operators = std::move(kept_operators);
  }
  std::printf("conformance: %zu tests in %s (device %s, atol %g, rtol %g)\n", tests.size(),
              flags.directory.c_str(), flags.device.c_str(), flags.atol, flags.rtol);
  const bool progress_bar = isatty(STDERR_FILENO) != 0 && isatty(STDOUT_FILENO) != 0;
  int counts[3] = {0, 0, 0};
  std::map<std::string, OperatorSummary> table;
  const char* labels[3] = {"PASS", "FAIL", "SKIP"};
  for (size_t i = 0; i < tests.size(); ++i) {
    const TestResult result = run_test(tests[i], flags);
    const int kind = static_cast<int>(result.verdict);
    ++counts[kind];
    OperatorSummary& summary = table[operators[i]];
    ++summary.counts[kind];
    if (result.verdict == Verdict::kSkip) ++summary.skip_reasons[reason_summary(result.reason)];
    const bool show = result.verdict == Verdict::kFail || (!flags.quiet && !progress_bar);
    if (show) {
      if (progress_bar) std::fprintf(stderr, "\r%*s\r", 100, "");
      std::printf("%s %s%s%s\n", labels[kind], tests[i].filename().c_str(),
                  result.reason.empty() ? "" : ": ", result.reason.c_str());
      std::fflush(stdout);
    }
    if (progress_bar) print_progress(i + 1, tests.size(), counts);
  }
  if (progress_bar) std::fprintf(stderr, "\n");
  if (!flags.quiet) print_operator_table(table);
  std::printf("%d passed, %d failed, %d skipped\n", counts[0], counts[1], counts[2]);
  if (counts[0] < flags.min_pass) {
    std::fprintf(stderr, "error: %d tests passed, fewer than --min-pass %d\n", counts[0],
                 flags.min_pass);
    return 1;
  }
  return counts[1] == 0 ? 0 : 1;
}

}  // namespace

void register_conformance_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ConformanceFlags>();
  CLI::App* command = app.add_subcommand("conformance", "run the ONNX backend node tests");
  command->add_option("directory", flags->directory, "folder of test_* folders")->required();
  command->add_option("--filter", flags->filter, "only tests whose name contains this");
  command->add_option("--op", flags->op,
                      "only the tests of this operator (e.g. Trilu; its _expanded tests too)");
  command->add_option("--device", flags->device, "cpu or cuda:N")->capture_default_str();
  command->add_option("--atol", flags->atol, "absolute tolerance")->capture_default_str();
  command->add_option("--rtol", flags->rtol, "relative tolerance")->capture_default_str();
  command->add_option("--threads", flags->threads, "CPU threads")->capture_default_str();
  command->add_option("--min-pass", flags->min_pass, "fail if fewer tests pass");
  command->add_flag("-q,--quiet", flags->quiet, "print only failures and the total");
  command->callback([flags, &exit_code] { exit_code = run_conformance(*flags); });
}

}  // namespace onepool::cli
