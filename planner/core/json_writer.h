// A streaming JSON object writer that lays out its output exactly as nlohmann's
// dump(1, ' ') lays out the same document (keys sorted, one space per level), so that a plan of
// 100,000 tensors is written member by member with no DOM of the whole document.
//
// The caller gives each object's members in key order. Numbers, booleans and plain-ASCII strings
// are written directly; strings that need escaping, doubles and nested values go through
// nlohmann (invalid UTF-8 replaced, never thrown, as the plan's dump does). Not thread-safe: one
// writer per output string.
#pragma once

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace onepool {

class JsonObjectWriter {
 public:
  using Json = nlohmann::json;

  /// Opens an object at `depth` (its members are indented depth + 1 spaces).
  JsonObjectWriter(std::string& out, int depth) : out_(out), depth_(depth) { out_ += '{'; }

  void member(std::string_view key, int64_t value) {
    start_member(key);
    append_integer(value);
  }
  void member(std::string_view key, uint64_t value) {
    start_member(key);
    append_integer(value);
  }
  void member(std::string_view key, int32_t value) { member(key, static_cast<int64_t>(value)); }
  void member(std::string_view key, bool value) {
    start_member(key);
    out_ += value ? "true" : "false";
  }
  void member(std::string_view key, std::string_view value) {
    start_member(key);
    append_string(value);
  }
  void member(std::string_view key, const char* value) { member(key, std::string_view(value)); }
  void member(std::string_view key, const std::string& value) {
    member(key, std::string_view(value));
  }
  /// Doubles and nested values (nlohmann's number format, its layout shifted to this depth).
  void member(std::string_view key, const Json& value) {
    start_member(key);
    append_json(value, depth_ + 1);
  }
  void member(std::string_view key, double value) { member(key, Json(value)); }

  /// An array of integers, one per line (`[]` when empty).
  void integers_member(std::string_view key, std::span<const int64_t> values) {
    array_member(key, values.size(), [&](size_t i, int) { append_integer(values[i]); });
  }

  /// An array whose element i `write(i, depth)` appends at `depth` (through this writer's
  /// output: append_json, or a JsonObjectWriter opened at `depth`). `[]` when empty.
  template <class WriteElement>
  void array_member(std::string_view key, size_t count, WriteElement write) {
    start_member(key);
    if (count == 0) {
      out_ += "[]";
      return;
    }
    out_ += "[\n";
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) out_ += ",\n";
      indent(depth_ + 2);
      write(i, depth_ + 2);
    }
    out_ += '\n';
    indent(depth_ + 1);
    out_ += ']';
  }

  /// `value` dumped as nlohmann does, each line after the first shifted to `depth`.
  void append_json(const Json& value, int depth) {
    const std::string text = value.dump(1, ' ', false, Json::error_handler_t::replace);
    for (char c : text) {
      out_ += c;
      if (c == '\n') indent(depth);
    }
  }

  /// Closes the object.
  void close() {
    if (members_ > 0) {
      out_ += '\n';
      indent(depth_);
    }
    out_ += '}';
  }

  std::string& out() { return out_; }

 private:
  void start_member(std::string_view key) {
    out_ += members_++ == 0 ? "\n" : ",\n";
    indent(depth_ + 1);
    append_string(key);
    out_ += ": ";
  }

  void indent(int depth) { out_.append(static_cast<size_t>(depth), ' '); }

  template <class Integer>
  void append_integer(Integer value) {
    char digits[24];
    const auto result = std::to_chars(digits, digits + sizeof(digits), value);
    out_.append(digits, result.ptr);
  }

  // Printable ASCII without '"' or '\\' is written as is; anything else nlohmann escapes.
  void append_string(std::string_view text) {
    for (char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
        out_ += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
        return;
      }
    }
    out_ += '"';
    out_ += text;
    out_ += '"';
  }

  std::string& out_;
  int depth_;
  int members_ = 0;
};

}  // namespace onepool
