// Status and StatusOr: the error currency of stepscope.
//
// Nothing in stepscope throws across a module boundary (the injected tracer must
// never throw into the traced program). Functions that can fail return a Status
// or a StatusOr<T>; callers propagate with RETURN_IF_ERROR / ASSIGN_OR_RETURN.
// A Status carries a code that the CLI maps to an exit code (kInvalidInput -> 2)
// and a one-line message that says what failed and where.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace stepscope {

enum class StatusCode {
  kOk = 0,
  kInvalidInput,  // bad user input: unreadable/malformed file, bad flag (CLI exit code 2)
  kNotFound,
  kIoError,
  kUnavailable,  // a needed facility is missing (no GPU, no CUPTI, no permission)
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with context ("reading x.sqlite: " + message).
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidInput(std::string m) {
  return Status(StatusCode::kInvalidInput, std::move(m));
}
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status IoError(std::string m) { return Status(StatusCode::kIoError, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

#define STEPSCOPE_CONCAT_INNER(a, b) a##b
#define STEPSCOPE_CONCAT(a, b) STEPSCOPE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)         \
  do {                                \
    ::stepscope::Status _st = (expr); \
    if (!_st.ok()) return _st;        \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(STEPSCOPE_CONCAT(_status_or_, __LINE__), lhs, expr)

}  // namespace stepscope
