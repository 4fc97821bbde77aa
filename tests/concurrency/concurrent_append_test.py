#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Concurrent writers never lose a commit (issue 15).

A dataset is made, then for each of --rounds rounds 8 `sedpack generate --append`
jobs are started at the same moment into it (with --mpirun: 6 serial jobs and 2
jobs of 2 ranks), each with its own seed and its own example counts. After each
round:

  1. every job exited 0 and printed its job id;
  2. dataset_info.json counts exactly the examples before the round plus the sum
     of what the jobs wrote, per split;
  3. every job is in the dataset with exactly its own examples: the children of
     <split>/shards_list.json under <split>/<job>-r<rank>/ add up to the job's
     count for that split (so no job's commit replaced another's);
  4. `sedpack verify` passes with no orphan warning, and no lock is left
     (.sedpack-hpc/commit.lock, .sedpack-hpc/jobs/*).
Finally `sedpack cat` reads every example back, and planted locks check the
stale-lock handling through the CLI: a dead job's lock is reported and removed by
`fix --gc --apply` and broken (with a message) by the next append; another host's
fresh lock is left alone by fix and makes an append time out naming its holder.
Usage: concurrent_append_test.py SEDPACK CONFIG WORKDIR [--mpirun MPIRUN] [--rounds N]
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

SPLITS = ("train", "test", "holdout")


class Failure(Exception):
    pass


def counts_of(ds):
    with open(os.path.join(ds, "dataset_info.json")) as f:
        info = json.load(f)
    out = {s: 0 for s in SPLITS}
    for split, sli in info["splits"].items():
        out[split] = sli["number_of_examples"]
    return out


def job_examples(ds, split, job):
    """Examples that <split>/shards_list.json reaches below <split>/<job>-r*/."""
    path = os.path.join(ds, split, "shards_list.json")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        top = json.load(f)
    total = 0
    for child in top.get("children_shard_lists", []):
        rel = child["shard_list_info_file"]["file_path"]
        if re.match(r"^%s/%s-r\d+/" % (re.escape(split), re.escape(job)), rel):
            total += child["number_of_examples"]
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sedpack")
    ap.add_argument("config")
    ap.add_argument("workdir")
    ap.add_argument("--mpirun")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=8)
    args = ap.parse_args()
    sedpack = os.path.abspath(args.sedpack)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    ds = os.path.join(args.workdir, "ds")
    small = ["--trace-length", "256", "-j", "1"]

    def run(argv, timeout=120):
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    rc, out, err = run([sedpack, "generate", args.config, ds, "--seed", "1", "--examples-train", "24",
                        "--examples-test", "8", "--examples-holdout", "0", *small])
    if rc != 0:
        raise Failure("initial generate failed (%d): %s%s" % (rc, out, err))
    expected = counts_of(ds)
    print("initial", expected, flush=True)
    mpi_jobs = 2 if args.mpirun else 0
    seed = 100
    all_jobs = {}
    for rnd in range(1, args.rounds + 1):
        jobs = []
        for j in range(args.jobs):
            seed += 1
            n = {"train": 5 + (j * 7 + rnd) % 11, "test": 2 + (j + rnd) % 5, "holdout": (j + rnd) % 3}
            argv = [sedpack, "generate", args.config, ds, "--append", "--seed", str(seed),
                    "--examples-train", str(n["train"]), "--examples-test", str(n["test"]),
                    "--examples-holdout", str(n["holdout"]), *small]
            ranks = 1
            if j >= args.jobs - mpi_jobs:
                ranks = 2
                argv = [args.mpirun, "-np", "2", "--oversubscribe", *argv]
            jobs.append({"argv": argv, "n": n, "ranks": ranks})
        started = time.monotonic()
        for k, job in enumerate(jobs):
            env = None
            if job["ranks"] > 1:
                # Each mpirun gets its own Open MPI session directory: mpiruns
                # started at the same moment otherwise race to create the shared
                # one (/tmp/ompi.<host>.<uid>), and the loser dies in start-up
                # with "File exists" (jobs/README.md tells users the same).
                env = dict(os.environ)
                # A short path: Open MPI puts Unix sockets (108-byte paths) below it.
                env["OMPI_MCA_orte_tmpdir_base"] = "/tmp/sedpack-ompi-%d-r%d-j%d" % (os.getpid(), rnd, k)
            job["p"] = subprocess.Popen(job["argv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=env)
        for job in jobs:
            try:
                job["out"], job["err"] = job["p"].communicate(timeout=180)
            except subprocess.TimeoutExpired:
                for other in jobs:
                    other["p"].kill()
                raise Failure("round %d: a job hung: %s" % (rnd, " ".join(job["argv"])))
        seconds = time.monotonic() - started
        added = {s: 0 for s in SPLITS}
        for job in jobs:
            if job["p"].returncode != 0:
                raise Failure("round %d: %s exited %d:\n%s%s" % (rnd, " ".join(job["argv"]), job["p"].returncode,
                                                                 job["out"], job["err"]))
            m = re.search(r"appended to .* with (\d+) ranks? \(job ([0-9A-Za-z_.-]+)\)", job["out"])
            if not m:
                raise Failure("round %d: no job id in the output of %s:\n%s" % (rnd, " ".join(job["argv"]),
                                                                               job["out"]))
            job["id"] = m.group(2)
            if job["id"] in all_jobs:
                raise Failure("round %d: job id %s used twice" % (rnd, job["id"]))
            all_jobs[job["id"]] = job["n"]
            for s in SPLITS:
                added[s] += job["n"][s]
        for s in SPLITS:
            expected[s] += added[s]
        got = counts_of(ds)
        lost = [s for s in SPLITS if got[s] != expected[s]]
        print("round %d: %d jobs (%d of 2 ranks) in %.1f s, added %s, dataset now %s, expected %s" %
              (rnd, len(jobs), sum(1 for j in jobs if j["ranks"] == 2), seconds, added, got, expected), flush=True)
        if lost:
            raise Failure("round %d: dataset_info.json counts %s, expected %s (a commit was lost)" %
                          (rnd, got, expected))
        # Every job of every round so far is in the dataset with exactly its examples.
        for job_id, n in all_jobs.items():
            for s in SPLITS:
                have = job_examples(ds, s, job_id)
                if have != n[s]:
                    raise Failure("round %d: job %s has %d %s examples in the dataset, wrote %d" %
                                  (rnd, job_id, have, s, n[s]))
        rc, out, err = run([sedpack, "verify", ds])
        if rc != 0 or "orphan" in (out + err).lower():
            raise Failure("round %d: sedpack verify (%d):\n%s%s" % (rnd, rc, out, err))
        if os.path.exists(os.path.join(ds, ".sedpack-hpc", "commit.lock")):
            raise Failure("round %d: the commit lock was left behind" % rnd)
        jobs_dir = os.path.join(ds, ".sedpack-hpc", "jobs")
        if os.path.isdir(jobs_dir) and os.listdir(jobs_dir):
            raise Failure("round %d: job reservations left behind: %s" % (rnd, os.listdir(jobs_dir)))
        for job in jobs:
            if "stale lock" in job["err"]:
                raise Failure("round %d: a live job's lock was broken: %s" % (rnd, job["err"]))
    # The examples read back, one line each.
    for s in SPLITS:
        rc, out, err = run([sedpack, "cat", ds, "--split", s])
        if rc == 2 and expected[s] == 0 and "has no split" in err:
            continue  # a split no job wrote is absent: cat refuses it (exit 2)
        if rc != 0:
            raise Failure("sedpack cat --split %s (%d): %s" % (s, rc, err))
        lines = sum(1 for line in out.splitlines() if line.strip())
        if lines != expected[s]:
            raise Failure("sedpack cat --split %s printed %d examples, expected %d" % (s, lines, expected[s]))
    check_fix_and_locks(sedpack, ds, run)
    print("ok: %d jobs over %d rounds, final counts %s" % (len(all_jobs), args.rounds, expected))


def lock_record(token, host, boot_id, pid):
    return ("sedpack-hpc lock 1\ntoken %s\nhost %s\nboot_id %s\npid %d\npid_start 0\njob \nstarted %d\n"
            % (token, host, boot_id, pid, int(time.time())))


def check_fix_and_locks(sedpack, ds, run):
    """A dead job's commit lock is broken by the next writer (with a message) and
    removed by `fix --gc --apply`; a live other host's lock is left alone."""
    host = socket.gethostname()
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot = f.read().strip()
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is now free: a job that died holding the lock
    sidecar = os.path.join(ds, ".sedpack-hpc")
    lock = os.path.join(sidecar, "commit.lock")
    with open(lock, "w") as f:
        f.write(lock_record("a" * 32, host, boot, dead.pid))
    rc, out, err = run([sedpack, "fix", ds])
    if rc != 0 or "stale lock" not in out:
        raise Failure("fix does not report the dead job's lock (%d):\n%s%s" % (rc, out, err))
    rc, out, err = run([sedpack, "fix", ds, "--gc", "--apply"])
    if rc != 0 or "removed lock .sedpack-hpc/commit.lock" not in out or os.path.exists(lock):
        raise Failure("fix --gc --apply did not remove the dead job's lock (%d):\n%s%s" % (rc, out, err))
    # The next writer breaks such a lock itself, naming it.
    with open(lock, "w") as f:
        f.write(lock_record("b" * 32, host, boot, dead.pid))
    before = counts_of(ds)
    rc, out, err = run([sedpack, "generate", sys.argv[2], ds, "--append", "--seed", "99", "--examples-train", "3",
                        "--examples-test", "0", "--examples-holdout", "0", "--trace-length", "256", "-j", "1"])
    if rc != 0 or ("breaking the stale lock " + lock) not in err or ("pid %d" % dead.pid) not in err:
        raise Failure("an append did not break the dead job's lock with a message (%d):\n%s%s" % (rc, out, err))
    if counts_of(ds)["train"] != before["train"] + 3:
        raise Failure("the append after breaking the lock is missing")
    # A lock of another host with a fresh heartbeat is presumed live: listed, kept.
    with open(lock, "w") as f:
        f.write(lock_record("c" * 32, "some-other-node", "x", 4242))
    rc, out, err = run([sedpack, "fix", ds, "--gc", "--apply"])
    if rc != 0 or "held by host some-other-node pid 4242" not in out or not os.path.exists(lock):
        raise Failure("fix --gc --apply touched a live lock (%d):\n%s%s" % (rc, out, err))
    rc, out, err = run([sedpack, "generate", sys.argv[2], ds, "--append", "--seed", "98", "--examples-train", "3",
                        "--examples-test", "0", "--examples-holdout", "0", "--trace-length", "256", "-j", "1",
                        "--lock-wait", "1"])
    if rc == 0 or "is held by host some-other-node pid 4242" not in err:
        raise Failure("an append did not time out naming the holder (%d):\n%s%s" % (rc, out, err))
    os.remove(lock)
    rc, out, err = run([sedpack, "fix", ds, "--gc", "--apply"])  # the timed-out job's shards
    rc, out, err = run([sedpack, "verify", ds])
    if rc != 0 or "orphan" in (out + err).lower():
        raise Failure("verify after the lock checks (%d):\n%s%s" % (rc, out, err))


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
