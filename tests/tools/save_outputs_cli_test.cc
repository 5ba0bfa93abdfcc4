// `run --save-outputs DIR` writes .npy files by default (version 1.0, little-endian dtype, data
// at a multiple of 64 bytes) and raw .bin with --save-format bin, both listed in outputs.json.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {

namespace {

CommandResult cli(const ScratchDir& dir, const std::string& args) {
  const std::string binary = env_or_empty("ONEPOOL_CLI");
  REQUIRE_FALSE(binary.empty());
  return run_command(shell_quote(binary) + " " + args, dir.file("out.txt"));
}

std::string mlp_model() {
  const std::string models = env_or_empty("ONEPOOL_MODELS_DIR");
  REQUIRE_FALSE(models.empty());
  return shell_quote(models + "/mlp.onnx");
}

}  // namespace

// The MLP at batch 2 (probs: float32 [2,10], 80 bytes), seed 7: the default .npy starts with
// the magic and version 1.0, its dict says '<f4' and (2, 10), the data starts at a multiple of
// 64 and holds the same 80 bytes the --save-format bin run writes to 0_probs.bin.
TEST_CASE("save outputs: .npy by default, .bin on request") {
  ScratchDir dir("onepool_save_outputs");
  const std::string run = "run " + mlp_model() + " --shapes x:2x784 --seed 7 --save-outputs ";
  const CommandResult npy = cli(dir, run + shell_quote(dir.file("npy")));
  REQUIRE_MESSAGE(npy.exit_code == 0, npy.output);
  const CommandResult bin = cli(dir, run + shell_quote(dir.file("bin")) + " --save-format bin");
  REQUIRE_MESSAGE(bin.exit_code == 0, bin.output);
  const std::string file = read_text(dir.file("npy/0_probs.npy"));
  REQUIRE(file.size() > 10);
  CHECK(file.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_length = static_cast<unsigned char>(file[8]) |
                               (static_cast<size_t>(static_cast<unsigned char>(file[9])) << 8);
  const size_t data_start = 10 + header_length;
  CHECK(data_start % 64 == 0);
  const std::string dict = file.substr(10, header_length);
  CHECK(dict.find("'descr': '<f4'") != std::string::npos);
  CHECK(dict.find("'fortran_order': False") != std::string::npos);
  CHECK(dict.find("'shape': (2, 10)") != std::string::npos);
  CHECK(dict.back() == '\n');
  const std::string raw = read_text(dir.file("bin/0_probs.bin"));
  CHECK(raw.size() == 80);
  CHECK(file.substr(data_start) == raw);
  const auto listing = nlohmann::json::parse(read_text(dir.file("npy/outputs.json")));
  CHECK(listing[0]["file"] == "0_probs.npy");
  CHECK(listing[0]["shape"] == nlohmann::json::parse("[2, 10]"));
}

// A saved .npy reads back as an input: Relu's output y of x:[1,32] fed to the same model as x
// gives the same bytes again (Relu of a non-negative tensor is itself).
TEST_CASE("save outputs: a saved .npy is a valid input") {
  ScratchDir dir("onepool_save_outputs");
  write_relu_model(dir.file("relu.onnx"), {"1", "32"});
  const std::string model = shell_quote(dir.file("relu.onnx"));
  const CommandResult first =
      cli(dir, "run " + model + " --save-outputs " + shell_quote(dir.file("a")));
  REQUIRE_MESSAGE(first.exit_code == 0, first.output);
  const CommandResult second =
      cli(dir, "run " + model + " --inputs x:" + shell_quote(dir.file("a/0_y.npy")) +
                   " --save-outputs " + shell_quote(dir.file("b")));
  REQUIRE_MESSAGE(second.exit_code == 0, second.output);
  CHECK(read_text(dir.file("b/0_y.npy")) == read_text(dir.file("a/0_y.npy")));
}

// Another format is a usage error (exit 2) naming the choices.
TEST_CASE("save outputs: an unknown format is a usage error") {
  ScratchDir dir("onepool_save_outputs");
  const CommandResult result =
      cli(dir, "run " + mlp_model() + " --save-outputs x --save-format csv");
  CHECK(result.exit_code == 2);
  CHECK_MESSAGE(result.output.find("--save-format") != std::string::npos, result.output);
}

}  // namespace onepool::test
