# SPDX-License-Identifier: Apache-2.0
"""Under mpirun: every rank reads its share of the rows of the given datasets
of FILE in 64 MB blocks, through h5py's default (sec2) driver, as import-hdf5
reads, and through the MPI-IO driver, independent and collective. Prints the
median time of REPEAT runs of each (rank 0). Needs h5py built for MPI.
Usage: mpirun -n N python3 hdf5_read_drivers.py FILE REPEAT DATASET..."""
import statistics
import sys
import time

import h5py
import numpy as np
from mpi4py import MPI


def blocks(d, rank, size):
    """This rank's [a, b) row blocks; every rank gets the same number of blocks
    (some possibly empty) so that collective reads pair up."""
    n = d.shape[0]
    row_bytes = max(1, d.dtype.itemsize * (d.size // max(1, n)))
    step = max(1, (64 << 20) // row_bytes)
    share = -(-n // size)
    lo, hi = min(n, share * rank), min(n, share * (rank + 1))
    return [(min(hi, lo + i), min(hi, lo + i + step)) for i in range(0, share, step)]


def run(comm, path, names, how):
    comm.Barrier()
    t0 = time.perf_counter()
    kw = {} if how == "sec2" else {"driver": "mpio", "comm": comm}
    with h5py.File(path, "r", **kw) as f:
        for name in names:
            d = f[name]
            for a, b in blocks(d, comm.Get_rank(), comm.Get_size()):
                if how == "mpio collective":
                    with d.collective:
                        d.read_direct(buf(d, b - a), source_sel=sel(a, b, d))
                else:
                    d.read_direct(buf(d, b - a), source_sel=sel(a, b, d))
    comm.Barrier()
    return time.perf_counter() - t0


def buf(d, rows):
    return np.empty((rows,) + d.shape[1:], dtype=d.dtype)


def sel(a, b, d):
    return (slice(a, b),) + tuple(slice(None) for _ in d.shape[1:])


def main():
    comm = MPI.COMM_WORLD
    path, repeat, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    if not h5py.get_config().mpi:
        if comm.Get_rank() == 0:
            print("(this h5py is not built for MPI: install python3-h5py-mpi)")
        return 0
    for how in ("sec2", "mpio independent", "mpio collective"):
        t = statistics.median(run(comm, path, names, how) for _ in range(repeat))
        if comm.Get_rank() == 0:
            print(f"{comm.Get_size()} ranks read their rows, {how + ' driver:':26s} {t:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
