// The CLI's --values flag (shape inputs bound at load) on the ONNX node test test_slice: x
// [20,10,5] float with starts, ends, axes and steps as graph inputs. Its data set feeds
// starts [0,0], ends [3,10], axes [0,1], steps [1,1]: y is x[0:3, 0:10] = [3,10,5].
#include <doctest/doctest.h>

#include <filesystem>

#include "tools/cli_run.h"

namespace onepool::test {
namespace {

const std::string kSlice = "/usr/share/libonnx-testdata/data/node/test_slice";
const std::string kValues = "starts:0,0;ends:3,10;axes:0,1;steps:1,1";

std::string cli_or_skip() {
  const std::string cli = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(cli.empty());
  if (!std::filesystem::exists(kSlice + "/model.onnx")) {
    MESSAGE("skipped: no ONNX node tests at " << kSlice);
    std::exit(77);
  }
  return cli;
}

}  // namespace

// Without --values the load fails (exit 1), naming each shape input and the flag to use.
TEST_CASE("cli --values: a model with shape inputs needs their values") {
  const std::string cli = cli_or_skip();
  ScratchDir dir("onepool_cli_values");
  const CommandResult result = run_command(
      shell_quote(cli) + " plan " + shell_quote(kSlice + "/model.onnx"), dir.file("out.txt"));
  CHECK(result.exit_code == 1);
  CHECK(result.output.find("input 'starts': node 'Slice_0' (Slice) input 1 (starts) needs its "
                           "value") != std::string::npos);
  CHECK(result.output.find("--values starts:...;ends:...;axes:...;steps:...") != std::string::npos);
}

// With the values (one flag, or the same split over repeated flags) plan shows them and y is
// [3,10,5]; compare against the data set (which feeds the shape inputs too) matches.
TEST_CASE("cli --values: bound values plan and run the model") {
  const std::string cli = cli_or_skip();
  ScratchDir dir("onepool_cli_values");
  const std::string model = shell_quote(kSlice + "/model.onnx");
  const CommandResult plan = run_command(
      shell_quote(cli) + " plan " + model + " --values " + shell_quote(kValues), dir.file("a.txt"));
  CHECK(plan.exit_code == 0);
  CHECK(plan.output.find("values:     axes:0,1;ends:3,10;starts:0,0;steps:1,1") !=
        std::string::npos);
  const CommandResult run =
      run_command(shell_quote(cli) + " run " + model +
                      " --values 'starts:0,0;ends:3,10' --values 'axes:0,1' --values steps:1,1",
                  dir.file("b.txt"));
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("[3,10,5]") != std::string::npos);
  const CommandResult compare =
      run_command(shell_quote(cli) + " compare " + model + " --values " + shell_quote(kValues) +
                      " --ref " + shell_quote(kSlice + "/test_data_set_0"),
                  dir.file("c.txt"));
  CHECK_MESSAGE(compare.exit_code == 0, compare.output);
}

// A bad entry is a usage error naming it. Axes swapped (ends [10,3] on axes [1,0]) slice the
// same [3,10,5], but the data set feeds ends [3,10]: an error naming the input and both values.
TEST_CASE("cli --values: bad values") {
  const std::string cli = cli_or_skip();
  ScratchDir dir("onepool_cli_values");
  const std::string model = shell_quote(kSlice + "/model.onnx");
  const CommandResult bad = run_command(
      shell_quote(cli) + " plan " + model + " --values 'starts:0,x'", dir.file("a.txt"));
  CHECK(bad.exit_code != 0);
  CHECK(bad.output.find("--values entry 'starts:0,x': 'x' is not an int64 integer") !=
        std::string::npos);
  const CommandResult differs =
      run_command(shell_quote(cli) + " compare " + model +
                      " --values 'starts:0,0;ends:10,3;axes:1,0;steps:1,1' --ref " +
                      shell_quote(kSlice + "/test_data_set_0"),
                  dir.file("b.txt"));
  CHECK(differs.exit_code != 0);
  CHECK(differs.output.find("input 'ends': bound to [10,3] at load, got [3,10]") !=
        std::string::npos);
}

}  // namespace onepool::test
