// Loading a model of the generated suite (models/generate.py, in ONEPOOL_MODELS_DIR) in a test.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "onepool/onepool.h"

namespace onepool_test {

/// `file` of the generated suite, its symbolic 'batch' dim (when it has one) bound to 1; the
/// test fails with the load error otherwise.
inline std::shared_ptr<const onepool::Model> load_generated_model(const std::string& file,
                                                                  bool has_batch_dim) {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  REQUIRE(dir != nullptr);
  const std::string path = std::string(dir) + "/" + file;
  REQUIRE_MESSAGE(std::filesystem::exists(path), "missing generated model ", path);
  onepool::LoadOptions load;
  if (has_batch_dim) load.dims = {{"batch", 1}};
  auto model = onepool::Model::load(path, load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  return *model;
}

}  // namespace onepool_test
