// `onepool compare`: --ref reference (no optimization, the plain plan, 1 thread) against the
// default configuration, --layerwise naming the first diverging node, --validate failing on
// NaN/Inf, and the exit statuses 0 match, 1 mismatch, 2 usage, 3 could not run. The broken
// kernel is the testing aid --debug-perturb NODE (SessionOptions::debug_perturb_node).
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <fstream>

#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {

namespace {

CommandResult compare(const ScratchDir& dir, const std::string& args) {
  const std::string binary = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(binary.empty());
  return run_command(shell_quote(binary) + " compare " + args, dir.file("out.txt"));
}

std::string generated(const std::string& file) {
  const std::string models = env_or_empty("ONEPOOL_MODELS_DIR");
  REQUIRE_FALSE(models.empty());
  return shell_quote(models + "/" + file);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// y = Log(x), x and y float32 [1,4]: NaN for every negative x, in every run.
void write_log_model(const std::string& path) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("log");
  add_float_io(graph->add_input(), "x", {"1", "4"});
  add_float_io(graph->add_output(), "y", {"1", "4"});
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("Log");
  node->set_name("log");
  node->add_input(std::string("x"));
  node->add_output(std::string("y"));
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
}

const char* kResnet18 = "resnet18.onnx";
const char* kResnet18Shapes = " --shapes input:1x3x224x224";

}  // namespace

// The reference configuration agrees with the default one on three generated models, output
// and every intermediate both runs have: resnet18 has 24 tensors after fusing BN, Relu and the
// residual Adds (with their Relus) into its 20 Convs (20 Conv, MaxPool, GlobalAveragePool,
// Flatten, Gemm), the MLP 4.
TEST_CASE("compare: the reference agrees with the default configuration") {
  ScratchDir dir("onepool_compare_cli");
  struct Case {
    std::string args;
    std::string compared;
  };
  const Case cases[] = {
      {generated("mlp.onnx") + " --dim batch=1", "layerwise: 4 tensor(s)"},
      {generated(kResnet18) + kResnet18Shapes, "layerwise: 24 tensor(s)"},
      {generated("mobilenetv2.onnx"), "layerwise: "},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const CommandResult result = compare(dir, c.args + " --ref reference --layerwise --validate");
    CHECK_MESSAGE(result.exit_code == 0, result.output);
    CHECK(has(result.output, "--optimize none --algorithm linear --aliasing off"));
    CHECK(has(result.output, c.compared));
    CHECK(has(result.output, "layerwise: no divergence"));
    CHECK(has(result.output, "validate: every output is finite"));
    CHECK(has(result.output, "compare: PASS"));
  }
}

// A +1 on the first element of one Conv's output (its BN and Relu fused in) is found at that
// node, not at an earlier one nor at a later one it feeds: got = expected + 1 at index 0. The
// final output moves too (exit 1). Unoptimized, the same perturbation lands on the raw Conv.
TEST_CASE("compare: --layerwise names the first diverging node") {
  ScratchDir dir("onepool_compare_cli");
  const std::string model = generated(kResnet18) + kResnet18Shapes + " --ref reference --layerwise";
  for (const char* node : {"layer2.0.conv1", "layer3.1.conv2"}) {
    CAPTURE(node);
    const CommandResult result = compare(dir, model + " --debug-perturb " + node);
    CHECK_MESSAGE(result.exit_code == 1, result.output);
    CHECK_MESSAGE(has(result.output, std::string("first divergence at node '") + node + "' (Conv)"),
                  result.output);
    CHECK(has(result.output, "max abs diff 1, 1 element(s) outside"));
    CHECK(has(result.output, "first at index 0"));
    CHECK(has(result.output, "compare: FAIL"));
  }
  const CommandResult raw = compare(dir, model + " --optimize none --debug-perturb layer1.0.conv1");
  CHECK_MESSAGE(raw.exit_code == 1, raw.output);
  CHECK_MESSAGE(has(raw.output,
                    "first divergence at node 'layer1.0.conv1' (Conv), output "
                    "'layer1.0.conv1'"),
                raw.output);
}

// Log of x in [-2,-1] is NaN in both runs: they match (NaN matches NaN), exit 0; --validate
// fails on it (exit 1) and names the output and index 0.
TEST_CASE("compare: --validate fails on NaN") {
  ScratchDir dir("onepool_compare_cli");
  write_log_model(dir.file("log.onnx"));
  const std::string args =
      shell_quote(dir.file("log.onnx")) + " --ref reference --val-range -2,-1 --seed 3";
  const CommandResult plain = compare(dir, args);
  CHECK_MESSAGE(plain.exit_code == 0, plain.output);
  const CommandResult validated = compare(dir, args + " --validate");
  CHECK_MESSAGE(validated.exit_code == 1, validated.output);
  CHECK_MESSAGE(has(validated.output, "NON-FINITE y: NaN at index 0"), validated.output);
  // A NaN written by a broken kernel into a finite model: caught the same way.
  const CommandResult perturbed =
      compare(dir, generated("mlp.onnx") +
                       " --dim batch=1 --ref reference --validate --debug-perturb fc3 "
                       "--debug-perturb-value nan");
  CHECK_MESSAGE(perturbed.exit_code == 1, perturbed.output);
  CHECK(has(perturbed.output, "NON-FINITE probs: NaN at index 0"));
}

// Could not run is 3 (a missing file, a node that is not there), a usage error 2 (--layerwise
// needs a run to compare with, a negative tolerance), and never 1, which means "mismatch".
TEST_CASE("compare: exit statuses tell a mismatch from a failure") {
  ScratchDir dir("onepool_compare_cli");
  const CommandResult missing =
      compare(dir, shell_quote(dir.file("none.onnx")) + " --ref reference");
  CHECK_MESSAGE(missing.exit_code == 3, missing.output);
  const CommandResult no_node =
      compare(dir, generated("mlp.onnx") + " --dim batch=1 --ref reference --debug-perturb nope");
  CHECK_MESSAGE(no_node.exit_code == 3, no_node.output);
  CHECK(has(no_node.output, "no node named 'nope'"));
  const CommandResult dir_layerwise = compare(dir, generated("mlp.onnx") + " --dim batch=1 --ref " +
                                                       shell_quote(dir.file("")) + " --layerwise");
  CHECK_MESSAGE(dir_layerwise.exit_code == 2, dir_layerwise.output);
  CHECK(has(dir_layerwise.output, "--layerwise needs a reference run"));
  const CommandResult negative =
      compare(dir, generated("mlp.onnx") + " --dim batch=1 --ref reference --atol -1");
  CHECK_MESSAGE(negative.exit_code == 2, negative.output);
  const CommandResult help = compare(dir, "--help");
  CHECK(has(help.output, "3 could not run"));
}

}  // namespace onepool::test
