#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Interrupts: SIGINT/SIGTERM stop every writing command cleanly.

Each case starts a command on a job that runs for a few seconds, waits until it
catches the signal (/proc SigCgt), sends SIGINT or SIGTERM after a short delay,
and checks:

  1. the command exits within 1.5 s with 128 + the signal (130, 143);
  2. stderr has exactly one line with "interrupted";
  3. nothing is left: a new output (folder or file) is gone; an existing dataset
     has exactly the files it had before (same bytes), `sedpack verify` passes
     and `sedpack fix` finds no orphan or temporary file;
  4. the same command then runs to the end (no --append, no fix needed).

Under MPI (2 ranks) the signal goes either to mpirun, which passes it on to the
ranks one second later as SIGTERM and then exits 1 whatever they return, or to
the ranks themselves, as srun and SLURM deliver it: then the ranks must print
the line within 1 s and mpirun exits with their 130/143.

A command that finished before the signal arrived (the metadata-only ones,
`index build` and `fix`, usually do) is reported as such; it still has to
pass 4. Their cancellation is tested in tests/maintain/fix_test.cc.
Usage: interrupt_test.py SEDPACK CONFIG WORKDIR [--mpirun MPIRUN]
                         [--make-h5 MAKE_FIXTURE --import-config MAPPING]
"""
import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

SIGNAME = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}


class Failure(Exception):
    pass


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


def count_shards(root):
    """Number of shard files (finished or being written) under `root`."""
    n = 0
    for _, _, files in os.walk(root):
        n += sum(1 for f in files if f.endswith(".fb"))
    return n


def snapshot(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


class Harness:
    def __init__(self, args):
        self.sedpack = os.path.abspath(args.sedpack)
        self.config = os.path.abspath(args.config)
        self.work = os.path.abspath(args.workdir)
        self.mpirun = args.mpirun
        self.make_h5 = args.make_h5
        self.import_config = args.import_config
        self.table = []
        self.failures = []
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.env = dict(os.environ)
        self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        self.env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, argv, timeout=120):
        p = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def must(self, argv):
        rc, out, err = self.run(argv)
        if rc != 0:
            raise Failure("%s: exit %d\n%s%s" % (" ".join(argv), rc, out, err))
        return out

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
        out = self.must([self.sedpack, "fix", root])
        if "0 orphan files and 0 temporary files" not in out:
            raise Failure("fix finds leftovers:\n" + out)

    def case(self, name, argv, sig, fresh=None, existing=None, delay=0.4, may_finish=False, mpi=False,
             to_ranks=False, shards_under=None, shard_delay_ms=None):
        """`fresh`: a path the command creates (must be gone); `existing`: a dataset it changes.

        `mpi`: argv starts mpirun. Open MPI's mpirun passes SIGINT and SIGTERM to
        the ranks as SIGTERM one second later (after a SIGCONT), and exits 1
        itself whatever the ranks return. `to_ranks`: signal the ranks
        themselves instead, as srun and SLURM do; mpirun then exits with the
        ranks' code. `shards_under`: after `delay`, also wait until the job has
        written a shard there, so that a fast machine does not finish the job
        before the signal. `shard_delay_ms`: a pass over the shards (stats,
        digest) waits that long before each shard (SEDPACK_TEST_SHARD_DELAY_MS),
        so that it is still running when the signal comes however fast it is."""
        before = snapshot(existing) if existing else None
        shards_before = count_shards(shards_under) if shards_under else 0
        env = dict(self.env)
        if shard_delay_ms:
            env["SEDPACK_TEST_SHARD_DELAY_MS"] = str(shard_delay_ms)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # stderr is read as it comes, to time the "interrupted" line.
        err_lines, stamps = [], []

        def read_err():
            for line in proc.stderr:
                err_lines.append(line)
                if "interrupted" in line and not stamps:
                    stamps.append(time.monotonic())

        reader = threading.Thread(target=read_err)
        reader.start()
        ranks = []
        if mpi:
            # Both ways the ranks must be catching the signal first: a loaded
            # machine can take longer than `delay` to get them through MPI start-up,
            # and a rank signalled before its handler is in place dies silently.
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
        time.sleep(delay)
        if shards_under:
            end = time.monotonic() + 20
            while count_shards(shards_under) <= shards_before and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.002)
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
        seconds = time.monotonic() - sent
        line_seconds = (stamps[0] - sent) if stamps else None
        rc = proc.returncode
        lines = [l for l in err.splitlines() if "interrupted" in l]
        finished = rc == 0 and may_finish
        if not finished:
            if mpi and not to_ranks:
                if rc == 0:
                    raise Failure("%s: exit 0 after %s\n%s%s" % (name, SIGNAME[sig], out, err))
            elif rc != 128 + sig:
                raise Failure("%s: exit %d after %s, want %d\n%s%s" % (name, rc, SIGNAME[sig], 128 + sig, out, err))
            if len(lines) != 1:
                raise Failure("%s: %d 'interrupted' lines on stderr, want 1:\n%s" % (name, len(lines), err))
            # Under mpirun the tool's own time is the "interrupted" line's (when the
            # ranks themselves got the signal); mpirun adds about a second to tear
            # the job down and, when it is the one signalled, one to pass the signal
            # on (its output waits meanwhile).
            if mpi and to_ranks and (line_seconds is None or line_seconds > 1.0):
                raise Failure("%s: the ranks took %s s to stop" % (name, line_seconds))
            if seconds > (3.5 if mpi else 1.5):
                raise Failure("%s: took %.1f s to stop" % (name, seconds))
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
        rc2, out2, err2 = self.run(argv)
        if rc2 != 0:
            raise Failure("%s: rerun failed with exit %d\n%s%s" % (name, rc2, out2, err2))
        for p in (fresh, existing):
            if p and os.path.isdir(p):
                shutil.rmtree(p)
            elif p and os.path.lexists(p):
                os.unlink(p)
        shown = "-" if finished else "%.2f" % seconds
        if not finished and mpi and to_ranks:
            shown += " (ranks %.2f)" % line_seconds
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

        cases = [
            ("generate", lambda: (self.generate_args(self.path("g1"), 6000), signal.SIGINT,
                                  dict(fresh=self.path("g1"), delay=0, shards_under=self.path("g1")))),
            ("generate", lambda: (self.generate_args(self.path("g2"), 6000), signal.SIGTERM,
                                  dict(fresh=self.path("g2"), delay=0, shards_under=self.path("g2")))),
            ("generate --append", lambda: (self.generate_args(copy("a1"), 6000) + ["--append"], signal.SIGTERM,
                                           dict(existing=self.path("a1"), delay=0,
                                                shards_under=self.path("a1")))),
            ("recompress (in place)", lambda: ([self.sedpack, "recompress", copy("r1"), "--compression", "ZSTD",
                                                "--threads", "2"], signal.SIGINT, dict(existing=self.path("r1")))),
            # Journaled jobs keep their work when stopped (resume_maintain_test.py);
            # without a journal nothing is left.
            ("recompress --out", lambda: ([self.sedpack, "recompress", base, "--compression", "ZSTD", "--out",
                                           self.path("r2"), "--threads", "2", "--no-journal"], signal.SIGTERM,
                                          dict(fresh=self.path("r2")))),
            # digest and stats read the 150 MB base in well under a second: each
            # shard of the pass waits 100 ms first, so that the signal, 50 ms after
            # the handler is in place, comes mid-pass on any machine.
            ("digest", lambda: ([self.sedpack, "digest", copy("d1"), "--threads", "1", "--no-journal"], signal.SIGINT,
                                dict(existing=self.path("d1"), delay=0.05, shard_delay_ms=100))),
            ("stats --write", lambda: ([self.sedpack, "stats", copy("s1"), "--write", "--threads", "1"],
                                       signal.SIGTERM, dict(existing=self.path("s1"), delay=0.05,
                                                            shard_delay_ms=100))),
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
                                                  dict(fresh=self.path("h1"), delay=0.15))))
        if self.mpirun:
            # GZIP at zlib's level 9 keeps these jobs running for a few seconds on
            # a fast machine (mpirun passes a signal on one second late); the
            # default level 1 (ISA-L) would finish them first.
            gbase = self.path("gbase")
            self.must(self.generate_args(gbase, 100) + ["--compression", "GZIP", "--examples-per-shard", "32"])

            # 900 such examples take about 1.7 s on 2 ranks, and a signal sent to
            # mpirun 0.5 s in reaches the ranks about 1.6 s in: 4000 keep the job
            # well clear of its end (it is stopped at the signal either way).
            def gzip_job(out, n=4000):
                # Small shards: a shard being compressed when the signal comes is
                # finished first, and a GZIP shard of 256 traces takes most of a second.
                return self.mpi(self.generate_args(out, n, threads=1) + ["--compression", "GZIP", "--level", "9",
                                                                         "--examples-per-shard", "32"])

            def gcopy(name):
                shutil.copytree(gbase, self.path(name))
                return self.path(name)

            # (mpirun turns SIGINT into SIGTERM for the ranks: SIGINT is sent to
            # the ranks themselves, in the stats case.)
            cases += [
                ("mpirun -n 2 generate", lambda: (gzip_job(self.path("m1")), signal.SIGTERM,
                                                  dict(fresh=self.path("m1"), delay=0.5, mpi=True))),
                ("mpirun -n 2 generate", lambda: (gzip_job(self.path("m5")), signal.SIGTERM,
                                                  dict(fresh=self.path("m5"), delay=0.5, mpi=True, to_ranks=True))),
                ("mpirun -n 2 generate --append",
                 lambda: (self.mpi(self.generate_args(gcopy("m3"), 4000, threads=1) + ["--append", "--level", "9"]),
                          signal.SIGTERM, dict(existing=self.path("m3"), delay=0.5, mpi=True))),
                ("mpirun -n 2 stats --write",
                 lambda: (self.mpi([self.sedpack, "stats", copy("m4"), "--write", "--threads", "1"]), signal.SIGINT,
                          dict(existing=self.path("m4"), delay=0.3, mpi=True, to_ranks=True,
                               shard_delay_ms=100))),
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
        print("%-30s %-8s %-5s %-18s %s" % ("command", "signal", "exit", "seconds", "left behind"))
        for row in self.table:
            print("%-30s %-8s %-5s %-18s %s" % row[:5])
            if row[5]:
                print("%-30s   stderr: %s" % ("", row[5]))
        for f in self.failures:
            print("FAILED: " + f, file=sys.stderr)
        return 1 if self.failures else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("sedpack")
    ap.add_argument("config")
    ap.add_argument("workdir")
    ap.add_argument("--mpirun")
    ap.add_argument("--make-h5")
    ap.add_argument("--import-config")
    sys.exit(Harness(ap.parse_args()).main())
