// A strict parser for the .npy header dict.
#include "tools/onepool/npy_header.h"

#include <cctype>
#include <fstream>
#include <limits>

namespace onepool::cli {

namespace {

class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : text_(text) {}

  Expected<NpyHeader> parse() {
    NpyHeader header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    ONEPOOL_RETURN_IF_ERROR(expect('{'));
    while (true) {
      skip_spaces();
      if (peek() == '}') break;
      ONEPOOL_ASSIGN_OR_RETURN(std::string key, quoted());
      ONEPOOL_RETURN_IF_ERROR(expect(':'));
      if (key == "descr") {
        ONEPOOL_RETURN_IF_ERROR(first_time(key, seen_descr));
        ONEPOOL_ASSIGN_OR_RETURN(header.descr, quoted());
      } else if (key == "fortran_order") {
        ONEPOOL_RETURN_IF_ERROR(first_time(key, seen_order));
        ONEPOOL_ASSIGN_OR_RETURN(header.fortran_order, boolean());
      } else if (key == "shape") {
        ONEPOOL_RETURN_IF_ERROR(first_time(key, seen_shape));
        ONEPOOL_ASSIGN_OR_RETURN(header.shape, tuple());
      } else {
        return error(str_cat("unknown key '", key, "'"));
      }
      skip_spaces();
      if (peek() == ',') {
        ++at_;
      } else if (peek() != '}') {
        return error("expected ',' or '}' after a value");
      }
    }
    ++at_;  // '}'
    skip_spaces();
    if (at_ != text_.size()) return error("text after the closing brace");
    if (!seen_descr || !seen_order || !seen_shape) {
      return error(str_cat("missing key '",
                           !seen_descr ? "descr" : (!seen_order ? "fortran_order" : "shape"), "'"));
    }
    return header;
  }

 private:
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }

  Status error(const std::string& what) const {
    return make_status(StatusCode::kInvalidArgument, "bad .npy header: ", what, " at byte ", at_,
                       " of '", text_.substr(0, 120), "'");
  }

  Status expect(char c) {
    skip_spaces();
    if (peek() != c) return error(str_cat("expected '", std::string(1, c), "'"));
    ++at_;
    return Status::ok();
  }

  Status first_time(const std::string& key, bool& seen) const {
    if (seen) return error(str_cat("key '", key, "' repeated"));
    seen = true;
    return Status::ok();
  }

  Expected<std::string> quoted() {
    skip_spaces();
    const char quote = peek();
    if (quote != '\'' && quote != '"') return error("expected a quoted string");
    const size_t end = text_.find(quote, at_ + 1);
    if (end == std::string::npos) return error("unterminated string");
    std::string value = text_.substr(at_ + 1, end - at_ - 1);
    at_ = end + 1;
    return value;
  }

  Expected<bool> boolean() {
    skip_spaces();
    if (text_.compare(at_, 4, "True") == 0) {
      at_ += 4;
      return true;
    }
    if (text_.compare(at_, 5, "False") == 0) {
      at_ += 5;
      return false;
    }
    return error("expected True or False");
  }

  Expected<int64_t> integer() {
    skip_spaces();
    int64_t value = 0;
    const size_t start = at_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int64_t digit = peek() - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        return error("dimension too large");
      }
      value = value * 10 + digit;
      ++at_;
    }
    if (at_ == start) return error("expected a dimension (a non-negative integer)");
    return value;
  }

  // "()" | "(" int ("," int)* [","] ")"
  Expected<std::vector<int64_t>> tuple() {
    ONEPOOL_RETURN_IF_ERROR(expect('('));
    std::vector<int64_t> dims;
    skip_spaces();
    if (peek() == ')') {
      ++at_;
      return dims;
    }
    while (true) {
      ONEPOOL_ASSIGN_OR_RETURN(int64_t dim, integer());
      dims.push_back(dim);
      skip_spaces();
      if (peek() == ')') break;
      ONEPOOL_RETURN_IF_ERROR(expect(','));
      skip_spaces();
      if (peek() == ')') break;  // the trailing comma of (5,)
    }
    ++at_;
    return dims;
  }

  const std::string& text_;
  size_t at_ = 0;
};

}  // namespace

Expected<NpyHeader> parse_npy_header(const std::string& text) { return HeaderParser(text).parse(); }

namespace {

// The little-endian header length after the magic and version, and the bytes before the dict.
Expected<std::pair<size_t, size_t>> header_extent(const std::string& bytes) {
  const auto byte = [&](size_t i) {
    return static_cast<size_t>(static_cast<unsigned char>(bytes[i]));
  };
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major == 1) return std::pair<size_t, size_t>(byte(8) | (byte(9) << 8), 10);
  if ((major == 2 || major == 3) && bytes.size() >= 12) {
    return std::pair<size_t, size_t>(byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24),
                                     12);
  }
  return make_status(StatusCode::kInvalidArgument, "unsupported .npy version ", major);
}

}  // namespace

Expected<NpyLayout> parse_npy_start(const std::string& bytes) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return make_status(StatusCode::kInvalidArgument, "no NUMPY magic");
  }
  ONEPOOL_ASSIGN_OR_RETURN(auto extent, header_extent(bytes));
  const auto [length, start] = extent;
  if (length > bytes.size() - start) {
    return make_status(StatusCode::kInvalidArgument, "truncated header");
  }
  NpyLayout layout;
  ONEPOOL_ASSIGN_OR_RETURN(layout.header, parse_npy_header(bytes.substr(start, length)));
  layout.data_offset = start + length;
  return layout;
}

Expected<NpyLayout> read_npy_layout(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_status(StatusCode::kNotFound, "cannot open '", path, "'");
  std::string bytes(12, '\0');
  in.read(bytes.data(), 12);
  bytes.resize(static_cast<size_t>(in.gcount()));
  const auto bad = [&](const Status& why) {
    return make_status(StatusCode::kInvalidArgument, "'", path,
                       "' is not a readable .npy file: ", why.message());
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return bad(make_status(StatusCode::kInvalidArgument, "no NUMPY magic"));
  }
  auto extent = header_extent(bytes);
  if (!extent) return bad(extent.status());
  const size_t have = bytes.size();
  const size_t total = extent->first + extent->second;
  if (total > have) {  // the dict after the first 12 bytes
    bytes.resize(total);
    in.read(bytes.data() + have, static_cast<std::streamsize>(total - have));
    bytes.resize(have + static_cast<size_t>(in.gcount()));
  }
  auto layout = parse_npy_start(bytes);
  if (!layout) return bad(layout.status());
  return layout;
}

std::string make_npy_header(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t dim : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(dim);
  if (shape.size() == 1) dims += ',';  // (5,) is a tuple, (5) is not
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 10 + dict.size() + 1;  // magic, version, length; the dict; '\n'
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string header = "\x93NUMPY";
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>(dict.size() >> 8);
  return header + dict;
}

}  // namespace onepool::cli
