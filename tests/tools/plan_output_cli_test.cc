// What `onepool plan` prints: by default the configuration, the chart, the tensors live at the
// peak and the summary (the per-tensor table only with --table / -v); chart symbols that never
// name two tensors; aliases named by their owner's name; one planning time; step counts of plans
// from records.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli_run.h"

namespace onepool::test {
namespace {

struct PlanCli {
  std::string binary = env_or_empty("ONEPOOL_CLI");
  std::string mlp = env_or_empty("ONEPOOL_MODELS_DIR") + "/mlp.onnx";
  ScratchDir dir{"onepool_plan_output"};

  CommandResult plan(const std::string& arguments) const {
    REQUIRE_MESSAGE(!binary.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
    return run_command(shell_quote(binary) + " plan " + arguments, dir.file("out.txt"));
  }
  std::string mlp_arguments() const {
    REQUIRE_MESSAGE(std::filesystem::exists(mlp), "generated model missing: ", mlp);
    return shell_quote(mlp) + " --dim batch=1";
  }
};

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// The table's rows: lines after the "ch  name" header up to the first empty line.
std::vector<std::string> table_rows(const std::string& output) {
  std::vector<std::string> rows;
  std::istringstream lines(output);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line.rfind("ch  name", 0) == 0) {
      inside = true;
      continue;
    }
    if (inside && line.empty()) break;
    if (inside) rows.push_back(line);
  }
  return rows;
}

}  // namespace

// mlp at batch 1: 5 tensors (x, relu, relu_1, fc3 and probs, a view of fc3). The default shows
// no table, says how to get it, and names the peak tensors (A x and B relu at step 0);
// --table and -v add the table, where probs reads "in fc3+0" (no "#id").
TEST_CASE("plan: default output is the summary, the chart and the peak; --table adds the rest") {
  const PlanCli cli;
  const CommandResult plain = cli.plan(cli.mlp_arguments());
  REQUIRE_MESSAGE(plain.exit_code == 0, plain.output);
  INFO(plain.output);
  CHECK_FALSE(has(plain.output, "ch  name"));
  CHECK(has(plain.output, "all 5 tensors (op, shape, offset, steps): add --table or -v\n"));
  CHECK(has(plain.output, "peak at step 0: 5,376 B (5.25 KiB) in 2 tensors\n"));
  CHECK(has(plain.output, "  A x "));
  CHECK(has(plain.output, "  B relu "));
  CHECK(has(plain.output, "legend:  A x  B relu  C relu_1  D fc3\n"));

  for (const char* flag : {"--table", "-v", "--format table"}) {
    const CommandResult full = cli.plan(cli.mlp_arguments() + " " + flag);
    REQUIRE_MESSAGE(full.exit_code == 0, full.output);
    INFO(flag, "\n", full.output);
    const std::vector<std::string> rows = table_rows(full.output);
    REQUIRE(rows.size() == 5);
    CHECK(rows[4].rfind("-   probs", 0) == 0);
    CHECK(has(rows[4], "in fc3+0"));
    CHECK_FALSE(has(full.output, "alias of #"));
    CHECK_FALSE(has(full.output, "add --table or -v"));
  }
}

// One planning time: the header gives only the load time, the summary's one "planning:" line
// gives the total with placement as its part; the plan's shape is its own line.
TEST_CASE("plan: one planning time, listed with its parts") {
  const PlanCli cli;
  const CommandResult result = cli.plan(cli.mlp_arguments());
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  INFO(result.output);
  CHECK(count_of(result.output, "planning:") == 1);
  CHECK(count_of(result.output, "placement") == 1);
  CHECK(has(result.output, "liveness, sharing and checks"));
  CHECK(has(result.output, "plan:        auto, alignment 256 B, 5 tensors, 4 steps\n"));
}

// Ranges plan at their top, as a static-mode DynamicSession does at creation: the same pool as
// the top shape given plainly, and the header says which shape it planned. A bad range is an
// error naming the entry.
TEST_CASE("plan: --shapes ranges plan at the top of each range") {
  const PlanCli cli;
  const std::string fpn = env_or_empty("ONEPOOL_MODELS_DIR") + "/dyn_fpn.onnx";
  REQUIRE_MESSAGE(std::filesystem::exists(fpn), "generated model missing: ", fpn);
  const CommandResult ranged =
      cli.plan(shell_quote(fpn) + " --shapes 'input:1x3x[16..64:16]x[8..40:8]' --format json");
  REQUIRE_MESSAGE(ranged.exit_code == 0, ranged.output);
  const CommandResult top = cli.plan(shell_quote(fpn) + " --shapes input:1x3x64x40 --format json");
  REQUIRE_MESSAGE(top.exit_code == 0, top.output);
  const auto pool_of = [](const std::string& json) {
    const size_t at = json.find("\"pool_bytes\"");
    REQUIRE(at != std::string::npos);
    return json.substr(at, json.find(',', at) - at);
  };
  CHECK(pool_of(ranged.output) == pool_of(top.output));

  const CommandResult text = cli.plan(shell_quote(fpn) + " --shapes 'input:1x3x[16..64]x40'");
  REQUIRE_MESSAGE(text.exit_code == 0, text.output);
  CHECK(has(text.output, "shapes:     input:1x3x64x40 (the top of the --shapes ranges)\n"));

  const CommandResult bad = cli.plan(shell_quote(fpn) + " --shapes 'input:1x3x[64..16]x40'");
  CHECK(bad.exit_code != 0);
  CHECK(has(bad.output, "input"));
}

// 70 records, record i live in [i, i+1) with 1000 + i bytes (--alignment 1 keeps them distinct):
// the 62 largest (ids 8..69) get 62 distinct letters, A at step 8, in step order; ids 0..7 get
// '+'; no letter names two tensors. The plan spans 70 steps (not "0 steps").
TEST_CASE("plan: chart symbols never repeat and records plans count their steps") {
  const PlanCli cli;
  std::string csv = "id,lower,upper,size\n";
  for (int i = 0; i < 70; ++i) {
    csv += std::to_string(i) + "," + std::to_string(i) + "," + std::to_string(i + 1) + "," +
           std::to_string(1000 + i) + "\n";
  }
  write_text(cli.dir.file("records.csv"), csv);
  const CommandResult result =
      cli.plan("--records " + shell_quote(cli.dir.file("records.csv")) + " --table --alignment 1");
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  INFO(result.output);
  const std::vector<std::string> rows = table_rows(result.output);
  REQUIRE(rows.size() == 70);
  std::map<char, int> uses;
  for (const std::string& row : rows) ++uses[row[0]];
  CHECK(uses['+'] == 8);
  CHECK(uses.size() == 63);  // 62 letters and '+'
  for (const auto& [symbol, count] : uses) {
    if (symbol != '+') CHECK_MESSAGE(count == 1, "symbol ", symbol, " names ", count, " tensors");
  }
  CHECK(rows[0][0] == '+');
  CHECK(rows[8][0] == 'A');
  CHECK(rows[69][0] == '9');
  CHECK(has(result.output, "+ smaller tensors"));
  CHECK(has(result.output, ", 70 tensors, 70 steps\n"));
  CHECK_FALSE(has(result.output, " 0 steps"));
}

}  // namespace onepool::test
