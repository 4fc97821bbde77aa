// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sedpack {

/// Error categories. "The disk failed" (kIOError) and "the bytes are wrong"
/// (kCorruption) are kept apart because callers react to them differently.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument = 1,
  kNotFound = 2,
  kIOError = 3,
  kCorruption = 4,
  kNotImplemented = 5,
  kAlreadyExists = 6,
  kInternal = 7,
  kResourceExhausted = 8,
  /// The operation stopped because cancellation was requested (sedpack/cancel.h:
  /// SIGINT, SIGTERM); what it had not committed was undone.
  kCancelled = 9,
};

/// Return the name of a status code ("Corruption", ...).
std::string_view StatusCodeName(StatusCode code);

/// A machine-readable refinement of the code, for callers that must tell
/// errors apart: classify by code() and detail(), never by the message (which
/// is for people and may change). The numbers are part of the wire format
/// between ranks; append, never renumber.
enum class StatusDetail {
  kNone = 0,
  /// Another rank of a collective operation failed; this one did not (its
  /// message names the rank and that rank's reason).
  kPeerAborted = 1,
  /// Resolving a path inside a dataset led outside its root (a symbolic link
  /// pointing out, an absolute path).
  kOutsideRoot = 2,
  /// A path read from metadata is absolute or has a ".." component.
  kPathEscape = 3,
  /// A file's bytes do not match the hash checksum its parent metadata records
  /// (or the metadata records the wrong number of checksums).
  kHashMismatch = 4,
  /// A resumable job found itself already committed in the dataset (the same
  /// job identity ran to its end before): there is nothing left for it to add.
  kJobCommitted = 5,
};

/// Return the name of a detail ("peer_aborted", ...); "unknown" if out of range.
std::string_view StatusDetailName(StatusDetail detail);

/// Outcome of an operation: OK, or a code with a message and an optional
/// detail. Cheap to copy when OK.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, StatusDetail detail = StatusDetail::kNone);

  static Status OK() { return {}; }

  template <typename... Args>
  static Status InvalidArgument(Args&&... args) {
    return Make(StatusCode::kInvalidArgument, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status NotFound(Args&&... args) {
    return Make(StatusCode::kNotFound, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status IOError(Args&&... args) {
    return Make(StatusCode::kIOError, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status Corruption(Args&&... args) {
    return Make(StatusCode::kCorruption, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status NotImplemented(Args&&... args) {
    return Make(StatusCode::kNotImplemented, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status AlreadyExists(Args&&... args) {
    return Make(StatusCode::kAlreadyExists, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status Internal(Args&&... args) {
    return Make(StatusCode::kInternal, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status Cancelled(Args&&... args) {
    return Make(StatusCode::kCancelled, std::forward<Args>(args)...);
  }
  template <typename... Args>
  static Status ResourceExhausted(Args&&... args) {
    return Make(StatusCode::kResourceExhausted, std::forward<Args>(args)...);
  }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  const std::string& message() const;
  /// kNone for OK and for errors nobody refined.
  StatusDetail detail() const { return state_ ? state_->detail : StatusDetail::kNone; }

  /// Return "OK" or "<CodeName>: <message>".
  std::string ToString() const;

  /// Return a copy whose message is "<prefix><message>" (same code and detail).
  Status WithPrefix(std::string_view prefix) const;
  /// Return a copy whose message is "<prefix><message><suffix>" (same code and
  /// detail): to say where an error happened without losing what kind it was,
  /// which callers classify by (never rebuild it as Status::X(s.message())).
  Status WithContext(std::string_view prefix, std::string_view suffix) const;
  /// Return a copy with this detail (same code and message). OK stays OK.
  Status WithDetail(StatusDetail detail) const;

 private:
  template <typename... Args>
  static Status Make(StatusCode code, Args&&... args) {
    std::ostringstream os;
    (os << ... << std::forward<Args>(args));
    return Status(code, os.str());
  }

  struct State {
    StatusCode code;
    std::string message;
    StatusDetail detail;
  };
  std::shared_ptr<const State> state_;
};

/// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) {
      v_ = Status::Internal("Result constructed from an OK status");
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::OK() : std::get<Status>(v_); }

  /// REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T ValueOr(T fallback) const { return ok() ? std::get<T>(v_) : fallback; }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace sedpack

#define SEDPACK_CONCAT_INNER_(a, b) a##b
#define SEDPACK_CONCAT_(a, b) SEDPACK_CONCAT_INNER_(a, b)

/// Return the Status of `expr` from the enclosing function if it is not OK.
#define SEDPACK_RETURN_NOT_OK(expr)                  \
  do {                                               \
    ::sedpack::Status _st = (expr);                  \
    if (!_st.ok()) return _st;                       \
  } while (false)

#define SEDPACK_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

/// Evaluate `rexpr` (a Result); return its Status on error, else move the value into `lhs`.
#define SEDPACK_ASSIGN_OR_RETURN(lhs, rexpr) \
  SEDPACK_ASSIGN_OR_RETURN_IMPL_(SEDPACK_CONCAT_(_res_, __LINE__), lhs, rexpr)
