// SPDX-License-Identifier: Apache-2.0
#include "sedpack/status.h"

namespace sedpack {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "Invalid argument";
    case StatusCode::kNotFound: return "Not found";
    case StatusCode::kIOError: return "IO error";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kNotImplemented: return "Not implemented";
    case StatusCode::kAlreadyExists: return "Already exists";
    case StatusCode::kInternal: return "Internal error";
    case StatusCode::kResourceExhausted: return "Resource exhausted";
    case StatusCode::kCancelled: return "Cancelled";
  }
  return "Unknown";
}

std::string_view StatusDetailName(StatusDetail detail) {
  switch (detail) {
    case StatusDetail::kNone: return "none";
    case StatusDetail::kPeerAborted: return "peer_aborted";
    case StatusDetail::kOutsideRoot: return "outside_root";
    case StatusDetail::kPathEscape: return "path_escape";
    case StatusDetail::kHashMismatch: return "hash_mismatch";
    case StatusDetail::kJobCommitted: return "job_committed";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string message, StatusDetail detail) {
  if (code != StatusCode::kOk) {
    state_ = std::make_shared<const State>(State{code, std::move(message), detail});
  }
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code()));
  out += ": ";
  out += state_->message;
  return out;
}

Status Status::WithPrefix(std::string_view prefix) const { return WithContext(prefix, {}); }

Status Status::WithContext(std::string_view prefix, std::string_view suffix) const {
  if (ok()) return *this;
  std::string message;
  message.reserve(prefix.size() + state_->message.size() + suffix.size());
  message.append(prefix).append(state_->message).append(suffix);
  return Status(code(), std::move(message), state_->detail);
}

Status Status::WithDetail(StatusDetail detail) const {
  if (ok()) return *this;
  return Status(code(), state_->message, detail);
}

}  // namespace sedpack
