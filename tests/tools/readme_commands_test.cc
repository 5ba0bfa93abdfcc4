// The README's command lines run as written. Each line of the "## Command line" block runs
// against small stand-ins: MODEL.onnx is a Relu over x:[n,3,h,w] (so x:1x3x640x640 binds it),
// --inputs-dir / --ref use the ONNX node test test_relu and --values the test test_slice;
// optional [parts] are kept, the first of a|b alternatives is taken, N and DIR get values, and
// --duration 10 becomes 0.1 s. The conformance line is CTest's own test. The serving paths the
// README names are routes of serve_routes.cc.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <vector>

#include "tools/cli_run.h"
#include "tools/npy_files.h"
#include "tools/tiny_models.h"

namespace onepool::test {

namespace {

const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

std::string readme() {
  const std::string source = env_or_empty("ONEPOOL_SOURCE_DIR");
  REQUIRE_FALSE(source.empty());
  return read_text(source + "/README.md");
}

// The lines of the ```text block under "## Command line", comments cut.
std::vector<std::string> usage_lines(const std::string& text) {
  const size_t section = text.find("## Command line");
  REQUIRE(section != std::string::npos);
  const size_t begin = text.find("```text\n", section);
  const size_t end = text.find("```", begin + 8);
  REQUIRE(end != std::string::npos);
  std::vector<std::string> lines;
  std::istringstream block(text.substr(begin + 8, end - begin - 8));
  for (std::string line; std::getline(block, line);) {
    const size_t comment = line.find("  #");
    if (comment != std::string::npos) line.resize(comment);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The line with its placeholders swapped for the stand-ins; "" when it cannot run here.
std::string runnable(std::string line, const std::string& cli) {
  const bool node_tests = std::filesystem::exists(kNodeTests);
  if (line.find(" conformance ") != std::string::npos) return "";
  line = std::regex_replace(line, std::regex("[\\[\\]]"), "");
  line = std::regex_replace(line, std::regex("(\\S+?)\\|\\S+"), "$1");
  line = replace_all(line, "--duration 10", "--duration 0.1");
  line = replace_all(line, "--seed N", "--seed 7");
  line = replace_all(line, "--save-outputs DIR", "--save-outputs outputs");
  const std::string node = std::string(kNodeTests) + "/";
  if (line.find("--values") != std::string::npos) {
    if (!node_tests) return "";
    line = replace_all(line, "MODEL.onnx", node + "test_slice/model.onnx");
  }
  if (line.find("test_data_set_0") != std::string::npos) {
    if (!node_tests) return "";
    line = replace_all(line, "MODEL.onnx", node + "test_relu/model.onnx");
    line = replace_all(line, "test_data_set_0", node + "test_relu/test_data_set_0");
  }
  return replace_all(line, "build/onepool", shell_quote(cli));
}

// What the lines read: the model, inputs, a records file and two saved plans.
void write_stand_ins(const ScratchDir& dir, const std::string& cli) {
  write_relu_model(dir.file("MODEL.onnx"), {"n", "3", "h", "w"});
  write_npy_f32(dir.file("img.npy"), {1, 3, 640, 640});
  write_text(dir.file("img.bin"), std::string(1 * 3 * 640 * 640 * 4, '\0'));
  write_text(dir.file("instance.csv"), "id,lower,upper,size\n0,0,2,1024\n1,1,3,2048\n");
  for (const char* plan : {"a.json", "b.json"}) {
    const CommandResult saved =
        run_command("cd " + shell_quote(dir.file("")) + " && " + shell_quote(cli) +
                        " plan MODEL.onnx --shapes x:1x3x8x8 --format=json -o " + plan,
                    dir.file("plan.txt"));
    REQUIRE_MESSAGE(saved.exit_code == 0, saved.output);
  }
}

}  // namespace

// Every usage line exits 0 (before this test, the HTML line had no --shapes for a model with
// symbolic dims and failed: "3 symbolic dim(s) are unbound").
TEST_CASE("readme: every command line runs") {
  const std::string cli = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(cli.empty());
  ScratchDir dir("onepool_readme_commands");
  write_stand_ins(dir, cli);
  const std::vector<std::string> lines = usage_lines(readme());
  CHECK(lines.size() >= 10);
  for (const std::string& line : lines) {
    const std::string command = runnable(line, cli);
    if (command.empty()) continue;
    CAPTURE(line);
    const CommandResult result =
        run_command("cd " + shell_quote(dir.file("")) + " && " + command, dir.file("out.txt"));
    CHECK_MESSAGE(result.exit_code == 0, result.output);
  }
}

// The Serving section names only routes the server has: `/v2/models/{m}/X` is
// route_get(model + "/X"), `/metrics` is route_get("/metrics") (the README once said `/stats`).
TEST_CASE("readme: the serving paths are real routes") {
  const std::string text = readme();
  const size_t section = text.find("## Serving");
  REQUIRE(section != std::string::npos);
  const std::string paragraph = text.substr(section, text.find("\n\n", section + 12) - section);
  const std::string routes =
      read_text(env_or_empty("ONEPOOL_SOURCE_DIR") + "/tools/onepool/serve_routes.cc");
  std::smatch match;
  int checked = 0;
  for (auto at = paragraph.cbegin();
       std::regex_search(at, paragraph.cend(), match, std::regex("`(/[^`]*)`"));
       at = match[0].second) {
    const std::string path = match[1];
    CAPTURE(path);
    const std::string prefix = "/v2/models/{m}";
    const std::string route = path.rfind(prefix, 0) == 0
                                  ? "route_get(model + \"" + path.substr(prefix.size()) + "\""
                                  : "route_get(\"" + path + "\"";
    CHECK(routes.find(route) != std::string::npos);
    ++checked;
  }
  CHECK(checked >= 3);
}

}  // namespace onepool::test
