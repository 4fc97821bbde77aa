#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One job identity: identical appends give the same dataset whatever the timing.

For 1 rank (and 2 ranks with --mpirun), from the same starting dataset:
  1. three identical `generate --append` commands one after another, and the same
     three started at the same moment, end with the same counts (the job's
     examples once); in both, exactly one run appends and the other two print a
     line beginning "nothing appended:" naming the job and exit 0;
  2. seven appends started together with distinct --seed, and three with distinct
     --job-id (same seed), each append: the counts are exact;
  3. SLURM task ids (SLURM_ARRAY_JOB_ID/SLURM_ARRAY_TASK_ID as srun sets them) are
     the identity: three tasks of one array with identical parameters each append,
     and a task run again (a requeue) appends nothing;
  4. `sedpack verify` passes on every dataset.
Usage: identical_append_test.py SEDPACK CONFIG WORKDIR [--mpirun MPIRUN]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

N = 40  # train examples each append adds


class Failure(Exception):
    pass


def train_count(ds):
    with open(os.path.join(ds, "dataset_info.json")) as f:
        return json.load(f)["splits"]["train"]["number_of_examples"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sedpack")
    ap.add_argument("config")
    ap.add_argument("work")
    ap.add_argument("--mpirun")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}

    def launch(ds, ranks, extra, more_env=None):
        argv = [a.sedpack, "generate", a.config, ds, "--append", "--examples-train", str(N), "-q"] + extra
        if ranks > 1:
            argv = [a.mpirun, "--oversubscribe", "-n", str(ranks)] + argv
        e = dict(env, **(more_env or {}))
        return subprocess.Popen(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(procs):
        out = []
        for p in procs:
            o, err = p.communicate(timeout=240)
            out.append((p.returncode, err))
        return out

    def fresh(name):
        ds = os.path.join(a.work, name)
        r = subprocess.run([a.sedpack, "generate", a.config, ds, "-q"], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure("generate %s: %s" % (name, r.stderr))
        return ds, train_count(ds)

    def verify(ds):
        r = subprocess.run([a.sedpack, "verify", ds], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise Failure("verify %s exited %d: %s" % (ds, r.returncode, r.stderr[-2000:]))

    rows = []
    for ranks in ([1, 2] if a.mpirun else [1]):
        results = {}
        for mode in ("sequential", "concurrent"):
            ds, base = fresh("same-%s-%d" % (mode, ranks))
            if mode == "sequential":
                runs = [finish([launch(ds, ranks, [])])[0] for _ in range(3)]
            else:
                runs = finish([launch(ds, ranks, []) for _ in range(3)])
            codes = [c for c, _ in runs]
            nothing = [e for _, e in runs if "nothing appended: job j" in e]
            if codes != [0, 0, 0]:
                raise Failure("%s, %d ranks: exit codes %s: %s" % (mode, ranks, codes, [e for _, e in runs]))
            if len(nothing) != 2 or not all("--seed" in e and "--job-id" in e for e in nothing):
                raise Failure("%s, %d ranks: want two 'nothing appended:' lines naming --seed/--job-id, got %s"
                              % (mode, ranks, [e for _, e in runs]))
            results[mode] = train_count(ds) - base
            verify(ds)
            rows.append("%d rank(s) %-10s 3 identical appends: +%d examples, exit codes %s, %d nothing appended"
                        % (ranks, mode, results[mode], codes, len(nothing)))
        if results["sequential"] != N or results["concurrent"] != N:
            raise Failure("%d ranks: identical appends added %s, want %d both ways" % (ranks, results, N))

        ds, base = fresh("seeds-%d" % ranks)
        runs = finish([launch(ds, ranks, ["--seed", str(1000 + i)]) for i in range(7)])
        if [c for c, _ in runs] != [0] * 7 or train_count(ds) - base != 7 * N:
            raise Failure("%d ranks, 7 distinct seeds: codes %s, +%d examples, want +%d"
                          % (ranks, [c for c, _ in runs], train_count(ds) - base, 7 * N))
        verify(ds)
        rows.append("%d rank(s) 7 concurrent distinct seeds: +%d examples" % (ranks, train_count(ds) - base))

        ds, base = fresh("names-%d" % ranks)
        runs = finish([launch(ds, ranks, ["--job-id", "capture-%d" % i]) for i in range(3)])
        if [c for c, _ in runs] != [0] * 3 or train_count(ds) - base != 3 * N:
            raise Failure("%d ranks, 3 --job-id: codes %s, +%d" % (ranks, [c for c, _ in runs], train_count(ds) - base))
        again = finish([launch(ds, ranks, ["--job-id", "capture-1"])])[0]
        if again[0] != 0 or "nothing appended:" not in again[1] or train_count(ds) - base != 3 * N:
            raise Failure("%d ranks: --job-id capture-1 again: %s" % (ranks, again))
        verify(ds)
        rows.append("%d rank(s) 3 concurrent --job-id (same seed): +%d examples; a name run again: nothing appended"
                    % (ranks, train_count(ds) - base))

    ds, base = fresh("slurm")
    tasks = [{"SLURM_JOB_ID": str(700 + t), "SLURM_ARRAY_JOB_ID": "700", "SLURM_ARRAY_TASK_ID": str(t)}
             for t in range(3)]
    runs = finish([launch(ds, 1, [], t) for t in tasks])
    if [c for c, _ in runs] != [0] * 3 or train_count(ds) - base != 3 * N:
        raise Failure("3 array tasks: codes %s, +%d, want +%d" % ([c for c, _ in runs], train_count(ds) - base, 3 * N))
    requeued = finish([launch(ds, 1, [], tasks[1])])[0]
    if requeued[0] != 0 or "nothing appended:" not in requeued[1] or train_count(ds) - base != 3 * N:
        raise Failure("array task 1 run again: %s" % (requeued,))
    verify(ds)
    rows.append("3 SLURM array tasks, identical parameters: +%d examples; task 1 again: nothing appended"
                % (train_count(ds) - base))
    print("\n".join(rows))
    print("PASS")


if __name__ == "__main__":
    try:
        main()
    except Failure as f:
        print("FAIL: %s" % f)
        sys.exit(1)
