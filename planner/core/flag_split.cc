#include "planner/core/flag_split.h"

namespace onepool {

std::vector<std::string> split_text(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos = text.find(separator); pos != std::string_view::npos;
       pos = text.find(separator, start)) {
    parts.emplace_back(text.substr(start, pos - start));
    start = pos + 1;
  }
  parts.emplace_back(text.substr(start));
  return parts;
}

std::vector<std::string> split_outside_brackets(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == separator && depth <= 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  parts.push_back(current);
  return parts;
}

}  // namespace onepool
