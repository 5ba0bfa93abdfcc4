// The CUDA backend is a library loaded on demand: a process that only runs CPU Sessions never maps
// CUDA's libraries (about 60 MB resident when the runtime linked them), and asking for a CUDA
// device on a machine without one is a clear error, never a CPU run.
#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "onepool/model.h"
#include "onepool/session.h"

namespace {

// Lines of /proc/self/maps naming a CUDA library or OnePool's CUDA backend.
std::vector<std::string> mapped_cuda_libraries() {
  constexpr std::array<const char*, 4> kNames = {"libcudart", "libcublas", "libcuda.so",
                                                 "libonepool_cuda"};
  std::ifstream maps("/proc/self/maps");
  REQUIRE(maps.good());
  std::vector<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    for (const char* name : kNames) {
      if (line.find(name) != std::string::npos) found.push_back(line);
    }
  }
  return found;
}

std::shared_ptr<const onepool::Model> load_mlp() {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  onepool::LoadOptions load;
  load.dims = {{"batch", 1}};
  auto model = onepool::Model::load(std::string(dir) + "/mlp.onnx", load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return std::move(model).value();
}

}  // namespace

// Loading a model, creating a CPU Session and running it maps 0 CUDA libraries.
TEST_CASE("a CPU Session maps no CUDA library") {
  CHECK(mapped_cuda_libraries().empty());
  auto model = load_mlp();
  auto session = onepool::Session::create(model, onepool::SessionOptions{});
  REQUIRE_MESSAGE(session.has_value(), session.status().to_string());
  std::vector<std::vector<float>> storage;
  std::vector<onepool::TensorView> inputs;
  std::vector<onepool::TensorView> outputs;
  for (auto* infos : {&model->inputs(), &model->outputs()}) {
    for (const auto& info : *infos) {
      storage.emplace_back(static_cast<size_t>(info.shape.element_count()), 0.5f);
      (infos == &model->inputs() ? inputs : outputs)
          .push_back({storage.back().data(), info.dtype, info.shape, onepool::Device{}});
    }
  }
  REQUIRE((*session)->run(inputs, outputs).is_ok());
  const auto mapped = mapped_cuda_libraries();
  for (const auto& line : mapped) MESSAGE("mapped: " << line);
  CHECK(mapped.empty());
}

// cuda:0 on a machine without a GPU (or without the CUDA libraries, or a build without CUDA):
// Session::create fails with a message that names the device, and no Session runs on the CPU.
TEST_CASE("a CUDA Session without a usable GPU is a clear error") {
  auto model = load_mlp();
  onepool::SessionOptions options;
  options.device = onepool::Device{onepool::DeviceKind::kCuda, 0};
  auto session = onepool::Session::create(model, options);
  if (session.has_value()) {
    MESSAGE("a CUDA device is present: nothing to check here");
    return;
  }
  const std::string message = session.status().to_string();
  MESSAGE(message);
  CHECK(message.find("cuda:0") != std::string::npos);
  CHECK(session.status().code() != onepool::StatusCode::kOk);
}
