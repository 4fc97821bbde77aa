// SPDX-License-Identifier: Apache-2.0
// Cancellation of long-running work (writing a dataset, recompressing, packing,
// building an index, ...): one process-wide flag that the library checks at loop
// boundaries (per example, per shard, per file). Once it is set, the operations
// stop within moments, undo what they had not committed (their own uncommitted
// shard files and temporary files; a dataset folder they created), and return
// StatusCode::kCancelled.
//
// The `sedpack` tool sets it from its SIGINT/SIGTERM handler. A program using
// the library (or a binding) can do the same from its own handler, or call
// RequestCancellation from any thread. It is process-wide on purpose: a signal
// is, and a job split over threads must stop as a whole.
#pragma once

#include "sedpack/status.h"

namespace sedpack {

/// Ask every running operation to stop. `signal_number` is the reason (SIGINT,
/// SIGTERM, ...), 0 for "asked by the program". Async-signal-safe and
/// thread-safe: it only stores an integer. The first request's number is kept.
void RequestCancellation(int signal_number = 0) noexcept;

/// True once RequestCancellation was called (and not reset). Cheap: one relaxed
/// atomic load.
bool CancellationRequested() noexcept;

/// The signal number of the first request (0 if none, or if asked by the program).
int CancellationSignal() noexcept;

/// Clear the request, so that new work can run (tests; a program that goes on
/// after cancelling one job). Not while cancelled operations still run.
void ResetCancellation() noexcept;

/// OK, or once cancellation was requested a kCancelled status whose message
/// is "interrupted" and names the signal ("interrupted (SIGTERM)").
Status CheckCancelled();

/// True for the statuses cancelled operations return (code kCancelled).
inline bool IsCancelled(const Status& status) { return status.code() == StatusCode::kCancelled; }

}  // namespace sedpack
