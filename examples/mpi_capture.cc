// SPDX-License-Identifier: Apache-2.0
// A minimal MPI capture program: every rank writes its own traces into one
// sedpack dataset; rank 0 merges the metadata. Run: mpirun -n 4 ./mpi_capture OUT
#include <cstdio>
#include <vector>

#include "sedpack/mpi/distributed_write.h"
#include "sedpack/mpi/mpi_comm.h"

int main(int argc, char** argv) {
  auto session = sedpack::MpiSession::Start(&argc, &argv);
  if (!session.ok() || argc != 2) return 2;
  sedpack::Comm& comm = (*session)->comm();

  sedpack::DatasetStructure structure;
  structure.saved_data_description = {{"trace1", "float16", {5000}, {}},
                                      {"key", "uint8", {16}, {}}};
  structure.compression = sedpack::Compression::kZstd;
  sedpack::DistributedWriteOptions options;
  options.create_structure = structure;  // rank 0 creates the dataset if missing

  auto writer = sedpack::DistributedWriter::Open(comm, argv[1], options);
  if (!writer.ok()) {
    std::fprintf(stderr, "[rank %d] %s\n", comm.rank(), writer.status().ToString().c_str());
    return 1;
  }
  std::vector<sedpack::Float16> trace(5000);
  std::vector<std::uint8_t> key(16);
  for (int i = 0; i < 100; ++i) {
    // ... capture into `trace` and `key` here ...
    trace[0] = sedpack::Float16::FromFloat(static_cast<float>(comm.rank()));
    key[0] = static_cast<std::uint8_t>(i);
    const sedpack::ValueView values[] = {sedpack::ValueView::Array(trace, {5000}),
                                         sedpack::ValueView::Array(key, {16})};
    if (!(*writer)->WriteExample(sedpack::Split::kTrain, values).ok()) break;
  }
  const sedpack::Status done = (*writer)->Finish();  // collective
  if (!done.ok()) {
    std::fprintf(stderr, "[rank %d] %s\n", comm.rank(), done.ToString().c_str());
    return 1;
  }
  return 0;
}
