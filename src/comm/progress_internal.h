// SPDX-License-Identifier: Apache-2.0
// Whole-job progress on rank 0 over Comm's progress channel: every other rank
// sends its cumulative count now and then, rank 0 adds the latest ones to its
// own. Private to the library (importers, generate, recompress, verify, check).
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "sedpack/comm/comm.h"
#include "sedpack/status.h"

namespace sedpack::internal {

class RankProgress {
 public:
  using Clock = std::chrono::steady_clock;

  /// Ranks other than 0 send at most once per `send_interval` (their final
  /// count always).
  explicit RankProgress(Comm& comm, Clock::duration send_interval = std::chrono::milliseconds(200))
      : comm_(comm), send_interval_(send_interval), last_send_(Clock::now()) {}

  bool is_root() const { return comm_.rank() == 0; }

  /// Not rank 0: send this rank's cumulative `value` if `final` or the send
  /// interval has passed since the last send.
  void Send(std::uint64_t value, bool final);

  /// Rank 0: take what has arrived. The channel resets itself once it has
  /// answered that every other rank sent its final count, so that answer is
  /// latched and the channel is not asked again.
  Status Poll();

  /// Rank 0: `mine` plus the other ranks' latest counts.
  std::uint64_t Total(std::uint64_t mine) const;

  /// Rank 0: every other rank has sent its final count (as of the last Poll).
  bool others_final() const { return others_final_; }

  /// Rank 0: poll until every other rank has sent its final count, calling
  /// `tick()` (progress output) once per send interval meanwhile. The poll is
  /// every 2 ms: the job's end waits for this loop, and a loop that slept 50 ms
  /// between polls added up to 50 ms to every multi-rank job.
  template <typename Tick>
  void WaitForOthersFinal(Tick&& tick) {
    auto last_tick = Clock::now();
    while (!others_final_) {
      (void)Poll();  // a lost progress message only delays the numbers
      if (others_final_) break;
      if (Clock::now() - last_tick >= send_interval_) {
        tick();
        last_tick = Clock::now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

 private:
  Comm& comm_;
  Clock::duration send_interval_;
  Clock::time_point last_send_;
  std::vector<std::int64_t> others_;
  bool others_final_ = false;
};

}  // namespace sedpack::internal
