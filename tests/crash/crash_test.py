#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Crash consistency: SIGKILL a job at many points and check what it leaves.

For each job (a serial writer, a 2-rank MPI writer, an in-place recompress and an
append) the job is first run to the end with SEDPACK_TEST_STEP_LOG, which lists
every point where it changes the disk (io/kill_point.h) and where its commit
happens. Then, for each chosen kill point k, a fresh copy of the starting state
gets the same job with SEDPACK_TEST_KILL_AT=k (and, under MPI, the rank to kill),
so the process dies by SIGKILL right after its k-th change, and:

  1. the dataset opens and `sedpack check` passes;
  2. every split holds exactly the examples of the last completed commit (the new
     ones if k is at or after the commit point, else the old ones), compared value
     for value with `sedpack cat` of an uninterrupted run;
  3. `sedpack fix --gc --apply` leaves no orphan, temporary file, staging folder
     or lock file (a job killed holding the commit lock or its job reservation
     leaves it behind; its pid is gone, so it is provably stale). Under mpirun
     "gone" is checked once every rank has ended, not when mpirun returns: mpirun
     exits without waiting for the ranks it stopped (job_harness.wait_session_gone),
     and a rank still dying then holds its locks as a live job;
  4. rerunning the job (or --append for a writer whose dataset already exists)
     gives exactly the examples of an uninterrupted run, and check passes.

Points are spread evenly over the whole job, and every point of the commit itself
(journal, lists, dataset_info.json, journal removal) is included, unless
--commit-points N asks for a sample of N of them (plus the commit step and its
neighbours), which the slow sanitizer build uses.
Usage: crash_test.py SEDPACK CONFIG WORKDIR [--mpirun MPIRUN] [--points N] [--commit-points N]
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import job_harness  # noqa: E402  (the work folder, a job's environment, run)
from job_harness import Failure  # noqa: E402

KILLED = (-9, 137)  # SIGKILL of the process itself, or as reported by mpirun


class Harness(job_harness.Harness):
    def __init__(self, args):
        super().__init__(args)
        self.points = args.points
        self.commit_points = args.commit_points

    # -- running ---------------------------------------------------------------
    def job_env(self, argv, extra):
        env = super().job_env(argv, extra)
        if "ASAN_OPTIONS" in env and argv[0] != self.mpirun:
            # Sanitizer build: only processes under mpirun need allocation stacks from
            # the slow unwinder (for the Open MPI leak suppressions); the later
            # setting wins, and the serial jobs run several times faster without it.
            env["ASAN_OPTIONS"] += ":fast_unwind_on_malloc=1"
        return env

    def run(self, argv, env=None, timeout=180):
        """Runs `argv` to its end; for mpirun that includes every rank's: mpirun can
        exit while a rank it stopped is still running (job_harness.wait_session_gone),
        and a lock that rank holds is then rightly seen as a live job's."""
        argv = self.forward(argv, env or {})
        p = subprocess.Popen(argv, env=self.job_env(argv, env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            job_harness.kill_session(p.pid)
            p.communicate()
            raise Failure("timed out (a hang): " + " ".join(argv))
        job_harness.wait_session_gone(p.pid)
        return p.returncode, out, err

    def sp(self, *args):
        rc, out, err = self.run([self.sedpack, *args])
        if rc != 0:
            raise Failure("sedpack %s exited %d: %s%s" % (" ".join(args), rc, out[-2000:], err[-2000:]))
        return out

    def job_argv(self, job, ds, env_names):
        return [*self.mpi_prefix(job, env_names), self.sedpack, *job["args"](ds)]

    # -- dataset state -----------------------------------------------------------
    def dumps(self, ds):
        """Every split's examples as `sedpack cat` prints them (exact values); a split
        the dataset does not have is "" (cat refuses it with exit 2)."""
        with open(os.path.join(ds, "dataset_info.json")) as f:
            present = json.load(f).get("splits", {})
        return {s: self.sp("cat", ds, "--split", s) if s in present else ""
                for s in ("train", "test", "holdout")}

    @staticmethod
    def compression(ds):
        with open(os.path.join(ds, "dataset_info.json")) as f:
            return json.load(f)["dataset_structure"]["compression"]

    def state(self, ds):
        if not os.path.exists(os.path.join(ds, "dataset_info.json")):
            return None
        self.sp("check", ds)
        return (self.dumps(ds), self.compression(ds))

    def assert_clean_after_gc(self, ds, job):
        self.sp("fix", ds, "--gc", "--apply")
        out = self.sp("fix", ds)
        if ("0 orphan files and 0 temporary files" not in out or "\nrecompress " in "\n" + out or
                "stale lock" in out or "\nlock " in "\n" + out):
            raise Failure("fix --gc --apply left something behind:\n" + out)
        # A job killed while it held the commit lock or its job reservation left
        # them (its pid is gone): gc removes them, as provably stale.
        sidecar = os.path.join(ds, ".sedpack-hpc")
        left = [n for n in (os.listdir(sidecar) if os.path.isdir(sidecar) else []) if ".lock" in n]
        jobs_dir = os.path.join(sidecar, "jobs")
        left += ["jobs/" + n for n in (os.listdir(jobs_dir) if os.path.isdir(jobs_dir) else [])]
        if left:
            raise Failure("fix --gc --apply left lock files behind: %s\n%s" % (left, out))
        staging = os.path.join(os.path.dirname(ds), "." + os.path.basename(ds) + ".recompress")
        if os.path.exists(staging):
            raise Failure("the recompress staging folder is still there: " + staging)

    def resume_after_kill(self, job, ds, got, after, k):
        """A resumable job: `fix --gc --apply` leaves its journal and kept shards (it
        removes only the dead job's stale lock), and the same command run again
        finishes it; afterwards no journal is left (one left by a kill between the
        commit and the journal's removal goes with --remove-abandoned-jobs)."""
        if got is not None:
            self.sp("fix", ds, "--gc", "--apply")
        if got != after:
            rc, out, err = self.run([*self.mpi_prefix(job), self.sedpack, *job["args"](ds)])
            if rc != 0:
                raise Failure("resume after a kill at step %d failed (%d): %s" % (k, rc, err[-1000:]))
        else:
            self.sp("fix", ds, "--remove-abandoned-jobs")
        jobs_dir = os.path.join(ds, ".sedpack-hpc", "jobs")
        left = [n for n in (os.listdir(jobs_dir) if os.path.isdir(jobs_dir) else []) if n.endswith(".journal")]
        if left:
            raise Failure("after a kill at step %d and the resume, journals are left: %s" % (k, left))

    # -- one job -----------------------------------------------------------------
    def step_log(self, job, ds):
        log = os.path.join(self.work, "steps.log")
        if os.path.exists(log):
            os.remove(log)
        rc, out, err = self.run(self.job_argv(job, ds, ["SEDPACK_TEST_STEP_LOG"]),
                                env={"SEDPACK_TEST_STEP_LOG": log})
        if rc != 0:
            raise Failure("uninterrupted %s failed (%d): %s" % (job["name"], rc, err))
        steps = {}
        with open(log) as f:
            for line in f:
                rank, n, what, path = line.rstrip("\n").split("\t", 3)
                steps.setdefault(int(rank), []).append((int(n), what, path))
        for r in steps:
            steps[r].sort()
        return steps

    @staticmethod
    def commit_step(job, rank_steps):
        """The step after which the new state is the committed one."""
        for n, what, path in reversed(rank_steps):
            if job["commit"](what, path):
                return n
        return None

    def choose(self, rank_steps, commit, budget):
        """Every step of the commit window plus evenly spread points before it."""
        total = len(rank_steps)
        window_start = commit if commit else total + 1
        for n, what, path in rank_steps:
            if path.endswith("commit-journal") and what == "rename":
                window_start = min(window_start, n)
        if job_is_recompress(rank_steps):
            window_start = min(window_start, max(1, total - 3))
        window = list(range(window_start, total + 1))
        n = self.commit_points
        if n and len(window) > n:
            # Sampled commit: n evenly spread steps, the first and last, and the
            # commit step with both its neighbours.
            keep = {window[(i * (len(window) - 1)) // max(n - 1, 1)] for i in range(n)}
            keep |= {window[0], window[-1]}
            if commit:
                keep |= {commit - 1, commit, commit + 1}
            window = [k for k in window if k in keep]
        chosen = set(window)
        rest = max(budget - len(chosen), 1)
        span = max(window_start - 1, 1)
        for i in range(rest):
            chosen.add(1 + (i * span) // rest)
        return sorted(k for k in chosen if 1 <= k <= total)

    def mpi_prefix(self, job, env_names=()):
        if job.get("ranks", 1) == 1:
            return []
        x = []
        for name in env_names:
            x += ["-x", name]
        return [self.mpirun, "-np", str(job["ranks"]), "--oversubscribe", *x]

    def run_job(self, job):
        started = time.monotonic()
        base = os.path.join(self.work, job["name"] + "-base")
        reference = os.path.join(self.work, job["name"] + "-ref")
        job["setup"](base)
        if os.path.exists(base):
            shutil.copytree(base, reference, symlinks=True)
        steps = self.step_log(job, reference)
        after = self.state(reference)
        if after is None:
            raise Failure(job["name"] + ": uninterrupted run left no dataset")
        if os.path.exists(base):
            before = self.state(base)
            create = 0
        else:
            # A new dataset: absent until its empty dataset_info.json is created (the
            # first commit), then empty until the job's own commit.
            before = ({s: "" for s in after[0]}, after[1])
            create = next(n for n, what, path in steps[0] if job["commit"](what, path))
        ranks = sorted(steps)
        # Under MPI the points are shared by the ranks (rank 0 also gets its whole commit).
        per_rank = max(self.points // len(ranks), 4)
        plan = []
        for r in ranks:
            commit = self.commit_step(job, steps[r]) if r == 0 else None
            for k in self.choose(steps[r], commit, per_rank):
                plan.append((r, k, commit))
        tried = survived = 0
        failures = []
        for r, k, commit in plan:
            tried += 1
            ds = os.path.join(self.work, "%s-r%d-k%d" % (job["name"], r, k))
            if os.path.exists(base):
                shutil.copytree(base, ds, symlinks=True)
            env = {"SEDPACK_TEST_KILL_AT": str(k)}
            if job.get("ranks", 1) > 1:
                env["SEDPACK_TEST_KILL_RANK"] = str(r)
            try:
                rc, out, err = self.run(self.job_argv(job, ds, list(env)), env=env)
                if rc not in KILLED and not (rc != 0 and job.get("ranks", 1) > 1):
                    raise Failure("expected a SIGKILL at step %d, got exit %d: %s" % (k, rc, err[-500:]))
                # 1-2: what is on disk is the last completed commit, and it checks clean.
                if commit is not None and k >= commit:
                    want = after
                elif r == 0 and k < create:
                    want = None
                else:
                    want = before
                got = self.state(ds)
                if got != want:
                    def show(st):
                        if st is None:
                            return "absent"
                        return "%s, %s" % ({sp: len(v.splitlines()) for sp, v in st[0].items()}, st[1])
                    raise Failure("after a kill at step %d (commit at %s) the dataset is %s, expected %s"
                                  % (k, commit, show(got), show(want)))
                # 3-4: clean up, then finish the job from the committed state.
                if job.get("resumable"):
                    self.resume_after_kill(job, ds, got, after, k)
                elif got is not None:
                    self.assert_clean_after_gc(ds, job)
                if got != after and not job.get("resumable"):
                    again = job["args"](ds) if got is None else job["rerun"](ds)
                    rc, out, err = self.run([*self.mpi_prefix(job), self.sedpack, *again])
                    if rc != 0:
                        raise Failure("rerun after a kill at step %d failed (%d): %s" % (k, rc, err[-1000:]))
                if self.state(ds) != after:
                    raise Failure("after a kill at step %d and the rerun, the dataset differs from an "
                                  "uninterrupted run" % k)
                survived += 1
                shutil.rmtree(ds, ignore_errors=True)
            except Failure as e:
                failures.append("%s rank %d step %d: %s" % (job["name"], r, k, e))
        self.table.append((job["name"], {r: len(steps[r]) for r in ranks}, tried, survived))
        # Progress for a log cut short by a timeout.
        print("%s: %d kill points tried, %d survived (%.0f s)"
              % (job["name"], tried, survived, time.monotonic() - started), flush=True)
        for f in failures:
            print("FAIL " + f, file=sys.stderr)
        return not failures


def job_is_recompress(rank_steps):
    return any(what == "exchange" for _, what, _ in rank_steps)


def main():
    ap = job_harness.arguments(__doc__)
    ap.set_defaults(mpirun=shutil.which("mpirun"))
    ap.add_argument("--points", type=int, default=24, help="kill points per job (at least)")
    ap.add_argument("--commit-points", type=int, default=0,
                    help="try only this many steps of the commit window (default 0: every step)")
    ap.add_argument("--jobs", default="writer,mpi-writer,recompress,recompress-resumable,append,resumable,"
                                      "mpi-resumable")
    args = ap.parse_args()
    h = Harness(args)

    small = ["--trace-length", "256", "--threads", "2", "--key-group-size", "4"]
    first = ["--examples-train", "40", "--examples-test", "16", "--examples-holdout", "0"]
    more = ["--examples-train", "24", "--examples-test", "8", "--examples-holdout", "0"]

    # All or nothing (--no-journal): a killed job leaves the dataset as it was.
    def fresh(ds):
        return ["generate", h.config, ds, *first, *small, "--examples-per-shard", "8", "--no-journal"]

    # Journaled (the default): a killed job keeps its finished shards.
    def journaled(ds):
        return ["generate", h.config, ds, *first, *small, "--examples-per-shard", "8"]

    def make_base(ds):
        h.sp(*fresh(ds))

    jobs = {
        "writer": dict(name="writer", setup=lambda ds: None, args=fresh,
                       rerun=lambda ds: ["generate", h.config, ds, *first, *small, "--append", "--no-journal"],
                       commit=lambda what, path: what == "rename" and path.endswith("/dataset_info.json")),
        "mpi-writer": dict(name="mpi-writer", ranks=2, setup=lambda ds: None, args=fresh,
                           rerun=lambda ds: ["generate", h.config, ds, *first, *small, "--append", "--no-journal"],
                           commit=lambda what, path: what == "rename" and path.endswith("/dataset_info.json")),
        # Killed anywhere, also inside a journal append (the "journal" steps), the
        # same command finishes the job with the uninterrupted result.
        "resumable": dict(name="resumable", setup=lambda ds: None, args=journaled,
                          resumable=True,
                          commit=lambda what, path: what == "rename" and path.endswith("/dataset_info.json")),
        "mpi-resumable": dict(name="mpi-resumable", ranks=2, setup=lambda ds: None,
                              args=journaled, resumable=True,
                              commit=lambda what, path: what == "rename" and path.endswith("/dataset_info.json")),
        "recompress": dict(name="recompress", setup=make_base,
                           args=lambda ds: ["recompress", ds, "--compression", "ZSTD", "--threads", "2",
                                            "--no-journal"],
                           rerun=lambda ds: ["recompress", ds, "--compression", "ZSTD", "--threads", "2",
                                             "--no-journal"],
                           commit=lambda what, path: what == "exchange"),
        # Journaled (the default): killed anywhere, also inside a journal append,
        # the same command keeps the shards journaled in the staging tree and
        # finishes with the uninterrupted result.
        "recompress-resumable": dict(name="recompress-resumable", setup=make_base, resumable=True,
                                     args=lambda ds: ["recompress", ds, "--compression", "ZSTD", "--threads", "2"],
                                     commit=lambda what, path: what == "exchange"),
        "append": dict(name="append", setup=make_base,
                       args=lambda ds: ["generate", h.config, ds, "--append", *more, *small, "--no-journal"],
                       rerun=lambda ds: ["generate", h.config, ds, "--append", *more, *small, "--no-journal"],
                       commit=lambda what, path: what == "rename" and path.endswith("/dataset_info.json")),
    }
    ok = True
    for name in args.jobs.split(","):
        job = jobs[name]
        if job.get("ranks", 1) > 1 and not args.mpirun:
            print("SKIP %s: no mpirun" % name)
            continue
        try:
            ok = h.run_job(job) and ok
        except Failure as e:
            print("FAIL %s: %s" % (name, e), file=sys.stderr)
            ok = False
    print("%-12s %-22s %8s %9s" % ("job", "disk changes per rank", "killed", "survived"))
    for name, total, tried, survived in h.table:
        print("%-12s %-22s %8d %9d" % (name, ",".join("r%d:%d" % kv for kv in sorted(total.items())),
                                       tried, survived))
    if ok:
        shutil.rmtree(h.work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
