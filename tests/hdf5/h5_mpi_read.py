# SPDX-License-Identifier: Apache-2.0
"""Run under mpirun: open FILE with h5py's MPI-IO driver on every rank, read
each rank's share of the rows of every dataset (collectively where the dtype
allows) and compare them with the same rows of REFERENCE, read serially.
Exit 0 if every rank agrees, 1 on a difference, 77 without h5py built for MPI.
Usage: mpirun -n N python3 h5_mpi_read.py FILE REFERENCE"""
import sys

try:
    import h5py
    import numpy as np
    from mpi4py import MPI
except ImportError as e:
    print(f"h5_mpi_read.py: {e}", file=sys.stderr)
    sys.exit(77)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return all(np.asarray(x).tobytes() == np.asarray(y).tobytes() and type(x) is type(y)
                   for x, y in zip(a.ravel(), b.ravel()))
    return a.tobytes() == b.tobytes()


def main():
    if not h5py.get_config().mpi:
        print("h5_mpi_read.py: this h5py is not built for MPI (install python3-h5py-mpi)", file=sys.stderr)
        return 77
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    path, reference = sys.argv[1], sys.argv[2]
    bad, rows_read = [], 0
    with h5py.File(path, "r", driver="mpio", comm=comm) as f, h5py.File(reference, "r") as ref:
        names = []
        f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        for name in sorted(names):  # the same order on every rank: collective reads pair up
            d = f[name]
            n = d.shape[0]
            lo, hi = n * rank // size, n * (rank + 1) // size
            if d.dtype.kind == "O":
                mine = d[lo:hi]
            else:
                with d.collective:
                    mine = d[lo:hi]
            rows_read += hi - lo
            if name not in ref or not same(mine, ref[name][lo:hi]):
                bad.append(name)
    bad_all = comm.allgather(bad)
    rows_all = comm.allreduce(rows_read)
    if rank == 0:
        for r, b in enumerate(bad_all):
            for name in b:
                print(f"h5_mpi_read.py: rank {r}: {name} differs from {reference}", file=sys.stderr)
        if not any(bad_all):
            print(f"mpio read on {size} ranks: {len(names)} datasets, {rows_all} rows equal")
    return 1 if any(bad_all) or rows_all == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
