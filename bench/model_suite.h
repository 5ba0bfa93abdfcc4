// The models plan_bench measures: ONNX files with the input shapes to bind, found through a
// manifest.json (the generated suite's and the fetched real models' both list `file` and
// `inputs`) or given one by one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onepool/status.h"

namespace onepool::bench {

struct BenchModel {
  std::string name;  // manifest name, or the file name without .onnx
  std::string path;
  std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes;
  std::map<std::string, int64_t> bounds;  // --bound entries (a Loop's scan output length)
};

/// Every model in DIR/manifest.json when that file exists, else every *.onnx under DIR (with
/// the model's own shapes). Sorted by name within the folder.
Expected<std::vector<BenchModel>> models_in_folder(const std::string& dir);

/// One model file with the given shapes.
BenchModel model_file(const std::string& path,
                      std::vector<std::pair<std::string, std::vector<int64_t>>> input_shapes);

}  // namespace onepool::bench
