#ifndef ZEROGRAPH_CORE_STATUS_H_
#define ZEROGRAPH_CORE_STATUS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "zerograph/core/str_cat.h"

namespace zerograph {

// The few outcomes callers act on differently. Bad input (the user can fix it) maps to exit code 2,
// our own bugs and the machine to 3.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // malformed input: a graph, a flag value, a file's contents
  kNotFound,         // a named file, value, tensor or kernel does not exist
  kDataLoss,         // a file is truncated or corrupt
  kUnimplemented,    // valid input asking for something this build cannot do yet
  kInternal,         // a broken invariant of ours
  kUnavailable,      // the machine or a peer failed (I/O, MPI, CUDA, NCCL)
  kAborted,          // the run stopped itself: training diverged (a non-finite loss)
};

std::string_view StatusCodeName(StatusCode code);

// Process exit codes shared by every program: 0 ok, 1 usage, 2 bad input, 3 runtime.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitRuntime = 3;

// The result of an operation that can fail. OK is a null pointer, so returning success costs
// nothing; an error carries a code and a message that callers extend with context on the way up.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : state_->code; }
  std::string_view message() const { return ok() ? std::string_view() : state_->message; }

  // Returns this status with `context` put in front of the message ("loading 'a.onnx': ...").
  // OK stays OK.
  Status WithContext(std::string_view context) &&;
  Status WithContext(std::string_view context) const&;

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // The exit code a program returns for this status.
  int ExitCode() const;

  // Marks an error as deliberately dropped.
  void IgnoreError() const {}

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<State> state_;
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status DataLossError(std::string message);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);
Status UnavailableError(std::string message);

// Either a value or the error that prevented it.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // An error; constructing from an OK status is a bug and becomes an internal error.
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = InternalError("StatusOr constructed from an OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, Status> &&
           !std::is_same_v<std::decay_t<U>, T> && !std::is_same_v<std::decay_t<U>, StatusOr>)
      StatusOr(U&& value)
      : value_(std::forward<U>(value)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              std::string message);
}  // namespace internal

}  // namespace zerograph

#define ZG_STATUS_CONCAT_INNER_(a, b) a##b
#define ZG_STATUS_CONCAT_(a, b) ZG_STATUS_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function when it is an error.
#define ZG_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::zerograph::Status zg_status_ = (expr); \
    if (!zg_status_.ok()) return zg_status_; \
  } while (false)

// Evaluates a StatusOr expression; on success moves its value into `lhs` (a declaration or an
// lvalue), else returns its error.
#define ZG_ASSIGN_OR_RETURN(lhs, expr) \
  ZG_ASSIGN_OR_RETURN_IMPL_(ZG_STATUS_CONCAT_(zg_status_or_, __LINE__), lhs, expr)
#define ZG_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                              \
  if (!var.ok()) return std::move(var).status();  \
  lhs = std::move(var).value()

// Validates input: returns InvalidArgument with the concatenated message parts when `cond` fails.
#define ZG_RETURN_IF_NOT(cond, ...)                                                          \
  do {                                                                                       \
    if (!(cond)) return ::zerograph::InvalidArgumentError(::zerograph::StrCat(__VA_ARGS__)); \
  } while (false)

// Checks one of our own invariants: returns Internal naming the file, line and condition.
#define ZG_RET_CHECK(cond, ...)                                                               \
  do {                                                                                        \
    if (!(cond))                                                                              \
      return ::zerograph::InternalError(::zerograph::StrCat(                                  \
          __FILE__, ":", __LINE__, ": check failed: " #cond " " __VA_OPT__(, ) __VA_ARGS__)); \
  } while (false)

// Aborts with file, line and condition; only where returning a Status is impossible.
#define ZG_CHECK(cond, ...)                                                                   \
  do {                                                                                        \
    if (!(cond))                                                                              \
      ::zerograph::internal::CheckFailed(__FILE__, __LINE__, #cond,                           \
                                         ::zerograph::StrCat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (false)

#endif  // ZEROGRAPH_CORE_STATUS_H_
