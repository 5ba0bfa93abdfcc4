#include "tools/onepool/serve_binary.h"

#include <charconv>

namespace onepool::serve {

Expected<BodyParts> split_body(std::string_view body, const std::string& header_length) {
  if (header_length.empty()) return BodyParts{body, {}};
  size_t length = 0;
  const char* end = header_length.data() + header_length.size();
  const auto [ptr, error] = std::from_chars(header_length.data(), end, length);
  if (error != std::errc() || ptr != end) {
    return make_status(StatusCode::kInvalidArgument, kInferenceHeaderLength,
                       ": expected a byte count, got '", header_length, "'");
  }
  if (length > body.size()) {
    return make_status(StatusCode::kInvalidArgument, kInferenceHeaderLength, ": ", length,
                       " bytes of JSON header, but the body has only ", body.size(), " bytes");
  }
  return BodyParts{body.substr(0, length), body.substr(length)};
}

Expected<std::string_view> BinaryTail::take(const std::string& tensor, size_t size) {
  const size_t left = bytes_.size() - used_;
  if (size > left) {
    return make_status(StatusCode::kInvalidArgument, "input '", tensor, "': binary_data_size ",
                       size, " bytes, but only ", left, " bytes of binary data remain (body has ",
                       bytes_.size(), " after the JSON header)");
  }
  std::string_view slice = bytes_.substr(used_, size);
  used_ += size;
  return slice;
}

Status BinaryTail::check_all_used() const {
  if (used_ == bytes_.size()) return Status::ok();
  return make_status(StatusCode::kInvalidArgument, "binary data: expected ", used_,
                     " bytes (the sum of binary_data_size), got ", bytes_.size());
}

}  // namespace onepool::serve
