// Triton's binary tensor data extension: a request or response body is a JSON header followed
// by raw little-endian tensor bytes; the header's length travels in the HTTP header
// Inference-Header-Content-Length, and each binary tensor says its size in
// parameters.binary_data_size (tensors are laid out back to back in the order they are listed).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "onepool/status.h"

namespace onepool::serve {

inline constexpr const char* kInferenceHeaderLength = "Inference-Header-Content-Length";
inline constexpr const char* kBinaryContentType = "application/octet-stream";

/// The JSON header and the binary tail of a request body.
struct BodyParts {
  std::string_view json;
  std::string_view binary;
};

/// Splits `body` at `header_length` (the Inference-Header-Content-Length value; empty when the
/// header is absent, which means the whole body is JSON). Views point into `body`.
Expected<BodyParts> split_body(std::string_view body, const std::string& header_length);

/// Hands out consecutive slices of a binary tail; not thread-safe (one per request).
class BinaryTail {
 public:
  explicit BinaryTail(std::string_view bytes) : bytes_(bytes) {}
  /// The next `size` bytes for input `tensor`; fails when fewer remain.
  Expected<std::string_view> take(const std::string& tensor, size_t size);
  /// Fails when bytes remain that no input claimed.
  Status check_all_used() const;

 private:
  std::string_view bytes_;
  size_t used_ = 0;
};

}  // namespace onepool::serve
