// `inspect`'s --shapes suggestion: from the test data stored beside the model where it exists
// (test_data_set_0/input_N.pb), else the model's static dims, else a guess that says so (batch
// 1, image sides 224, other symbolic dims 1); a damaged test file falls back to the model.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tools/cli_run.h"
#include "tools/tiny_models.h"

namespace onepool::test {

namespace {

CommandResult inspect(const ScratchDir& dir, const std::string& model) {
  const std::string binary = env_or_empty("ONEPOOL_CLI");
  REQUIRE_MESSAGE(!binary.empty(), "ONEPOOL_CLI is not set: run this test through CTest");
  return run_command(shell_quote(binary) + " inspect " + shell_quote(model), dir.file("out.txt"));
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

void write_test_input(const std::string& folder, const std::string& name,
                      const std::vector<int64_t>& dims) {
  std::filesystem::create_directories(folder + "/test_data_set_0");
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t dim : dims) {
    tensor.add_dims(dim);
    count *= dim;
  }
  for (int64_t i = 0; i < count; ++i) tensor.add_float_data(0.5f);
  std::ofstream(folder + "/test_data_set_0/input_0.pb", std::ios::binary)
      << tensor.SerializeAsString();
}

}  // namespace

TEST_CASE("inspect: a guess says it is one; static dims and test data are used as they are") {
  const ScratchDir guess_dir{"onepool_inspect_guess"};
  write_relu_model(guess_dir.file("image.onnx"), {"N", "3", "H", "W"});
  const CommandResult guess = inspect(guess_dir, guess_dir.file("image.onnx"));
  REQUIRE_MESSAGE(guess.exit_code == 0, guess.output);
  CHECK_MESSAGE(has(guess.output,
                    "--shapes=x:1x3x224x224\n  from a guess (batch 1, image sides "
                    "224): set them to your data's size\n"),
                guess.output);

  write_relu_model(guess_dir.file("rows.onnx"), {"batch", "seq", "16"});
  const CommandResult rows = inspect(guess_dir, guess_dir.file("rows.onnx"));
  CHECK_MESSAGE(has(rows.output,
                    "--shapes=x:1x1x16\n  from a guess (batch 1, other symbolic "
                    "dims 1)"),
                rows.output);

  write_relu_model(guess_dir.file("static.onnx"), {"1", "32"});
  const CommandResult fixed = inspect(guess_dir, guess_dir.file("static.onnx"));
  CHECK_MESSAGE(has(fixed.output, "--shapes=x:1x32\n  from the model's static dims\n"),
                fixed.output);
}

TEST_CASE("inspect: the test data beside the model gives the shapes") {
  const ScratchDir dir{"onepool_inspect_test_data"};
  write_relu_model(dir.file("model.onnx"), {"N", "3", "H", "W"});
  write_test_input(std::filesystem::path(dir.file("model.onnx")).parent_path().string(), "x",
                   {2, 3, 40, 24});
  const CommandResult result = inspect(dir, dir.file("model.onnx"));
  REQUIRE_MESSAGE(result.exit_code == 0, result.output);
  CHECK_MESSAGE(has(result.output,
                    "--shapes=x:2x3x40x24\n  from the test data beside the model "
                    "(test_data_set_0)\n"),
                result.output);

  // A damaged file is no hint: the suggestion comes from the model again.
  std::ofstream(dir.file("test_data_set_0/input_0.pb"), std::ios::binary) << "\x0a\xff\xff";
  const CommandResult damaged = inspect(dir, dir.file("model.onnx"));
  REQUIRE_MESSAGE(damaged.exit_code == 0, damaged.output);
  CHECK_MESSAGE(has(damaged.output, "--shapes=x:1x3x224x224\n  from a guess"), damaged.output);
}

}  // namespace onepool::test
