// `onepool plan` loads the model as `run` does (Model::load) and plans it as the Session would
// (Plan::build on --device's backend): the pool it prints is the pool `run` uses, also where the
// load pipeline rewrites the graph (QDQ fusion) or reorders it (--schedule memory).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {
namespace {

struct PipelineCli {
  std::string binary = env_or_empty("ONEPOOL_CLI");
  std::string models = env_or_empty("ONEPOOL_MODELS_DIR");
  ScratchDir dir{"onepool_plan_pipeline"};

  CommandResult onepool(const std::string& arguments) const {
    REQUIRE_MESSAGE(!binary.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
    return run_command(shell_quote(binary) + " " + arguments, dir.file("out.txt"));
  }
  std::string model(const std::string& file) const {
    const std::string path = models + "/" + file;
    REQUIRE_MESSAGE(std::filesystem::exists(path), "generated model missing: ", path);
    return shell_quote(path);
  }
};

// The first number after `prefix` on a line ("pool:   140,288 B"), commas removed.
std::string bytes_after(const std::string& text, const std::string& prefix) {
  std::smatch match;
  const std::regex pattern(prefix + R"(\s*([0-9,]+) B)");
  REQUIRE_MESSAGE(std::regex_search(text, match, pattern), "no '", prefix, "' in:\n", text);
  std::string digits = match[1];
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  return digits;
}

// x [2,64] -> Relu -> ai.onnx.ml.Normalizer -> y: the second node has no CPU kernel.
void write_model_without_a_kernel(const std::string& path) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* ml = model.add_opset_import();
  ml->set_domain(std::string("ai.onnx.ml"));
  ml->set_version(3);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(std::string("ml"));
  add_float_io(graph->add_input(), "x", {"2", "64"});
  add_float_io(graph->add_output(), "y", {"2", "64"});
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type(std::string("Relu"));
  relu->add_input(std::string("x"));
  relu->add_output(std::string("r"));
  onnx::NodeProto* normalizer = graph->add_node();
  normalizer->set_op_type(std::string("Normalizer"));
  normalizer->set_domain(std::string("ai.onnx.ml"));
  normalizer->add_input(std::string("r"));
  normalizer->add_output(std::string("y"));
  onnx::AttributeProto* norm = normalizer->add_attribute();
  norm->set_name(std::string("norm"));
  norm->set_type(onnx::AttributeProto::STRING);
  norm->set_s(std::string("MAX"));
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
}

}  // namespace

TEST_CASE("plan still plans a model OnePool cannot run, and says so") {
  const PipelineCli cli;
  const std::string path = cli.dir.file("ml.onnx");
  write_model_without_a_kernel(path);
  const CommandResult plan = cli.onepool("plan " + shell_quote(path));
  INFO(plan.output);
  CHECK(plan.exit_code == 0);
  CHECK(plan.output.find("(1 node(s) without one: this model cannot run)") != std::string::npos);
  CHECK(bytes_after(plan.output, "pool:") == "1024");
  const CommandResult run = cli.onepool("run " + shell_quote(path));
  CHECK(run.exit_code == 1);
  CHECK(run.output.find("op 'ai.onnx.ml.Normalizer' has no CPU kernel") != std::string::npos);
}

TEST_CASE("plan prints the pool run uses: QDQ fusion and the memory schedule included") {
  const PipelineCli cli;
  for (const std::string& arguments :
       {cli.model("cnn_qdq_int8.onnx"), cli.model("unet.onnx") + " --schedule memory",
        cli.model("mlp.onnx") + " --dim batch=3 --external all"}) {
    CAPTURE(arguments);
    const CommandResult plan = cli.onepool("plan " + arguments);
    const CommandResult run = cli.onepool("run " + arguments);
    REQUIRE_MESSAGE(plan.exit_code == 0, plan.output);
    REQUIRE_MESSAGE(run.exit_code == 0, run.output);
    CHECK(bytes_after(plan.output, "pool:") == bytes_after(run.output, "memory:    pool"));
    CHECK(plan.output.find("workspaces from the cpu kernels") != std::string::npos);
  }
  const CommandResult qdq = cli.onepool("plan " + cli.model("cnn_qdq_int8.onnx"));
  CHECK(qdq.output.find("fused 4 QDQ") != std::string::npos);
}

TEST_CASE("plan --device: another backend's kernels, or a clear error without its device") {
  const PipelineCli cli;
  const CommandResult result =
      cli.onepool("plan " + cli.model("mlp.onnx") + " --dim batch=1 --device cuda:0");
  INFO(result.output);
  if (result.exit_code == 0) {  // a machine with a GPU
    CHECK(result.output.find("workspaces from the cuda:0 kernels") != std::string::npos);
    return;
  }
  CHECK(result.exit_code == 1);
  CHECK(result.output.find("cuda:0") != std::string::npos);
  const CommandResult bad = cli.onepool("plan " + cli.model("mlp.onnx") + " --device gpu");
  CHECK(bad.exit_code != 0);
}

// A runtime If: every branch plan is listed with its region in the parent pool, and its tensors
// show in the table (--table), in the JSON and as a collapsible group in the HTML.
TEST_CASE("plan shows each nested plan, its region and its tensors") {
  PipelineCli cli;
  const std::string model = cli.model("if_runtime.onnx");
  const CommandResult table = cli.onepool("plan " + model + " --table");
  INFO(table.output);
  REQUIRE(table.exit_code == 0);
  CHECK(table.output.find("nested:      if_a then_branch: 11 tensors") != std::string::npos);
  CHECK(table.output.find("region if_a:workspace at [0, 2,560) of the pool, step 3") !=
        std::string::npos);
  CHECK(table.output.find("\nnested plan if_b else_branch: ") != std::string::npos);
  CHECK(table.output.find("a_lstm.lstm:workspace") != std::string::npos);
  // The If inside the then branch: its own branch plans, inside that branch's pool.
  CHECK(table.output.find("\nnested plan a_lstm.inner_if then_branch: ") != std::string::npos);
  CHECK(table.output.find("region a_lstm.inner_if:workspace at [0, ") != std::string::npos);
  const std::string json_path = cli.dir.file("plan.json");
  const CommandResult json =
      cli.onepool("plan " + model + " --format json -o " + shell_quote(json_path));
  REQUIRE_MESSAGE(json.exit_code == 0, json.output);
  const std::string json_text = read_text(json_path);
  CHECK(json_text.find("\"tensor_list\": [") != std::string::npos);
  CHECK(json_text.find("\"name\": \"b_gru.gru:workspace\"") != std::string::npos);
  CHECK(json_text.find("\"node\": \"a_lstm.inner_if\"") != std::string::npos);
  const std::string html_path = cli.dir.file("plan.html");
  const CommandResult html =
      cli.onepool("plan " + model + " --format html -o " + shell_quote(html_path));
  REQUIRE_MESSAGE(html.exit_code == 0, html.output);
  const std::string html_text = read_text(html_path);
  CHECK(html_text.find("<h2>Nested plans: 4 ") != std::string::npos);
  CHECK(html_text.find("<details class=\"nested\" data-node=\"if_b\" "
                       "data-body=\"then_branch\"><summary>nested plan if_b then_branch: ") !=
        std::string::npos);
  CHECK(html_text.find("<svg class=\"nested-chart\"") != std::string::npos);
  CHECK(html_text.find("<td>b_lstm.activated</td>") != std::string::npos);
  CHECK(html_text.find("data-node=\"b_lstm.inner_if\"") != std::string::npos);
}

}  // namespace onepool::test
