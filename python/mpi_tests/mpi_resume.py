# SPDX-License-Identifier: Apache-2.0
"""A resumable distributed_filler killed on one rank, run again: the dataset
equals an uninterrupted run's. Usage: `python3 mpi_resume.py MPIEXEC WORKDIR`
(the ctest `python_mpi_resume_np2`) runs itself under `MPIEXEC -n 2` three
times: an uninterrupted job, a job whose rank 1 SIGKILLs itself mid-fill (mpirun
then ends rank 0), and the same job again, which must keep shards of the killed
run (resumed_shards > 0) and skip what they hold. Exit status 0 only if all holds."""
import os
import shutil
import signal
import subprocess
import sys

EXAMPLES = 80  # per rank, shards of 8


def worker(path, kill_after):
    import numpy as np

    import sedpack_hpc
    rank = sedpack_hpc.mpi_rank()
    structure = {"saved_data_description": [{"name": "x", "dtype": "float32", "shape": [32]},
                                            {"name": "i", "dtype": "int64", "shape": []}],
                 "compression": "LZ4", "examples_per_shard": 8}
    with sedpack_hpc.distributed_filler(path, metadata={"description": "resume"}, dataset_structure=structure,
                                        concurrency=1, job_id="mpifill", resume=True,
                                        job_parameters={"seed": 1}, skip_kept=True) as f:
        start = f.resumed_examples["train"]
        if rank == 0:
            print("resumed_shards", f.resumed_shards, flush=True)
        for i in range(start, EXAMPLES):
            v = np.random.default_rng(rank * 1000 + i).standard_normal(32).astype(np.float32)
            f.write_example(values={"x": v, "i": rank * 1000 + i}, split="train")
            if rank == 1 and i + 1 == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)


def contents(path):
    from sedpack_hpc import Dataset
    ds = Dataset(path)
    return [(int(e["i"]), e["x"].tobytes()) for e in ds.as_numpy_iterator(split="train", shuffle=0,
                                                                             repeat=False)]


def main():
    if sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]))
        return 0
    mpiexec, work = sys.argv[1], os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    def job(path, kill_after):
        return subprocess.run([mpiexec, "-n", "2", "--oversubscribe", sys.executable, os.path.abspath(__file__),
                               "--worker", path, str(kill_after)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    ref, ds = os.path.join(work, "ref"), os.path.join(work, "ds")
    done = job(ref, 0)
    if done.returncode != 0:
        print("FAIL: uninterrupted job exited %d: %s" % (done.returncode, done.stderr[-2000:]))
        return 1
    killed = job(ds, 50)
    if killed.returncode == 0:
        print("FAIL: the killed job exited 0")
        return 1
    rerun = job(ds, 0)
    if rerun.returncode != 0:
        print("FAIL: rerun exited %d: %s" % (rerun.returncode, rerun.stderr[-2000:]))
        return 1
    kept = int(rerun.stdout.split("resumed_shards")[1].split()[0])
    want, got = contents(ref), contents(ds)
    ok = kept > 0 and want == got and len(want) == 2 * EXAMPLES
    print("resumed_shards %d, %d examples, equal: %s" % (kept, len(got), want == got))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
