// SPDX-License-Identifier: Apache-2.0
#include "parallel/worker_pool.h"

#include <thread>

namespace sedpack {

int ResolveThreads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace sedpack
