// MiniMalloc CSV records: parsing with line-numbered errors.
#include "planner/render/records_csv.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <unordered_set>

namespace onepool {
namespace {

constexpr std::string_view kHeader = "id,lower,upper,size";
constexpr size_t kFieldCount = 4;
constexpr const char* kFieldNames[kFieldCount] = {"id", "lower", "upper", "size"};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// A line's fields: the first kFieldCount, and how many there were in all (no allocation: a
// 100,000-record file is parsed in tens of milliseconds).
struct LineFields {
  std::array<std::string_view, kFieldCount> fields;
  size_t count = 0;
};

LineFields split_fields(std::string_view line) {
  LineFields split;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (split.count < kFieldCount)
      split.fields[split.count] = trim(line.substr(start, comma - start));
    ++split.count;
    if (comma == std::string_view::npos) return split;
    start = comma + 1;
  }
}

Status line_error(size_t line_number, const std::string& reason) {
  return make_status(StatusCode::kInvalidArgument, "records CSV line ", line_number, ": ", reason);
}

Expected<int64_t> parse_field(std::string_view field, size_t index, size_t line_number) {
  const char* name = kFieldNames[index];
  if (!field.empty() && field.front() == '-') {
    return line_error(line_number, str_cat(name, " '", field, "' is negative"));
  }
  int64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error == std::errc::result_out_of_range) {
    return line_error(line_number, str_cat(name, " '", field, "' overflows int64"));
  }
  if (field.empty() || error != std::errc() || end != field.data() + field.size()) {
    return line_error(line_number, str_cat(name, " '", field, "' is not an integer"));
  }
  return value;
}

Status parse_line(std::string_view line, size_t line_number, std::unordered_set<std::string>& seen,
                  RecordsFile& file) {
  const LineFields split = split_fields(line);
  const auto& fields = split.fields;
  if (split.count != kFieldCount) {
    return line_error(line_number,
                      str_cat("expected 4 fields (id,lower,upper,size), got ", split.count));
  }
  if (fields[0].empty()) return line_error(line_number, "id is empty");
  int64_t values[kFieldCount] = {};
  for (size_t i = 1; i < kFieldCount; ++i) {
    ONEPOOL_ASSIGN_OR_RETURN(values[i], parse_field(fields[i], i, line_number));
  }
  if (values[2] <= values[1]) {
    return line_error(line_number,
                      str_cat("upper ", values[2], " must be greater than lower ", values[1]));
  }
  std::string id(fields[0]);
  if (!seen.insert(id).second) return line_error(line_number, str_cat("duplicate id '", id, "'"));
  file.records.push_back({values[1], values[2] - 1, static_cast<size_t>(values[3])});
  file.ids.push_back(std::move(id));
  return Status::ok();
}

}  // namespace

Expected<RecordsFile> parse_records_csv(std::string_view text) {
  RecordsFile file;
  std::unordered_set<std::string> seen;
  const size_t lines_guess = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  seen.reserve(lines_guess);
  file.records.reserve(lines_guess);
  file.ids.reserve(lines_guess);
  size_t line_number = 0;
  bool first_content_line = true;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++line_number;
    const std::string_view line = trim(raw);
    if (line.empty()) continue;
    const bool is_header = first_content_line && line == kHeader;
    first_content_line = false;
    if (is_header) continue;
    ONEPOOL_RETURN_IF_ERROR(parse_line(line, line_number, seen, file));
  }
  return file;
}

Expected<RecordsFile> load_records_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_status(StatusCode::kNotFound, "cannot open records file '", path, "'");
  std::ostringstream text;
  text << in.rdbuf();
  auto file = parse_records_csv(text.str());
  if (!file) return file.status().with_context(str_cat("'", path, "'"));
  return file;
}

}  // namespace onepool
