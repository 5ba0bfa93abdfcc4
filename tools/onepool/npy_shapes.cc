#include "tools/onepool/npy_shapes.h"

#include <cstdio>
#include <map>

#include "planner/core/shape_binding.h"
#include "tools/onepool/npy_header.h"

namespace onepool::cli {

namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text;
  for (int64_t dim : dims) text += str_cat(text.empty() ? "" : ",", dim);
  return "[" + text + "]";
}

// Every --shapes entry by input name (the last one wins, as when loading).
Expected<std::map<std::string, std::vector<int64_t>>> given_shapes(const ModelFlags& flags) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& text : flags.shapes) {
    ONEPOOL_ASSIGN_OR_RETURN(auto entries, parse_shapes_flag(text));
    for (auto& [name, dims] : entries) shapes[name] = std::move(dims);
  }
  return shapes;
}

bool is_npy(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
}

}  // namespace

Expected<ModelFlags> with_npy_shapes(const ModelFlags& flags,
                                     const std::vector<std::string>& inputs) {
  ModelFlags bound = flags;
  ONEPOOL_ASSIGN_OR_RETURN(auto shapes, given_shapes(flags));
  for (const std::string& item : inputs) {
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || !is_npy(item.substr(colon + 1))) continue;
    const std::string name = item.substr(0, colon);
    const std::string path = item.substr(colon + 1);
    ONEPOOL_ASSIGN_OR_RETURN(NpyLayout layout, read_npy_layout(path));
    const std::vector<int64_t>& file_dims = layout.header.shape;
    const auto given = shapes.find(name);
    if (given != shapes.end() && given->second != file_dims) {
      return make_status(StatusCode::kInvalidArgument, "input '", name, "': --shapes gives ",
                         dims_text(given->second), " but '", path, "' holds ", dims_text(file_dims),
                         "; drop the --shapes entry (a .npy input brings its shape) or pass a "
                         "file of that shape");
    }
    if (given != shapes.end() || file_dims.empty()) continue;  // bound, or a scalar
    bound.shapes.push_back(format_shapes_flag({{name, file_dims}}));
    shapes[name] = file_dims;
    std::printf("note:      shape of '%s' from %s: %s\n", name.c_str(), path.c_str(),
                dims_text(file_dims).c_str());
  }
  return bound;
}

}  // namespace onepool::cli
