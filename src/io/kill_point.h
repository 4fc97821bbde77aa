// SPDX-License-Identifier: Apache-2.0
// Deterministic crash points for the crash-consistency tests.
//
// Every operation that changes what is on disk (a file renamed into place, a
// folder created, a tree removed or swapped) calls KillPoint() right after it
// happened. Normally that is one relaxed atomic load. With the environment
//   SEDPACK_TEST_KILL_AT=N      the process sends itself SIGKILL at the N-th point
//                               (counted from 1 in this process, all threads);
//   SEDPACK_TEST_KILL_RANK=R    only in MPI rank R (OMPI_COMM_WORLD_RANK, PMIX_RANK
//                               or PMI_RANK), so one rank of a job dies;
//   SEDPACK_TEST_KILL_WHAT=W    counts for KILL_AT only the points of kind W
//                               ("journal": the N-th journal record), which come
//                               in the same order whatever the threads' interleaving;
//   SEDPACK_TEST_KILL_SIGNAL=S  sends signal number S instead (15: a SIGTERM at a
//                               known point, which the job handles as a stop);
//   SEDPACK_TEST_STEP_LOG=FILE  every point appends "rank<TAB>N<TAB>what<TAB>path\n",
// a test can first count a job's points and learn where its commit happens, then
// rerun it killed at any chosen point. SIGKILL cannot be caught, so what is left
// on disk is exactly what a crash at that instant leaves.
//   SEDPACK_TEST_SHARD_DELAY_MS=M  a pass over the shards (stats, digest, report)
//                               waits M ms before each shard, so that a signal
//                               test can stop it mid-pass on any machine.
//   SEDPACK_TEST_JOURNAL_DELAY_MS=M  waits M ms after every journal record, so
//                               that a job outlasts a scheduler's time limit
//                               (the SLURM time-limit test) without a large input.
//   SEDPACK_TEST_RECORD_MS=M    export-hdf5's least time between two journal
//                               records (0: one every ~32 MiB), so that a test
//                               can stop an export at a record on any machine.
// Shard steps, the handshake of the signal tests: a step is a shard a writer has
// just written, or one a pass over the shards is about to read (the delay's place).
//   SEDPACK_TEST_SHARD_NOTIFY=FILE every step appends "rank<TAB>N<TAB>what\n" (N
//                               counted from 1 in this process, all threads);
//   SEDPACK_TEST_SHARD_GATE=N   from its N-th step on, every step waits there
//                               until the job is asked to stop (CancellationRequested:
//                               a signal), at most a minute. The test waits for line N,
//                               then signals: the job cannot have finished first, and
//                               is stopped at a known shard however loaded the machine.
// Project-private (src/io, not installed): a test facility, not API.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace sedpack {

void KillPoint(std::string_view what, std::string_view path);

/// Sleeps SEDPACK_TEST_SHARD_DELAY_MS (read once) when set, then takes a shard
/// step ("read"); without the variables it returns at once.
void TestShardDelay();

/// The shard step ("written") of a writer that has just put a shard in place.
void TestShardWritten();

/// SEDPACK_TEST_RECORD_MS (read once); nullopt when unset, empty or not a
/// number of 0 or more.
std::optional<std::chrono::milliseconds> TestRecordInterval();

}  // namespace sedpack
