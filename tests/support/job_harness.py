# SPDX-License-Identifier: Apache-2.0
"""What the tests that run whole `sedpack` jobs share (crash/, interrupt/): the
work folder, the environment a job gets and running it.

A job gets the environment of the test without the test variables of
io/kill_point.h (SEDPACK_TEST_*), then exactly the ones its case sets: a
variable left over from the caller would kill, pace or stop a job the case did
not mean to. Under mpirun the variables a case sets are also passed on with -x.
"""
import argparse
import os
import shutil
import subprocess
import time

TEST_VARIABLES = ("SEDPACK_TEST_KILL_AT", "SEDPACK_TEST_KILL_RANK", "SEDPACK_TEST_STEP_LOG",
                  "SEDPACK_TEST_KILL_SIGNAL", "SEDPACK_TEST_SHARD_DELAY_MS", "SEDPACK_TEST_SHARD_NOTIFY",
                  "SEDPACK_TEST_SHARD_GATE")


class Failure(Exception):
    pass


def job_env(extra=None):
    """The environment of a job: no test variable but those of `extra`."""
    env = dict(os.environ)
    for k in TEST_VARIABLES:
        env.pop(k, None)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.update(extra or {})
    if "SEDPACK_TEST_KILL_AT" in env and env.get("SEDPACK_TEST_KILL_SIGNAL", "9") == "9":
        # A rank SIGKILLed at a kill point: mpirun stops the others with SIGTERM and
        # SIGKILLs them odls_base_sigkill_timeout (1) s later, and the job takes 2.5 s
        # to end instead of 0.5. The other ranks are then stopped at once, as by a lost
        # node: a harder stop, and the same checks of what is left on disk apply.
        env.setdefault("OMPI_MCA_odls_base_sigkill_timeout", "0")
    return env


def arguments(doc=None):
    """The arguments every such test takes: SEDPACK CONFIG WORKDIR [--mpirun MPIRUN]."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sedpack")
    ap.add_argument("config")
    ap.add_argument("workdir")
    ap.add_argument("--mpirun")
    return ap


def shard_steps(path):
    """The shard steps a job has logged to SEDPACK_TEST_SHARD_NOTIFY: {rank: highest N}."""
    seen = {}
    try:
        with open(path) as fh:
            for line in fh:
                parts = line.split("\t")
                if len(parts) >= 3 and line.endswith("\n"):
                    rank, n = int(parts[0]), int(parts[1])
                    seen[rank] = max(seen.get(rank, 0), n)
    except FileNotFoundError:
        pass
    return seen


def wait_for_shard_step(path, step, ranks, proc, timeout=120):
    """Wait until every one of `ranks` has logged shard step `step` to `path`.

    A job started with SEDPACK_TEST_SHARD_GATE=step waits there until it is
    stopped, so it cannot have finished when this returns. Raises Failure when
    the job ends first (it has fewer shard steps than that) or after `timeout`."""
    end = time.monotonic() + timeout
    while True:
        seen = shard_steps(path)
        if all(seen.get(r, 0) >= step for r in ranks):
            return
        if proc.poll() is not None:
            raise Failure("the job ended (exit %s) before shard step %d: it logged %s" % (proc.returncode, step, seen))
        if time.monotonic() > end:
            raise Failure("no shard step %d after %d s: %s" % (step, timeout, seen))
        time.sleep(0.002)


def session_processes(sid):
    """[(pid, state letter)] of the processes in session `sid` (/proc field 6)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid:
            out.append((int(name), fields[0]))
    return out


def wait_session_gone(sid, timeout=120):
    """Wait until no process of session `sid` is running any more (a zombie holds
    nothing: the lock code counts it as dead).

    Open MPI's mpirun does not reap the ranks it stops when one rank dies: it sends
    the others SIGTERM, then SIGKILL, and exits, and they are reparented to init. So
    when mpirun has returned a rank may still be running (dying, or finishing its
    stop), and still holds its locks; a check made then sees a live job. Ranks keep
    mpirun's session (each gets a process group of its own), so a job started with
    start_new_session=True is over once its session has no running process."""
    end = time.monotonic() + timeout
    while True:
        running = [p for p, state in session_processes(sid) if state not in "ZX"]
        if not running:
            return
        if time.monotonic() > end:
            raise Failure("processes %s of the job were still running %d s after mpirun exited" % (running, timeout))
        time.sleep(0.005)


def kill_session(sid):
    for pid, _ in session_processes(sid):
        try:
            os.kill(pid, 9)
        except OSError:
            pass


class Harness:
    """A work folder made afresh, the tool, its config and mpirun (or None)."""

    def __init__(self, args):
        self.sedpack = os.path.abspath(args.sedpack)
        self.config = os.path.abspath(args.config)
        self.work = os.path.abspath(args.workdir)
        self.mpirun = args.mpirun
        self.table = []
        self.failures = []
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)

    def path(self, name):
        return os.path.join(self.work, name)

    def job_env(self, argv, extra):
        """The environment `argv` runs in (a hook for a test's own additions)."""
        return job_env(extra)

    def forward(self, argv, names):
        """`argv` with -x NAME after mpirun's rank count for each of `names` it lacks."""
        if not self.mpirun or argv[0] != self.mpirun:
            return argv
        x = [a for k in names if k not in argv for a in ("-x", k)]
        return argv[:3] + x + argv[3:]

    def run(self, argv, env=None, timeout=300):
        argv = self.forward(argv, env or {})
        try:
            p = subprocess.run(argv, env=self.job_env(argv, env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure("timed out (a hang): " + " ".join(argv))
        return p.returncode, p.stdout, p.stderr

    def must(self, argv, env=None):
        rc, out, err = self.run(argv, env)
        if rc != 0:
            raise Failure("%s exited %d: %s%s" % (" ".join(argv), rc, out[-1500:], err[-1500:]))
        return out, err
