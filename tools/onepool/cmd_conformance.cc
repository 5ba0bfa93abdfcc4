// onepool conformance DIR: runs the ONNX backend node tests (DIR/test_*/model.onnx with
// test_data_set_*/input_*.pb and output_*.pb). Each test passes, fails, or is skipped with the
// reason (an op, attribute or dtype OnePool does not support). Exit 1 on any failure.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "tools/onepool/cli_common.h"
#include "tools/onepool/commands.h"
#include "tools/onepool/tensor_compare.h"
#include "tools/onepool/tensor_files.h"

namespace onepool::cli {

namespace {

struct ConformanceFlags {
  std::string directory;
  std::string filter;
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
  const Verdict verdict = status.code() == StatusCode::kUnsupported ? Verdict::kSkip : Verdict::kFail;
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

// Runs one data set; empty string when every output matches.
Expected<std::string> run_data_set(Session& session, const Model& model,
                                   const std::filesystem::path& data_dir,
                                   const ConformanceFlags& flags) {
  ONEPOOL_ASSIGN_OR_RETURN(auto inputs, read_pb_directory(data_dir.string(), "input_"));
  ONEPOOL_ASSIGN_OR_RETURN(auto expected, read_pb_directory(data_dir.string(), "output_"));
  if (inputs.size() != model.inputs().size() || expected.size() != model.outputs().size()) {
    return str_cat(data_dir.filename().string(), ": ", inputs.size(), " inputs / ",
                   expected.size(), " outputs on disk, the model has ", model.inputs().size(),
                   " / ", model.outputs().size());
  }
  adopt_bfloat16_bits(model.inputs(), inputs);
  adopt_bfloat16_bits(model.outputs(), expected);
  // A few node tests ship data that disagrees with their own model (e.g. a [1] tensor for a
  // declared [3,4] input): no runtime can run those as written, so they are skipped, not failed.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorView view{inputs[i].data.data(), inputs[i].dtype, inputs[i].shape, Device{}};
    const Status matches = check_tensor_matches(model.inputs()[i], view, "test data input");
    if (!matches.is_ok()) {
      return make_status(StatusCode::kUnsupported, "the test data disagrees with the model: ",
                         matches.message());
    }
  }
  std::vector<HostTensor> outputs;
  for (const auto& info : model.outputs()) outputs.push_back(empty_tensor(info));
  std::vector<TensorView> in;
  std::vector<TensorView> out;
  for (auto& t : inputs) in.push_back(TensorView{t.data.data(), t.dtype, t.shape, Device{}});
  for (auto& t : outputs) out.push_back(TensorView{t.data.data(), t.dtype, t.shape, Device{}});
  ONEPOOL_RETURN_IF_ERROR(session.run(in, out));
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

TestResult run_test(const std::filesystem::path& test_dir, const ConformanceFlags& flags) {
  LoadOptions load_options;
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
  std::vector<std::filesystem::path> data_dirs;
  for (const auto& entry : std::filesystem::directory_iterator(test_dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      data_dirs.push_back(entry.path());
    }
  }
  std::sort(data_dirs.begin(), data_dirs.end());
  if (data_dirs.empty()) return {Verdict::kSkip, "no test_data_set_* folder"};
  for (const auto& data_dir : data_dirs) {
    Expected<std::string> problem = run_data_set(**session, **model, data_dir, flags);
    if (!problem) return skip_or_fail(problem.status(), "run");
    if (!problem->empty()) return {Verdict::kFail, *problem};
  }
  return {Verdict::kPass, ""};
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
  std::printf("conformance: %zu tests in %s (device %s, atol %g, rtol %g)\n", tests.size(),
              flags.directory.c_str(), flags.device.c_str(), flags.atol, flags.rtol);
  const bool progress_bar = isatty(STDERR_FILENO) != 0 && isatty(STDOUT_FILENO) != 0;
  int counts[3] = {0, 0, 0};
  const char* labels[3] = {"PASS", "FAIL", "SKIP"};
  for (size_t i = 0; i < tests.size(); ++i) {
    const TestResult result = run_test(tests[i], flags);
    const int kind = static_cast<int>(result.verdict);
    ++counts[kind];
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
  command->add_option("--device", flags->device, "cpu or cuda:N")->capture_default_str();
  command->add_option("--atol", flags->atol, "absolute tolerance")->capture_default_str();
  command->add_option("--rtol", flags->rtol, "relative tolerance")->capture_default_str();
  command->add_option("--threads", flags->threads, "CPU threads")->capture_default_str();
  command->add_option("--min-pass", flags->min_pass, "fail if fewer tests pass");
  command->add_flag("-q,--quiet", flags->quiet, "print only failures and the total");
  command->callback([flags, &exit_code] { exit_code = run_conformance(*flags); });
}

}  // namespace onepool::cli
