// Status and Expected<T>: how every OnePool function reports failure.
//
// No exception crosses the OnePool API and nothing aborts on bad input. A function that can fail
// returns Status (no value) or Expected<T> (a value or a Status). An ok Status holds no string, so
// returning one never allocates (Session::run relies on that).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace onepool {

/// What kind of failure a Status carries.
enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,     ///< the caller passed something wrong (bad shape, bad flag, bad name)
  kNotFound,            ///< a file, input or tensor that does not exist
  kUnsupported,         ///< a valid model uses something OnePool does not implement
  kInvalidModel,        ///< the model itself is malformed (parse error, cycle, dangling input)
  kOutOfRange,          ///< a size overflows or a value lies outside its allowed range
  kResourceExhausted,   ///< allocation failed or a limit was reached
  kDeviceError,         ///< CUDA / cuBLAS / driver failure
  kFailedPrecondition,  ///< the call is not valid in the current state
  kInternal,            ///< a bug in OnePool
  kCancelled,           ///< the caller cancelled the call (RunOptions::cancel)
};

/// Human-readable name of a status code ("invalid argument").
const char* status_code_name(StatusCode code);

/// The result of an operation that returns no value. Thread-compatible value type.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "invalid argument: input 'x': ..." or "ok".
  std::string to_string() const;

  /// Returns a copy with `context` prefixed to the message ("loading 'm.onnx': ...").
  Status with_context(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// Either a T or an error Status. Constructing from an ok Status is a bug and becomes kInternal.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Expected(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(state_).is_ok()) {
      state_ = Status(StatusCode::kInternal, "Expected constructed from an ok Status");
    }
  }

  bool has_value() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The error; ok() when a value is held.
  Status status() const { return has_value() ? Status() : std::get<Status>(state_); }

 private:
  std::variant<T, Status> state_;
};

/// Concatenates its arguments with operator<< ("expected ", 4, " got ", 3).
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

template <class... Args>
Status make_status(StatusCode code, const Args&... args) {
  return Status(code, str_cat(args...));
}

}  // namespace onepool

#define ONEPOOL_CONCAT_INNER(a, b) a##b
#define ONEPOOL_CONCAT(a, b) ONEPOOL_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function when `expr` is not ok.
#define ONEPOOL_RETURN_IF_ERROR(expr)                     \
  do {                                                    \
    ::onepool::Status onepool_status_ = (expr);           \
    if (!onepool_status_.is_ok()) return onepool_status_; \
  } while (0)

#define ONEPOOL_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.has_value()) return tmp.status();          \
  lhs = std::move(tmp).value()

/// `ONEPOOL_ASSIGN_OR_RETURN(auto x, f());` declares x from an Expected or returns its error.
#define ONEPOOL_ASSIGN_OR_RETURN(lhs, expr) \
  ONEPOOL_ASSIGN_OR_RETURN_IMPL(ONEPOOL_CONCAT(onepool_expected_, __LINE__), lhs, expr)
