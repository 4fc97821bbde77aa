#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Interrupts: SIGINT/SIGTERM stop every writing command cleanly.

Each case starts a command, waits until it catches the signal (/proc SigCgt)
and sends SIGINT or SIGTERM at a known point: a command that writes or reads
shards runs with SEDPACK_TEST_SHARD_NOTIFY and SEDPACK_TEST_SHARD_GATE=N
(io/kill_point.h), so it logs each shard step and waits at step N until it is
stopped; the signal goes once every process of the job has logged step N. No
case depends on how fast the machine is. Then it checks:

  1. it stopped promptly, counted in work instead of seconds: past the gate it
     logged at most IN_FLIGHT more shard steps (the shards its threads had in
     hand), where the whole job, run again in 4, logs more than that; a job that
     ignored the stop, or looked at it only at the end, logs them all. Then it
     exits with 128 + the signal (130, 143);
  2. stderr has exactly one line with "interrupted";
  3. nothing is left: a new output (folder or file) is gone; an existing dataset
     has exactly the files it had before (same bytes), `sedpack verify` passes
     and `sedpack fix` finds no orphan or temporary file;
  4. the same command then runs to the end (no --append, no fix needed).

Under MPI (2 ranks) the signal goes either to mpirun, which passes it on to the
ranks one second later as SIGTERM and then exits 1 whatever they return, or to
the ranks themselves, as srun and SLURM deliver it: then mpirun exits with their
130/143. Either way each rank's shard steps are bounded as in 1. How long a stop
takes is shown in the table but not judged: a loaded machine stretches it.

The commands without shard steps (`pack`, `unpack`, `index build --no-journal`,
`fix`) are signalled after a short delay; one that finished before the signal
arrived is reported as such and still has to pass 4 (they have no steps to
bound; one that stopped has passed 2 and 3). The cancellation of
`index build` and `fix` is tested in tests/maintain/fix_test.cc.
Usage: interrupt_test.py SEDPACK CONFIG WORKDIR [--mpirun MPIRUN]
                         [--make-h5 MAKE_FIXTURE --import-config MAPPING]
"""
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import job_harness  # noqa: E402
from job_harness import Failure  # noqa: E402

SIGNAME = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}
# Shard steps past the gate a stopped process may have logged: its threads (two
# at most here) each finish the shard in hand, and one of them may have logged a
# step while the other waited at the gate. Counted in work done, not time, so a
# loaded machine does not change it; a job that went on logs all its steps.
IN_FLIGHT = 4


def catches(pid, sig):
    """True once process `pid` has a handler for `sig` (SigCgt in /proc)."""
    try:
        with open("/proc/%d/status" % pid) as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except OSError:
        pass
    return False


def wait_until_catching(pids, sig, timeout=20):
    # A signal before main() installs the handler kills the process outright
    # (harmless: nothing is written yet), which is not what is tested here.
    end = time.monotonic() + timeout
    while not all(catches(p, sig) for p in pids):
        if time.monotonic() > end:
            raise Failure("no handler for signal %d after %d s" % (sig, timeout))
        time.sleep(0.005)


def snapshot(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


class Harness(job_harness.Harness):
    def __init__(self, args):
        super().__init__(args)
        self.make_h5 = args.make_h5
        self.import_config = args.import_config
        self.env = job_harness.job_env()

    def generate_args(self, out, examples, threads=2):
        return [self.sedpack, "generate", self.config, out, "--examples-train", str(examples),
                "--examples-test", "0", "--examples-holdout", "0", "--trace-length", "20000",
                "--threads", str(threads), "--no-journal"]

    def mpi(self, argv):
        return [self.mpirun, "-n", "2", "--oversubscribe"] + argv

    def check_clean_dataset(self, root, before):
        after = snapshot(root)
        if after != before:
            added = sorted(set(after) - set(before))
            removed = sorted(set(before) - set(after))
            changed = sorted(k for k in set(after) & set(before) if after[k] != before[k])
            raise Failure("dataset changed: added %s, removed %s, changed %s" %
                          (added[:5], removed[:5], changed[:5]))
        self.must([self.sedpack, "verify", root])
        out, _ = self.must([self.sedpack, "fix", root])
        if "0 orphan files and 0 temporary files" not in out:
            raise Failure("fix finds leftovers:\n" + out)

    def case(self, name, argv, sig, fresh=None, existing=None, delay=0.4, may_finish=False, mpi=False,
             to_ranks=False, gate=None):
        """`fresh`: a path the command creates (must be gone); `existing`: a dataset it changes.

        `mpi`: argv starts mpirun. Open MPI's mpirun passes SIGINT and SIGTERM to
        the ranks as SIGTERM one second later (after a SIGCONT), and exits 1
        itself whatever the ranks return. `to_ranks`: signal the ranks
        themselves instead, as srun and SLURM do; mpirun then exits with the
        ranks' code. `gate`: the shard step (a shard written, or one a pass is
        about to read) at which the job waits to be stopped; the signal goes
        once every process has logged it, instead of after `delay`."""
        before = snapshot(existing) if existing else None
        env = dict(self.env)
        steps = self.path("shard-steps.log")
        if gate:
            if os.path.exists(steps):
                os.unlink(steps)
            # (mpirun starts the ranks on this node with its own environment.)
            env.update(SEDPACK_TEST_SHARD_NOTIFY=steps, SEDPACK_TEST_SHARD_GATE=str(gate))
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # stderr is read as it comes (a full pipe would stall the job).
        err_lines = []

        def read_err():
            for line in proc.stderr:
                err_lines.append(line)

        reader = threading.Thread(target=read_err)
        reader.start()
        ranks = []
        if mpi:
            # Both ways the ranks must be catching the signal first: a rank
            # signalled before its handler is in place dies silently.
            end = time.monotonic() + 20
            while len(ranks) < 2 and time.monotonic() < end:
                with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as fh:
                    ranks = [int(x) for x in fh.read().split()]
                time.sleep(0.01)
            if len(ranks) != 2:
                raise Failure("%s: mpirun has %d children, want 2" % (name, len(ranks)))
            # mpirun passes SIGINT and SIGTERM on to the ranks as SIGTERM.
            wait_until_catching(ranks, sig if to_ranks else signal.SIGTERM)
        else:
            wait_until_catching([proc.pid], sig)
        if gate:
            try:
                job_harness.wait_for_shard_step(steps, gate, [0, 1] if mpi else [0], proc)
            except Failure as e:
                proc.kill()
                proc.wait()
                reader.join()
                raise Failure("%s: %s" % (name, e))
        else:
            time.sleep(delay)
        sent = time.monotonic()
        if to_ranks:
            for r in ranks:
                os.kill(r, sig)
        else:
            proc.send_signal(sig)
        try:
            out = proc.stdout.read()
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise Failure("%s: still running 30 s after %s" % (name, SIGNAME[sig]))
        finally:
            reader.join()
        err = "".join(err_lines)
        seconds = time.monotonic() - sent  # shown, not judged: it depends on the machine's load
        rc = proc.returncode
        stopped_at = job_harness.shard_steps(steps) if gate else {}
        lines = [l for l in err.splitlines() if "interrupted" in l]
        finished = rc == 0 and may_finish
        if gate:
            # Stopped promptly, measured in work instead of seconds: once the signal
            # has released the gate, a job may still finish the shards it had in
            # flight, but no more. One that went on (ignored the request, or looked
            # at it only at the end) logs the rest of its steps.
            late = {r: n for r, n in stopped_at.items() if n > gate + IN_FLIGHT}
            if late:
                raise Failure("%s: went on after %s: shard steps %s logged, at most %d expected (gate %d + %d in "
                              "flight)" % (name, SIGNAME[sig], late, gate + IN_FLIGHT, gate, IN_FLIGHT))
        if not finished:
            if mpi and not to_ranks:
                if rc == 0:
                    raise Failure("%s: exit 0 after %s\n%s%s" % (name, SIGNAME[sig], out, err))
            elif rc != 128 + sig:
                raise Failure("%s: exit %d after %s, want %d\n%s%s" % (name, rc, SIGNAME[sig], 128 + sig, out, err))
            if len(lines) != 1:
                raise Failure("%s: %d 'interrupted' lines on stderr, want 1:\n%s" % (name, len(lines), err))
        if fresh and os.path.lexists(fresh) and not finished:
            raise Failure("%s: %s was left behind" % (name, fresh))
        left = "finished before the signal"
        if existing and not finished:
            self.check_clean_dataset(existing, before)
            left = "dataset as before (verify clean, no orphans)"
        if fresh and not finished:
            left = "nothing (new output removed)"
        # The same command again, to the end.
        if fresh and finished:
            shutil.rmtree(fresh, ignore_errors=True) if os.path.isdir(fresh) else os.unlink(fresh)
        # (With its shard steps logged: the whole job must have more of them than
        # the bound above, or that check could not tell a prompt stop from none.)
        full_log = self.path("shard-steps-full.log")
        if os.path.exists(full_log):
            os.unlink(full_log)
        rc2, out2, err2 = self.run(argv, env={"SEDPACK_TEST_SHARD_NOTIFY": full_log} if gate else None)
        if rc2 != 0:
            raise Failure("%s: rerun failed with exit %d\n%s%s" % (name, rc2, out2, err2))
        full = job_harness.shard_steps(full_log) if gate else {}
        if gate and not finished:
            small = {r: n for r, n in full.items() if n <= gate + IN_FLIGHT}
            if small or not full:
                raise Failure("%s: the whole job has only %s shard steps: too few to tell a prompt stop (at most "
                              "%d) from none" % (name, small or full, gate + IN_FLIGHT))
        for p in (fresh, existing):
            if p and os.path.isdir(p):
                shutil.rmtree(p)
            elif p and os.path.lexists(p):
                os.unlink(p)
        shown = "-" if finished else "%.2f" % seconds
        if gate and not finished:
            shown += " steps %s/%s" % (",".join(str(stopped_at.get(r, 0)) for r in sorted(full)),
                                       ",".join(str(full[r]) for r in sorted(full)))
        self.table.append((name, SIGNAME[sig], rc, shown, left, (lines or [""])[0]))

    def main(self):
        base = self.path("base")
        self.must(self.generate_args(base, 4000))
        pack = self.path("base.pack")
        self.must([self.sedpack, "pack", base, "-o", pack])

        def copy(name):
            dst = self.path(name)
            shutil.copytree(base, dst)
            return dst

        # Shard steps: a job that writes shards is stopped once it has written
        # one and waits at its second; a pass over the shards (recompress,
        # digest, stats) once it has taken two and waits before its third.
        cases = [
            ("generate", lambda: (self.generate_args(self.path("g1"), 6000), signal.SIGINT,
                                  dict(fresh=self.path("g1"), gate=2))),
            ("generate", lambda: (self.generate_args(self.path("g2"), 6000), signal.SIGTERM,
                                  dict(fresh=self.path("g2"), gate=2))),
            ("generate --append", lambda: (self.generate_args(copy("a1"), 6000) + ["--append"], signal.SIGTERM,
                                           dict(existing=self.path("a1"), gate=2))),
            ("recompress (in place)", lambda: ([self.sedpack, "recompress", copy("r1"), "--compression", "ZSTD",
                                                "--threads", "2"], signal.SIGINT,
                                               dict(existing=self.path("r1"), gate=3))),
            # Journaled jobs keep their work when stopped (resume_maintain_test.py);
            # without a journal nothing is left.
            ("recompress --out", lambda: ([self.sedpack, "recompress", base, "--compression", "ZSTD", "--out",
                                           self.path("r2"), "--threads", "2", "--no-journal"], signal.SIGTERM,
                                          dict(fresh=self.path("r2"), gate=3))),
            ("digest", lambda: ([self.sedpack, "digest", copy("d1"), "--threads", "1", "--no-journal"], signal.SIGINT,
                                dict(existing=self.path("d1"), gate=3))),
            ("stats --write", lambda: ([self.sedpack, "stats", copy("s1"), "--write", "--threads", "1"],
                                       signal.SIGTERM, dict(existing=self.path("s1"), gate=3))),
            ("pack", lambda: ([self.sedpack, "pack", base, "-o", self.path("p1.pack")], signal.SIGINT,
                              dict(fresh=self.path("p1.pack"), delay=0.1, may_finish=True))),
            ("unpack", lambda: ([self.sedpack, "unpack", pack, self.path("u1")], signal.SIGTERM,
                                dict(fresh=self.path("u1"), delay=0.05, may_finish=True))),
            ("index build", lambda: ([self.sedpack, "index", "build", copy("i1"), "--no-journal"], signal.SIGINT,
                                     dict(existing=self.path("i1"), delay=0, may_finish=True))),
            ("fix --gc --apply", lambda: ([self.sedpack, "fix", copy("f1"), "--gc", "--apply"], signal.SIGINT,
                                          dict(existing=self.path("f1"), delay=0, may_finish=True))),
        ]
        if self.make_h5:
            h5 = self.path("capture.h5")
            self.must([self.make_h5, "ascad1", h5, "trace_len=700", "profiling_rows=40000", "attack_rows=100",
                       "fixed_key=1", "float_metadata=1"])
            cases.append(("import-hdf5", lambda: ([self.sedpack, "import-hdf5", "--config", self.import_config, h5,
                                                   self.path("h1"), "--threads", "2", "--no-journal"], signal.SIGTERM,
                                                  dict(fresh=self.path("h1"), gate=2))))
        if self.mpirun:
            # Small shards, so that each rank has many shard steps.
            gbase = self.path("gbase")
            self.must(self.generate_args(gbase, 100) + ["--examples-per-shard", "32"])

            def mpi_job(out, n=1000):
                return self.mpi(self.generate_args(out, n, threads=1) + ["--examples-per-shard", "32"])

            def gcopy(name):
                shutil.copytree(gbase, self.path(name))
                return self.path(name)

            # (mpirun turns SIGINT into SIGTERM for the ranks: SIGINT is sent to
            # the ranks themselves, in the stats case.)
            cases += [
                ("mpirun -n 2 generate", lambda: (mpi_job(self.path("m1")), signal.SIGTERM,
                                                  dict(fresh=self.path("m1"), mpi=True, gate=2))),
                ("mpirun -n 2 generate", lambda: (mpi_job(self.path("m5")), signal.SIGTERM,
                                                  dict(fresh=self.path("m5"), mpi=True, to_ranks=True, gate=2))),
                ("mpirun -n 2 generate --append",
                 lambda: (self.mpi(self.generate_args(gcopy("m3"), 1000, threads=1) + ["--append"]), signal.SIGTERM,
                          dict(existing=self.path("m3"), mpi=True, gate=2))),
                ("mpirun -n 2 stats --write",
                 lambda: (self.mpi([self.sedpack, "stats", copy("m4"), "--write", "--threads", "1"]), signal.SIGINT,
                          dict(existing=self.path("m4"), mpi=True, to_ranks=True, gate=2))),
            ]
        for name, make in cases:
            argv, sig, kw = make()
            t0 = time.monotonic()
            try:
                self.case(name, argv, sig, **kw)
            except Failure as e:
                self.failures.append(str(e))
                self.table.append((name, SIGNAME[sig], "FAIL", "-", str(e).splitlines()[0], ""))
            print("case %s %s: %.1f s" % (name, SIGNAME[sig], time.monotonic() - t0), flush=True)
        print("%-30s %-8s %-5s %-28s %s" % ("command", "signal", "exit", "seconds, steps stop/all", "left behind"))
        for row in self.table:
            print("%-30s %-8s %-5s %-28s %s" % row[:5])
            if row[5]:
                print("%-30s   stderr: %s" % ("", row[5]))
        for f in self.failures:
            print("FAILED: " + f, file=sys.stderr)
        return 1 if self.failures else 0


if __name__ == "__main__":
    ap = job_harness.arguments()
    ap.add_argument("--make-h5")
    ap.add_argument("--import-config")
    sys.exit(Harness(ap.parse_args()).main())
