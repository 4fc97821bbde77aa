#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Journaled exports (export-trs, export-hdf5): stop an export at a known point,
run the same command again, and compare with an uninterrupted export.

The export is first run to the end with SEDPACK_TEST_STEP_LOG (io/kill_point.h);
its "journal" lines are the row ranges it finished. It is then stopped right
after the journal record at about a third and two thirds, by SIGTERM
(SEDPACK_TEST_KILL_SIGNAL=15: the export stops cleanly, exit 143) or SIGKILL. The
rerun must say "resumed job <id>: k of n row ranges kept" with 0 < k < n, give
the file of an uninterrupted run (TRS: byte for byte; HDF5: every dataset and
attribute equal through h5py) and leave no journal. A rerun with other
parameters is refused with exit 2 naming the parameter, and leaves the earlier
run's files; --restart starts over; --no-journal leaves nothing behind.
With --mpirun and a sedpack built with parallel HDF5, export-hdf5 is also run
under mpirun (the collective MPI-IO write): one rank of 2 or 4 is stopped by
SIGTERM or SIGKILL right after the collective flush at about a third and two
thirds ("h5flush" steps, each after its record), and the rerun, with the same
or another number of ranks or one process, keeps exactly the records before
the stop and gives the file of an uninterrupted run.
Usage: resume_export_test.py SEDPACK CONFIG WORKDIR [--hdf5] [--mpirun MPIRUN]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

SIGTERM_EXIT = (143, -15)
SIGKILL_EXIT = (137, -9)
TEST_ENV = ("SEDPACK_TEST_KILL_AT", "SEDPACK_TEST_KILL_SIGNAL", "SEDPACK_TEST_STEP_LOG", "SEDPACK_TEST_KILL_RANK")


class Failure(Exception):
    pass


def run(argv, env=None, ranks=0, mpirun=None):
    if ranks:
        argv = [mpirun, "-n", str(ranks), "--oversubscribe", "-x", "SEDPACK_TEST_RECORD_MS"] + \
            [x for k in (env or {}) for x in ("-x", k)] + argv
    full = {k: v for k, v in os.environ.items() if k not in TEST_ENV}
    # export-hdf5 records at most once a second by default: here every ~32 MiB
    # (at least 16 records a job), so that the steps of two runs are the same.
    full["SEDPACK_TEST_RECORD_MS"] = "0"
    full.update(env or {})
    if ranks and "SEDPACK_TEST_KILL_AT" in full and full.get("SEDPACK_TEST_KILL_SIGNAL", "9") == "9":
        # A rank SIGKILLed: the others at once too, not 1 s later (job_harness.job_env).
        full.setdefault("OMPI_MCA_odls_base_sigkill_timeout", "0")
    p = subprocess.run(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def must(argv, env=None):
    rc, out, err = run(argv, env)
    if rc != 0:
        raise Failure("%s exited %d: %s%s" % (" ".join(argv), rc, out[-1500:], err[-1500:]))
    return out, err


def h5_values(path):
    import h5py  # noqa: PLC0415 (only the HDF5 half needs it)
    out = {}
    with h5py.File(path, "r") as f:
        out["/"] = {k: str(v) for k, v in f.attrs.items()}

        def visit(name, obj):
            attrs = {k: str(v) for k, v in obj.attrs.items()}
            if isinstance(obj, h5py.Dataset):
                values = [x.tobytes() if hasattr(x, "tobytes") else x for x in obj[()]]
                out[name] = (obj.shape, str(obj.dtype), values, attrs)
            else:
                out[name] = attrs
        f.visititems(visit)
    return out


class Harness:
    def __init__(self, args):
        self.sedpack = os.path.abspath(args.sedpack)
        self.work = os.path.abspath(args.workdir)
        self.failures = []
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.ds = self.path("ds")
        self.config = os.path.abspath(args.config)
        must([self.sedpack, "generate", self.config, self.ds, "-q"])

    def path(self, name):
        return os.path.join(self.work, name)

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
            print("FAIL: " + what)

    def same(self, kind, a, b):
        if kind == "trs":
            with open(a, "rb") as fa, open(b, "rb") as fb:
                return fa.read() == fb.read()
        return h5_values(a) == h5_values(b)

    def leftovers(self, out):
        name = os.path.basename(out)
        return sorted(n for n in os.listdir(self.work) if name + "." in n or n.startswith("." + name))

    def export(self, kind, out, *extra):
        return [self.sedpack, "export-" + kind, self.ds, "-o", out, "-q"] + list(extra)

    def journal_steps(self, kind):
        log = self.path("steps.log")
        out = self.path("steps." + kind)
        must(self.export(kind, out), {"SEDPACK_TEST_STEP_LOG": log})
        with open(log) as f:
            steps = [int(line.split("\t")[1]) for line in f if line.split("\t")[2] == "journal"]
        os.remove(log)
        os.remove(out)
        return steps

    def stopped_and_resumed(self, kind, reference, step, signal, expect_rc, fraction):
        out = self.path("%s-%s-%d.%s" % (kind, signal, step, "trs" if kind == "trs" else "h5"))
        env = {"SEDPACK_TEST_KILL_AT": str(step)}
        if signal == "SIGTERM":
            env["SEDPACK_TEST_KILL_SIGNAL"] = "15"
        rc, _, err = run(self.export(kind, out), env)
        label = "export-%s %s after %d%% of the row ranges" % (kind, signal, fraction)
        self.check(rc in expect_rc, "%s: exit %d, expected %s (%s)" % (label, rc, expect_rc, err[-300:]))
        self.check(not os.path.exists(out), "%s: %s is there before the rerun" % (label, out))
        self.check(os.path.exists(out + ".sedpack-journal"), "%s: no journal left" % label)
        _, err = must(self.export(kind, out))
        m = re.search(r"resumed job (\w+): (\d+) of (\d+) row ranges kept", err)
        self.check(m is not None, "%s: the rerun did not say it resumed: %s" % (label, err[-300:]))
        if m:
            kept, total = int(m.group(2)), int(m.group(3))
            self.check(0 < kept < total, "%s: %d of %d row ranges kept" % (label, kept, total))
        self.check(self.same(kind, reference, out), "%s: the resumed file differs from an uninterrupted one" % label)
        self.check(self.leftovers(out) == [], "%s: left %s" % (label, self.leftovers(out)))
        print("ok: %s resumed (%s)" % (label, m.group(0) if m else "?"))

    def damaged_range_redone(self, reference, steps, index):
        """A kept TRS row range whose bytes changed after it was journaled is
        written again, with every range after it; those before it are kept."""
        out = self.path("trs-damaged.trs")
        partial = self.path(".trs-damaged.trs.sedpack-partial")
        rc, _, _ = run(self.export("trs", out), {"SEDPACK_TEST_KILL_AT": str(steps[index])})
        self.check(rc in SIGKILL_EXIT, "export-trs killed: exit %d" % rc)
        size = os.path.getsize(partial)
        with open(partial, "r+b") as f:
            f.seek(size // 2)
            b = f.read(1)
            f.seek(size // 2)
            f.write(bytes([b[0] ^ 0xFF]))
        _, err = must(self.export("trs", out))
        m = re.search(r"(\d+) of (\d+) row ranges kept", err)
        kept = int(m.group(1)) if m else -1
        # index + 1 ranges were journaled; the byte lies in the middle of them.
        self.check(m is not None and 0 < kept < index + 1,
                   "export-trs over a damaged range: %s" % err[-300:])
        self.check(self.same("trs", reference, out), "export-trs over a damaged range: the file differs")
        self.check(self.leftovers(out) == [], "export-trs over a damaged range left %s" % self.leftovers(out))
        print("ok: export-trs redoes a damaged kept range (%s)" % (m.group(0) if m else "?"))

    def refused_and_restarted(self, kind, reference, step, other):
        out = self.path("%s-refused.%s" % (kind, "trs" if kind == "trs" else "h5"))
        rc, _, _ = run(self.export(kind, out), {"SEDPACK_TEST_KILL_AT": str(step)})
        self.check(rc in SIGKILL_EXIT, "export-%s killed: exit %d" % (kind, rc))
        before = self.leftovers(out)
        rc, _, err = run(self.export(kind, out, *other))
        self.check(rc == 2, "export-%s with %s over a journal: exit %d, expected 2" % (kind, other, rc))
        self.check(other[0].lstrip("-").replace("-", "_") + ": the journal has" in err,
                   "export-%s with %s: the refusal does not name the parameter: %s" % (kind, other, err[-300:]))
        self.check(self.leftovers(out) == before, "export-%s: the refused run changed %s" % (kind, before))
        _, err = must(self.export(kind, out, "--restart"))
        self.check("resumed job" not in err, "export-%s --restart resumed: %s" % (kind, err[-300:]))
        self.check(self.same(kind, reference, out), "export-%s --restart: the file differs" % kind)
        self.check(self.leftovers(out) == [], "export-%s --restart left %s" % (kind, self.leftovers(out)))
        print("ok: export-%s refuses %s over a journal and --restart starts over" % (kind, other))

    def no_journal(self, kind, reference):
        out = self.path("%s-plain.%s" % (kind, "trs" if kind == "trs" else "h5"))
        log = self.path("plain.log")
        must(self.export(kind, out, "--no-journal"), {"SEDPACK_TEST_STEP_LOG": log})
        journaled = []
        if os.path.exists(log):  # no disk change of its own that has a kill point: no log
            with open(log) as f:
                journaled = [line for line in f if "sedpack-journal" in line]
        self.check(journaled == [], "export-%s --no-journal wrote a journal: %s" % (kind, journaled[:2]))
        self.check(self.same(kind, reference, out), "export-%s --no-journal: the file differs" % kind)
        rc, _, _ = run(self.export(kind, self.path("x"), "--no-journal", "--restart"))
        self.check(rc == 2, "export-%s --no-journal --restart: exit %d, expected 2" % (kind, rc))
        print("ok: export-%s --no-journal keeps no journal" % kind)

    def command(self, kind, other):
        reference = self.path("reference." + ("trs" if kind == "trs" else "h5"))
        must(self.export(kind, reference, "--no-journal"))
        steps = self.journal_steps(kind)
        if len(steps) < 4:
            raise Failure("export-%s journals %d row ranges; the test needs at least 4" % (kind, len(steps)))
        for fraction in (33, 67):
            step = steps[len(steps) * fraction // 100]
            self.stopped_and_resumed(kind, reference, step, "SIGTERM", SIGTERM_EXIT, fraction)
            self.stopped_and_resumed(kind, reference, step, "SIGKILL", SIGKILL_EXIT, fraction)
        if kind == "trs":
            self.damaged_range_redone(reference, steps, len(steps) * 67 // 100)
        self.refused_and_restarted(kind, reference, steps[len(steps) // 2], other)
        self.no_journal(kind, reference)


class MpiHarness:
    """export-hdf5 under mpirun: the collective write, stopped on one rank and resumed."""

    def __init__(self, h, mpirun):
        self.h, self.mpirun = h, mpirun
        self.ds = h.path("ds_mpi")
        # 19 shards: 10 rounds of 2 ranks, 5 of 4, a record after each.
        must([h.sedpack, "generate", h.config, self.ds, "-q", "--examples-train", "256"])

    def export(self, out, *extra):
        return [self.h.sedpack, "export-hdf5", self.ds, "-o", out, "-q"] + list(extra)

    def flush_steps(self, ranks, rank):
        log = self.h.path("mpi-steps.log")
        out = self.h.path("mpi-steps.h5")
        rc, _, err = run(self.export(out), {"SEDPACK_TEST_STEP_LOG": log}, ranks, self.mpirun)
        if rc != 0:
            raise Failure("mpirun -n %d export-hdf5 exited %d: %s" % (ranks, rc, err[-800:]))
        with open(log) as f:
            steps = [int(l.split("\t")[1]) for l in f if l.split("\t")[0] == str(rank) and l.split("\t")[2] == "h5flush"]
        os.remove(log)
        os.remove(out)
        return steps

    def case(self, reference, ranks, rank, signal, fraction, rerun_ranks):
        steps = self.flush_steps(ranks, rank)
        if len(steps) < 4:
            raise Failure("mpirun -n %d export-hdf5 flushes %d times; the test needs at least 4" % (ranks, len(steps)))
        k = len(steps) * fraction // 100
        out = self.h.path("mpi-%d-%d-%s-%d.h5" % (ranks, rank, signal, fraction))
        env = {"SEDPACK_TEST_KILL_AT": str(steps[k]), "SEDPACK_TEST_KILL_RANK": str(rank)}
        if signal == "SIGTERM":
            env["SEDPACK_TEST_KILL_SIGNAL"] = "15"
        label = "mpirun -n %d export-hdf5, %s of rank %d after %d%% (rerun on %s)" % (
            ranks, signal, rank, fraction, "%d ranks" % rerun_ranks if rerun_ranks else "1 process")
        rc, _, err = run(self.export(out), env, ranks, self.mpirun)
        h = self.h
        h.check(rc != 0, "%s: exit 0" % label)
        h.check(not os.path.exists(out), "%s: %s is there before the rerun" % (label, out))
        h.check(os.path.exists(out + ".sedpack-journal"), "%s: no journal left" % label)
        rc, _, err = run(self.export(out), None, rerun_ranks, self.mpirun)
        h.check(rc == 0, "%s: the rerun exited %d: %s" % (label, rc, err[-500:]))
        m = re.search(r"resumed job (\w+): (\d+) of (\d+) row ranges kept", err)
        h.check(m is not None, "%s: the rerun did not say it resumed: %s" % (label, err[-300:]))
        if m:
            # Every flush records one round, each of `ranks` shards (a stop records nothing more).
            want = min(int(m.group(3)), (k + 1) * ranks)
            h.check(int(m.group(2)) == want, "%s: %s, expected %d kept" % (label, m.group(0), want))
        h.check(rc == 0 and h.same("hdf5", reference, out), "%s: the resumed file differs" % label)
        h.check(h.leftovers(out) == [], "%s: left %s" % (label, h.leftovers(out)))
        print("ok: %s (%s)" % (label, m.group(0) if m else "?"))

    def all(self):
        reference = self.h.path("mpi-reference.h5")
        must(self.export(reference, "--no-journal"))
        for ranks, rank, signal, fraction, rerun in ((2, 1, "SIGTERM", 33, 2), (2, 1, "SIGKILL", 67, 2),
                                                     (2, 0, "SIGKILL", 33, 0), (2, 1, "SIGKILL", 33, 4),
                                                     (4, 3, "SIGKILL", 67, 4), (4, 2, "SIGTERM", 33, 2)):
            self.case(reference, ranks, rank, signal, fraction, rerun)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sedpack")
    ap.add_argument("config")
    ap.add_argument("workdir")
    ap.add_argument("--hdf5", action="store_true", help="also export-hdf5 (needs h5py)")
    ap.add_argument("--mpirun", help="also export-hdf5 under mpirun (with parallel HDF5)")
    args = ap.parse_args()
    h = Harness(args)
    try:
        h.command("trs", ["--round-float64"])
        if args.hdf5:
            h.command("hdf5", ["--deflate", "3"])
        if args.hdf5 and args.mpirun:
            if "(parallel, MPI-IO)" in must([h.sedpack, "--version"])[0]:
                MpiHarness(h, args.mpirun).all()
            else:
                print("note: serial HDF5: no collective export-hdf5 to stop under mpirun")
    except Failure as e:
        h.failures.append(str(e))
        print("FAIL: " + str(e))
    if h.failures:
        print("%d failure(s)" % len(h.failures))
        return 1
    print("all resumed exports equal uninterrupted ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
