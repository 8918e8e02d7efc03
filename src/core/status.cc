#include "zerograph/core/status.h"

#include <cstdio>
#include <cstdlib>

namespace zerograph {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kDataLoss:
      return "DATA_LOSS";
    case StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kAborted:
      return "ABORTED";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message)
    : state_(code == StatusCode::kOk ? nullptr : new State{code, std::move(message)}) {}

Status::Status(const Status& other) : state_(other.ok() ? nullptr : new State(*other.state_)) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) state_.reset(other.ok() ? nullptr : new State(*other.state_));
  return *this;
}

Status Status::WithContext(std::string_view context) && {
  if (!ok()) state_->message = StrCat(context, ": ", state_->message);
  return std::move(*this);
}

Status Status::WithContext(std::string_view context) const& {
  return Status(*this).WithContext(context);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return StrCat(StatusCodeName(state_->code), ": ", state_->message);
}

int Status::ExitCode() const {
  switch (code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kDataLoss:
      return kExitBadInput;
    case StatusCode::kUnimplemented:
    case StatusCode::kInternal:
    case StatusCode::kUnavailable:
    case StatusCode::kAborted:
      return kExitRuntime;
  }
  return kExitRuntime;
}

Status InvalidArgumentError(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
Status NotFoundError(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
Status DataLossError(std::string message) {
  return Status(StatusCode::kDataLoss, std::move(message));
}
Status UnimplementedError(std::string message) {
  return Status(StatusCode::kUnimplemented, std::move(message));
}
Status InternalError(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}
Status UnavailableError(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}

namespace internal {
void CheckFailed(const char* file, int line, const char* condition, std::string message) {
  std::fprintf(stderr, "%s:%d: check failed: %s %s\n", file, line, condition, message.c_str());
  std::abort();
}
}  // namespace internal

}  // namespace zerograph
