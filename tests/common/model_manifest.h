// The models of the generated suite (ONEPOOL_MODELS_DIR/manifest.json) and of the fetched cache
// (ONEPOOL_CACHE_DIR/models/manifest.json): file, input shapes, integer input ranges and --bound
// entries, as the tests that run every model read them.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "onepool/onepool.h"

namespace onepool_test {

struct ManifestModel {
  std::string name;
  std::string path;
  onepool::LoadOptions load;  // input_shapes and bounds from the manifest
  std::map<std::string, std::pair<double, double>> ranges;  // integer inputs: [lo, hi)
  bool fetched = false;  // a real model from the npm cache (not generated)
};

/// The entries of `dir`/manifest.json; empty when there is none.
inline std::vector<ManifestModel> read_manifest(const std::string& dir, bool fetched) {
  std::vector<ManifestModel> models;
  std::ifstream in(dir + "/manifest.json");
  if (!in) return models;
  const nlohmann::json manifest = nlohmann::json::parse(in);
  for (const auto& entry : manifest.at("models")) {
    ManifestModel model;
    model.name = entry.at("name");
    model.path = dir + "/" + entry.at("file").get<std::string>();
    model.fetched = fetched;
    for (const auto& [name, shape] : entry.at("inputs").items()) {
      model.load.input_shapes.emplace_back(name, shape.get<std::vector<int64_t>>());
    }
    if (entry.contains("input_ranges")) {
      for (const auto& [name, range] : entry.at("input_ranges").items()) {
        model.ranges[name] = {range[0].get<double>(), range[1].get<double>()};
      }
    }
    if (entry.contains("bounds")) {  // a Loop's scan output length (--bound)
      for (const auto& [name, bound] : entry.at("bounds").items()) {
        model.load.bounds[name] = bound.get<int64_t>();
      }
    }
    models.push_back(std::move(model));
  }
  return models;
}

/// The generated suite's models, then the fetched ones (where each manifest exists).
inline std::vector<ManifestModel> all_manifest_models() {
  std::vector<ManifestModel> models;
  if (const char* dir = std::getenv("ONEPOOL_MODELS_DIR")) {
    for (auto& model : read_manifest(dir, false)) models.push_back(std::move(model));
  }
  if (const char* dir = std::getenv("ONEPOOL_CACHE_DIR")) {
    for (auto& model : read_manifest(std::string(dir) + "/models", true)) {
      models.push_back(std::move(model));
    }
  }
  return models;
}

}  // namespace onepool_test
