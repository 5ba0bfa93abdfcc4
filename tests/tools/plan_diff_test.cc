// `onepool plan --diff A.json B.json`: the diff itself (unit) and the command's exit statuses.
#include "planner/render/plan_diff.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "onepool/plan.h"
#include "tools/cli_run.h"

namespace onepool {
namespace {

PlannedTensor tensor(int32_t id, std::string name, size_t bytes, size_t offset, int64_t first,
                     int64_t last) {
  PlannedTensor t;
  t.id = id;
  t.name = std::move(name);
  t.producer_op = "Relu";
  t.bytes = bytes;
  t.offset = offset;
  t.first = first;
  t.last = last;
  return t;
}

// x [0,1] @0 256 B; y [1,2] @256 1024 B; z [2,3] @0 512 B. Pool 1280, LB 1280.
Plan base_plan() {
  Plan plan;
  plan.pool_bytes = 1280;
  plan.lower_bound_bytes = 1280;
  plan.naive_bytes = 1792;
  plan.algorithm = "greedy-by-size";
  plan.planning_ms = 0.5;
  plan.tensors = {tensor(0, "x", 256, 0, 0, 1), tensor(1, "y", 1024, 256, 1, 2),
                  tensor(2, "z", 512, 0, 2, 3)};
  return plan;
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

}  // namespace

// Only the planning time differs: no differences.
TEST_CASE("a plan against itself has no differences") {
  Plan again = base_plan();
  again.planning_ms = 7.0;
  const PlanDiff diff = diff_plans(base_plan(), again);
  CHECK(diff.empty());
  CHECK(has(render_plan_diff(diff, {}), "no differences"));
}

// Values wider than any fixed column (naive 202,311,168 B (192.94 MiB) vs 672,775,168 B (641.61
// MiB)) still leave two spaces before the next column, and every row starts column B where the
// header's "B" is.
TEST_CASE("the diff's columns stay aligned for wide values") {
  Plan a = base_plan();
  a.naive_bytes = 202311168;
  Plan b = base_plan();
  b.naive_bytes = 672775168;
  const std::string text = render_plan_diff(diff_plans(a, b), {});
  INFO(text);
  const size_t header = text.find("\n\n") + 2;
  const size_t b_column = text.find('B', header) - header;
  const std::string naive_a = "202,311,168 B (192.94 MiB)";
  const size_t naive_line = text.find("naive");
  REQUIRE(naive_line != std::string::npos);
  const std::string line = text.substr(naive_line, text.find('\n', naive_line) - naive_line);
  CHECK(line.find(naive_a + "  ") != std::string::npos);
  CHECK(line.find("672,775,168 B (641.61 MiB)") == b_column);
  const size_t pool_line = text.find("\npool") + 1;
  CHECK(text.substr(pool_line + b_column, 5) == "1,280");
}

// B drops z, adds w, grows y by 2048 B and moves x to 3328: pool 1280 -> 3584 (+2304, +180%).
// The changed table lists y (2048 B change) before x (offset only).
TEST_CASE("the diff lists summary deltas, added and removed tensors, and changes") {
  Plan b = base_plan();
  b.algorithm = "linear";
  b.pool_bytes = 3584;
  b.tensors = {tensor(0, "x", 256, 3328, 0, 1), tensor(1, "y", 3072, 256, 1, 2),
               tensor(3, "w", 256, 0, 2, 3)};
  const PlanDiff diff = diff_plans(base_plan(), b);
  CHECK_FALSE(diff.empty());
  CHECK(diff.only_in_a == std::vector<std::string>{"z"});
  CHECK(diff.only_in_b == std::vector<std::string>{"w"});
  REQUIRE(diff.changed.size() == 2);
  CHECK(diff.changed[0].name == "y");
  CHECK(diff.changed[0].bytes_change() == 2048);
  CHECK(diff.changed[1].name == "x");
  const std::string text = render_plan_diff(diff, {});
  CHECK(has(text, "+2304 (+180.00%)"));
  CHECK(has(text, "greedy-by-size"));
  CHECK(has(text, "linear"));
  CHECK(has(text, "1024 -> 3072"));
  CHECK(has(text, "0 -> 3328"));
  PlanDiffOptions capped;
  capped.max_changed_rows = 1;
  CHECK(has(render_plan_diff(diff, capped), "... and 1 more"));
}

namespace {

struct CliFixture {
  std::string cli = test::env_or_empty("ONEPOOL_CLI");
  std::string model = test::env_or_empty("ONEPOOL_MODELS_DIR") + "/mlp.onnx";
  test::ScratchDir dir{"onepool_plan_diff"};

  test::CommandResult onepool(const std::string& arguments) const {
    return test::run_command(test::shell_quote(cli) + " " + arguments, dir.file("cli.log"));
  }
  std::string save_plan(const std::string& algorithm, const std::string& name) const {
    const std::string path = dir.file(name);
    const test::CommandResult result =
        onepool(str_cat("plan ", test::shell_quote(model), " --dim batch=1 --algorithm ", algorithm,
                        " --format json -o ", test::shell_quote(path)));
    REQUIRE_MESSAGE(result.exit_code == 0, result.output);
    return test::shell_quote(path);
  }
};

}  // namespace

// The mlp planned by a greedy algorithm and by `linear` (no reuse) differ in pool and offsets;
// the same file twice has no differences; unreadable, non-JSON and wrong-schema files fail.
TEST_CASE("onepool plan --diff through the CLI") {
  const CliFixture fixture;
  REQUIRE_MESSAGE(!fixture.cli.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
  REQUIRE_MESSAGE(std::filesystem::exists(fixture.model),
                  "generated model missing: ", fixture.model);
  const std::string greedy = fixture.save_plan("greedy-by-size", "greedy.json");
  const std::string linear = fixture.save_plan("linear", "linear.json");

  const test::CommandResult changed = fixture.onepool(str_cat("plan --diff ", greedy, " ", linear));
  CHECK_MESSAGE(changed.exit_code == 0, changed.output);
  CHECK(has(changed.output, "algorithm"));
  CHECK(has(changed.output, "changed tensors ("));
  CHECK_FALSE(has(changed.output, "no differences"));

  const test::CommandResult same = fixture.onepool(str_cat("plan --diff ", greedy, " ", greedy));
  CHECK_MESSAGE(same.exit_code == 0, same.output);
  CHECK(has(same.output, "no differences"));

  const std::string not_json = fixture.dir.file("not_json.json");
  test::write_text(not_json, "pool: 12\n");
  const std::string wrong_schema = fixture.dir.file("schema.json");
  test::write_text(wrong_schema, "{\"schema_version\": 99}");
  for (const std::string& bad : {not_json, wrong_schema, fixture.dir.file("missing.json")}) {
    const test::CommandResult result =
        fixture.onepool(str_cat("plan --diff ", greedy, " ", test::shell_quote(bad)));
    CHECK_MESSAGE(result.exit_code == 1, result.output);
    CHECK(has(result.output, str_cat("plan file '", bad, "'")));
  }

  const test::CommandResult both = fixture.onepool(
      str_cat("plan ", test::shell_quote(fixture.model), " --diff ", greedy, " ", linear));
  CHECK(both.exit_code == 2);
  CHECK(has(both.output, "--diff compares two saved plans"));
}

}  // namespace onepool
