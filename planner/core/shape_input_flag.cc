// Parsing and printing `--values` (shape input values).
#include "planner/core/shape_input_flag.h"

#include <charconv>
#include <vector>

#include "planner/core/flag_split.h"

namespace onepool {

namespace {

constexpr size_t kMaxShownValues = 16;

// A list is float when any item is written as one ("0.5", "1e3", "inf", "nan").
bool looks_float(const std::vector<std::string>& items) {
  for (const std::string& item : items) {
    if (item.find_first_of(".eEnN") != std::string::npos) return true;
  }
  return false;
}

template <class T>
Status parse_number(const std::string& item, const std::string& entry, T* value) {
  // from_chars takes no '+': accept it as people write it.
  const size_t skip = !item.empty() && item[0] == '+' ? 1 : 0;
  const char* begin = item.data() + skip;
  const char* end = item.data() + item.size();
  const auto [stop, error] = std::from_chars(begin, end, *value);
  if (begin != end && error == std::errc() && stop == end) return Status::ok();
  return make_status(StatusCode::kInvalidArgument, "--values entry '", entry, "': '", item,
                     "' is not ", std::is_integral_v<T> ? "an int64 integer" : "a number");
}

template <class T>
Expected<std::vector<T>> parse_items(const std::vector<std::string>& items,
                                     const std::string& entry) {
  std::vector<T> values;
  for (const std::string& item : items) {
    T value{};
    ONEPOOL_RETURN_IF_ERROR(parse_number(item, entry, &value));
    values.push_back(value);
  }
  return values;
}

Expected<ShapeInputValues> parse_list(std::string body, const std::string& entry) {
  const bool bracketed = body.size() >= 2 && body.front() == '[' && body.back() == ']';
  if (bracketed) body = body.substr(1, body.size() - 2);
  if (body.empty()) return ShapeInputValues(std::vector<int64_t>{});
  const std::vector<std::string> items = split_text(body, ',');
  if (looks_float(items)) {
    ONEPOOL_ASSIGN_OR_RETURN(std::vector<double> values, parse_items<double>(items, entry));
    return ShapeInputValues(std::move(values));
  }
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<int64_t> values, parse_items<int64_t>(items, entry));
  return ShapeInputValues(std::move(values));
}

std::string format_double(double value) {
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : std::string("?");
}

template <class T>
std::string format_list(const std::vector<T>& values, const char* open, const char* close) {
  std::string text = open;
  for (size_t i = 0; i < values.size() && i < kMaxShownValues; ++i) {
    if (i > 0) text += ",";
    if constexpr (std::is_integral_v<T>) {
      text += std::to_string(values[i]);
    } else {
      text += format_double(values[i]);
    }
  }
  if (values.size() > kMaxShownValues) text += str_cat(",... (", values.size(), " values)");
  return text + close;
}

}  // namespace

Status parse_values_flag(const std::string& text, std::map<std::string, ShapeInputValues>* values) {
  for (const std::string& entry : split_text(text, ';')) {
    if (entry.empty()) continue;  // a trailing ';'
    const size_t colon = entry.rfind(':');
    if (colon == std::string::npos) {
      return make_status(StatusCode::kInvalidArgument, "--values entry '", entry,
                         "' has no ':'; expected name:1,2,3 (entries separated by ';')");
    }
    const std::string name = entry.substr(0, colon);
    if (name.empty()) {
      return make_status(StatusCode::kInvalidArgument, "--values entry '", entry,
                         "' has an empty input name");
    }
    if (values->count(name) != 0) {
      return make_status(StatusCode::kInvalidArgument, "--values names input '", name, "' twice");
    }
    ONEPOOL_ASSIGN_OR_RETURN(ShapeInputValues parsed, parse_list(entry.substr(colon + 1), entry));
    values->emplace(name, std::move(parsed));
  }
  return Status::ok();
}

std::string format_shape_input_values(const ShapeInputValues& values) {
  return std::visit([](const auto& list) { return format_list(list, "[", "]"); }, values);
}

ShapeInputValues shape_input_values_of(const HostTensor& tensor) {
  const bool is_float = tensor.dtype == DType::kFloat32 || tensor.dtype == DType::kFloat64;
  if (is_float) {
    std::vector<double> values;
    for (int64_t i = 0; i < tensor.element_count(); ++i) values.push_back(tensor.float_at(i));
    return values;
  }
  std::vector<int64_t> values;
  for (int64_t i = 0; i < tensor.element_count(); ++i) values.push_back(tensor.int_at(i));
  return values;
}

std::string format_values_entry(const std::string& name, const ShapeInputValues& values) {
  return name + ":" +
         std::visit([](const auto& list) { return format_list(list, "", ""); }, values);
}

}  // namespace onepool
