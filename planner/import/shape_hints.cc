// See shape_hints.h.
#include "planner/import/shape_hints.h"

#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "onepool/status.h"

namespace onepool {

namespace {

namespace fs = std::filesystem;

constexpr int64_t kGuessedImageSide = 224;
constexpr std::uintmax_t kMaxTestTensorFileBytes = std::uintmax_t{1} << 30;

// Dims of test_data_set_0/input_<i>.pb for each input, matched by the tensor's name (or its
// position when unnamed); empty when any input lacks a readable file.
std::vector<std::vector<int64_t>> test_data_shapes(
    const std::vector<const onnx::ValueInfoProto*>& inputs, const std::string& model_path) {
  const fs::path folder = fs::path(model_path).parent_path() / "test_data_set_0";
  std::error_code error;
  if (inputs.empty() || !fs::is_directory(folder, error)) return {};
  std::unordered_map<std::string, size_t> position;
  for (size_t i = 0; i < inputs.size(); ++i) position[inputs[i]->name()] = i;
  std::vector<std::vector<int64_t>> shapes(inputs.size());
  std::vector<bool> found(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const fs::path file = folder / str_cat("input_", i, ".pb");
    const std::uintmax_t bytes = fs::file_size(file, error);
    if (error || bytes > kMaxTestTensorFileBytes) return {};
    std::ifstream stream(file, std::ios::binary);
    onnx::TensorProto tensor;
    if (!stream || !tensor.ParseFromIstream(&stream)) return {};
    const auto named = position.find(tensor.name());
    const size_t slot = tensor.name().empty() || named == position.end() ? i : named->second;
    if (found[slot]) return {};
    found[slot] = true;
    shapes[slot].assign(tensor.dims().begin(), tensor.dims().end());
  }
  return shapes;
}

bool is_symbolic(const onnx::TensorShapeProto_Dimension& dim) {
  return !dim.has_dim_value() || dim.dim_value() <= 0;
}

// An image-like input: rank 4 with 1, 3 or 4 static channels at axis 1 (NCHW) or 3 (NHWC);
// returns the axes of height and width, or {-1, -1}.
std::pair<int, int> image_axes(const onnx::TensorShapeProto& shape) {
  if (shape.dim_size() != 4) return {-1, -1};
  const auto channels = [&](int axis) {
    const auto& dim = shape.dim(axis);
    return !is_symbolic(dim) &&
           (dim.dim_value() == 1 || dim.dim_value() == 3 || dim.dim_value() == 4);
  };
  if (channels(1)) return {2, 3};
  if (channels(3)) return {1, 2};
  return {-1, -1};
}

std::string dims_text(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "[]";
  std::string text;
  for (size_t axis = 0; axis < dims.size(); ++axis)
    text += str_cat(axis > 0 ? "x" : "", dims[axis]);
  return text;
}

}  // namespace

ShapeSuggestion suggest_input_shapes(const std::vector<const onnx::ValueInfoProto*>& inputs,
                                     const std::string& model_path) {
  ShapeSuggestion suggestion;
  const auto from_test_data = test_data_shapes(inputs, model_path);
  bool guessed_batch = false, guessed_image = false, guessed_other = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> dims;
    if (!from_test_data.empty()) {
      dims = from_test_data[i];
    } else {
      const auto& shape = inputs[i]->type().tensor_type().shape();
      const auto [height, width] = image_axes(shape);
      for (int axis = 0; axis < shape.dim_size(); ++axis) {
        const auto& dim = shape.dim(axis);
        if (!is_symbolic(dim)) {
          dims.push_back(dim.dim_value());
        } else if (axis == height || axis == width) {
          dims.push_back(kGuessedImageSide);
          guessed_image = true;
        } else {
          dims.push_back(1);
          (axis == 0 ? guessed_batch : guessed_other) = true;
        }
      }
    }
    suggestion.shapes += str_cat(i > 0 ? "," : "", inputs[i]->name(), ":", dims_text(dims));
  }
  if (!from_test_data.empty()) {
    suggestion.source = "the test data beside the model (test_data_set_0)";
  } else if (!guessed_batch && !guessed_image && !guessed_other) {
    suggestion.source = "the model's static dims";
  } else {
    std::string parts;
    const auto add = [&](bool used, const std::string& text) {
      if (used) parts += str_cat(parts.empty() ? "" : ", ", text);
    };
    add(guessed_batch, "batch 1");
    add(guessed_image, str_cat("image sides ", kGuessedImageSide));
    add(guessed_other, "other symbolic dims 1");
    suggestion.source = str_cat("a guess (", parts, "): set them to your data's size");
  }
  return suggestion;
}

}  // namespace onepool
