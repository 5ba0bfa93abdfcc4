#include "bench/model_suite.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace onepool::bench {
namespace {

namespace fs = std::filesystem;

Expected<std::vector<BenchModel>> models_in_manifest(const fs::path& manifest_path) {
  std::ifstream file(manifest_path);
  const nlohmann::json manifest = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded() || !manifest.contains("models") || !manifest["models"].is_array()) {
    return make_status(StatusCode::kInvalidArgument, "'", manifest_path.string(),
                       "': expected a JSON object with a \"models\" array");
  }
  std::vector<BenchModel> models;
  for (const nlohmann::json& entry : manifest["models"]) {
    if (!entry.contains("file") || !entry["file"].is_string()) {
      return make_status(StatusCode::kInvalidArgument, "'", manifest_path.string(),
                         "': a model entry has no \"file\"");
    }
    BenchModel model;
    model.path = (manifest_path.parent_path() / entry["file"].get<std::string>()).string();
    model.name = entry.contains("name") && entry["name"].is_string()
                     ? entry["name"].get<std::string>()
                     : fs::path(model.path).stem().string();
    if (entry.contains("inputs") && entry["inputs"].is_object()) {
      for (const auto& [input, dims] : entry["inputs"].items()) {
        if (!dims.is_array()) continue;
        std::vector<int64_t> shape;
        for (const nlohmann::json& dim : dims) {
          if (dim.is_number_integer()) shape.push_back(dim.get<int64_t>());
        }
        if (shape.size() == dims.size()) model.input_shapes.emplace_back(input, std::move(shape));
      }
    }
    if (entry.contains("bounds") && entry["bounds"].is_object()) {
      for (const auto& [tensor, bound] : entry["bounds"].items()) {
        if (bound.is_number_integer()) model.bounds[tensor] = bound.get<int64_t>();
      }
    }
    models.push_back(std::move(model));
  }
  return models;
}

}  // namespace

Expected<std::vector<BenchModel>> models_in_folder(const std::string& dir) {
  const fs::path manifest = fs::path(dir) / "manifest.json";
  std::vector<BenchModel> models;
  if (fs::exists(manifest)) {
    ONEPOOL_ASSIGN_OR_RETURN(models, models_in_manifest(manifest));
  } else {
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(dir, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      if (it->path().extension() == ".onnx") models.push_back(model_file(it->path().string(), {}));
    }
    if (error) {
      return make_status(StatusCode::kNotFound, "--models-dir '", dir, "': ", error.message());
    }
  }
  std::sort(models.begin(), models.end(),
            [](const BenchModel& a, const BenchModel& b) { return a.name < b.name; });
  return models;
}

BenchModel model_file(const std::string& path,
                      std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes) {
  return {fs::path(path).stem().string(), path, std::move(input_shapes), {}};
}

}  // namespace onepool::bench
