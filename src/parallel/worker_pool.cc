// SPDX-License-Identifier: Apache-2.0
#include "parallel/worker_pool.h"

#include <sched.h>

#include <thread>

namespace sedpack {

int UsableCpus() {
  // The CPUs this process may run on: under mpirun/srun with binding, the
  // cores given to this rank (hardware_concurrency counts the whole node, so
  // several ranks per node would each start a thread per core of the node).
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

int ResolveThreads(int threads) {
  if (threads > 0) return threads;
  return UsableCpus();
}

}  // namespace sedpack
