# SPDX-License-Identifier: Apache-2.0
"""Run under `mpirun -n N python3 mpi_write.py <empty-or-missing folder> [--mpi4py]`
(the ctest `python_mpi_write_np2`). Every rank writes its own examples with
distributed_filler; the collective finish merges them at rank 0. Then a rank
fails inside the block: every rank must raise and nothing may be published.
Finally distributed_check verifies in parallel. Exit status 0 only if all holds."""
import os
import shutil
import sys

if "--mpi4py" in sys.argv:
    from mpi4py import MPI  # noqa: F401  (MPI initialised by mpi4py first)

import traceback

import numpy as np

import sedpack_hpc


def die(*exc_info):
    # One rank failing must end the job, not leave the others in a barrier.
    traceback.print_exception(*exc_info)
    sys.stderr.flush()
    os._exit(1)


sys.excepthook = die

base = sys.argv[1]
rank, size = sedpack_hpc.mpi_rank(), sedpack_hpc.mpi_size()
assert size >= 2, "run with at least 2 ranks"
if rank == 0:
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
sedpack_hpc.mpi_barrier()

root = os.path.join(base, "ds")
structure = {"saved_data_description": [{"name": "k", "dtype": "int", "shape": []},
                                        {"name": "x", "dtype": "float32", "shape": [3]}],
             "examples_per_shard": 4, "compression": "ZSTD"}
PER_RANK = 10
with sedpack_hpc.distributed_filler(root, metadata={"description": "mpi"},
                                    dataset_structure=structure) as f:
    for i in range(PER_RANK):
        k = rank * PER_RANK + i
        f.write_example(values={"k": k, "x": np.full(3, k, np.float32)},
                        split="train" if i % 5 else "test")

ds = sedpack_hpc.Dataset(root)
keys = sorted(e["k"] for split in ("train", "test")
              for e in ds.as_numpy_iterator(split=split, shuffle=0, repeat=False))
assert keys == list(range(size * PER_RANK)), keys
checksums = ds.current_metadata_checksums()
sedpack_hpc.distributed_check(root, hash_checksums_values=checksums)

# A failure on the last rank: every rank raises, nothing new becomes visible.
raised = None
try:
    with sedpack_hpc.distributed_filler(root) as f:
        for i in range(6):
            if rank == size - 1 and i == 3:
                raise RuntimeError("capture failed")
            f.write_example(values={"k": 1000 + i, "x": np.zeros(3, np.float32)}, split="train")
except Exception as e:  # noqa: BLE001
    raised = e
assert raised is not None, f"rank {rank} did not raise"
if rank == size - 1:
    assert isinstance(raised, RuntimeError), raised
else:
    assert isinstance(raised, sedpack_hpc.PeerAbortedError), raised
    # Either the reason ("rank N failed: ...") or, if the failure notice came
    # first, "another rank failed".
    assert str(raised).startswith("aborted: ") and "failed" in str(raised), str(raised)
sedpack_hpc.mpi_barrier()
assert sedpack_hpc.Dataset(root).current_metadata_checksums() == checksums
sedpack_hpc.distributed_check(root, hash_checksums_values=checksums)
print(f"rank {rank}/{size}: ok ({type(raised).__name__}: {raised})")
