// Parsing `--shapes` and `--dim` values.
#include "planner/core/shape_binding.h"

#include <charconv>

#include "planner/core/flag_split.h"

namespace onepool {

namespace {

Expected<int64_t> parse_positive(const std::string& text, const std::string& context) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return make_status(StatusCode::kInvalidArgument, context, ": '", text,
                       "' is not an integer (dims are positive integers)");
  }
  if (value <= 0) {
    return make_status(StatusCode::kInvalidArgument, context, ": dim ", value, " must be positive");
  }
  return value;
}

Expected<std::vector<int64_t>> parse_dims(const std::string& text, const std::string& context) {
  std::vector<int64_t> dims;
  std::string body = text;
  const bool bracketed = body.size() >= 2 && body.front() == '[' && body.back() == ']';
  if (bracketed) {
    body = body.substr(1, body.size() - 2);
    if (body.empty()) return dims;  // "[]": a scalar
  }
  for (const std::string& part : split_text(body, bracketed ? ',' : 'x')) {
    ONEPOOL_ASSIGN_OR_RETURN(int64_t dim, parse_positive(part, context));
    dims.push_back(dim);
  }
  return dims;
}

Expected<NamedShape> parse_entry(const std::string& entry) {
  const size_t colon = entry.rfind(':');
  if (colon == std::string::npos) {
    return make_status(StatusCode::kInvalidArgument, "--shapes entry '", entry,
                       "' has no ':'; expected name:1x3x224x224 or name:[1,3,224,224]");
  }
  const std::string name = entry.substr(0, colon);
  if (name.empty()) {
    return make_status(StatusCode::kInvalidArgument, "--shapes entry '", entry,
                       "' has an empty input name");
  }
  ONEPOOL_ASSIGN_OR_RETURN(
      std::vector<int64_t> dims,
      parse_dims(entry.substr(colon + 1), str_cat("--shapes entry '", entry, "'")));
  return NamedShape{name, std::move(dims)};
}

}  // namespace

Expected<std::vector<NamedShape>> parse_shapes_flag(const std::string& text) {
  std::vector<NamedShape> shapes;
  for (const std::string& entry : split_outside_brackets(text, ',')) {
    ONEPOOL_ASSIGN_OR_RETURN(NamedShape shape, parse_entry(entry));
    for (const auto& previous : shapes) {
      if (previous.first == shape.first) {
        return make_status(StatusCode::kInvalidArgument, "--shapes names input '", shape.first,
                           "' twice");
      }
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

namespace {

// `flag 'text'`: name=N with N a positive integer.
Expected<std::pair<std::string, int64_t>> parse_named_count(const std::string& text,
                                                            const char* flag, const char* example) {
  const size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0) {
    return make_status(StatusCode::kInvalidArgument, flag, " '", text,
                       "': expected name=value, e.g. ", example);
  }
  ONEPOOL_ASSIGN_OR_RETURN(int64_t value,
                           parse_positive(text.substr(equals + 1), str_cat(flag, " '", text, "'")));
  return std::make_pair(text.substr(0, equals), value);
}

}  // namespace

Expected<std::pair<std::string, int64_t>> parse_dim_flag(const std::string& text) {
  return parse_named_count(text, "--dim", "batch=8");
}

Expected<std::pair<std::string, int64_t>> parse_bound_flag(const std::string& text) {
  return parse_named_count(text, "--bound", "rows=64");
}

std::string format_shapes_flag(const std::vector<NamedShape>& shapes) {
  std::string text;
  for (const auto& [name, dims] : shapes) {
    if (!text.empty()) text += ",";
    text += name + ":";
    if (dims.empty()) text += "[]";
    for (size_t i = 0; i < dims.size(); ++i) text += str_cat(i > 0 ? "x" : "", dims[i]);
  }
  return text;
}

}  // namespace onepool
