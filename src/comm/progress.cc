// SPDX-License-Identifier: Apache-2.0
#include "comm/progress_internal.h"

namespace sedpack::internal {

void RankProgress::Send(std::uint64_t value, bool final) {
  const auto now = Clock::now();
  if (!final && now - last_send_ < send_interval_) return;
  last_send_ = now;
  comm_.SendProgress(0, static_cast<std::int64_t>(value), final);
}

Status RankProgress::Poll() {
  if (others_final_) return Status::OK();
  SEDPACK_ASSIGN_OR_RETURN(Comm::Progress p, comm_.ReceiveProgress());
  others_ = std::move(p.values);
  others_final_ = p.all_final;
  return Status::OK();
}

std::uint64_t RankProgress::Total(std::uint64_t mine) const {
  for (std::size_t r = 1; r < others_.size(); ++r) mine += static_cast<std::uint64_t>(others_[r]);
  return mine;
}

}  // namespace sedpack::internal
