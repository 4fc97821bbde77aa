#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Resumable jobs: stop a job (journaled by default; `--resumable` says so) at a
known point, run the same command again, and compare with an uninterrupted run
(generate, import-hdf5, import-trs, import-chipwhisperer).

Every stop is deterministic: the job is first run to the end with
SEDPACK_TEST_STEP_LOG, which lists its disk changes (io/kill_point.h); the
"journal" lines are its finished shards. The job is then stopped right after the
journal record at a chosen fraction, by SIGTERM (SEDPACK_TEST_KILL_SIGNAL=15, what
SLURM sends at the time limit; the job stops cleanly) or by SIGKILL, of the
process or of one rank of two under mpirun. The rerun must say
"resumed job <id>: k of n shards kept" with k > 0, give the same examples in the
same order as an uninterrupted run (`sedpack cat` of every split), verify clean
and leave no journal. A rerun with another seed, example count, number of ranks
or a touched input is refused with exit 2 naming the parameter; --restart
throws the kept work away; `fix` and `verify` report a stopped job, `fix --gc
--apply` keeps its shards and `fix --remove-abandoned-jobs` removes them.
Usage: resume_test.py SEDPACK CONFIG WORKDIR [--mpirun MPIRUN] [--make-h5 TOOL --import-config CONFIG]
                      [--trs-tool trs_tool.py]
"""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import job_harness  # noqa: E402  (the work folder, a job's environment, run, must)

SIGTERM_EXIT = (143, -15)
SIGKILL_EXIT = (137, -9)
Failure = job_harness.Failure


class Harness(job_harness.Harness):
    def __init__(self, args):
        super().__init__(args)
        self.make_h5 = args.make_h5
        self.import_config = args.import_config
        self.trs_tool = args.trs_tool

    def dump(self, ds):
        out = {}
        for split in ("train", "test", "holdout"):
            rc, text, _ = self.run([self.sedpack, "cat", ds, "--split", split])
            out[split] = text if rc == 0 else ""
        return out

    def journal_steps(self, argv, ds, rank=0):
        """The step numbers (of `rank`) right after each journal record of a full run."""
        log = self.path("steps.log")
        if os.path.exists(log):
            os.remove(log)
        self.must(argv, env={"SEDPACK_TEST_STEP_LOG": log})
        shutil.rmtree(ds)
        steps = []
        with open(log) as f:
            for line in f:
                r, n, what, _ = line.rstrip("\n").split("\t", 3)
                if int(r) == rank and what == "journal":
                    steps.append(int(n))
        steps.sort()
        if len(steps) < 4:
            raise Failure("too few journal records to stop at (%d)" % len(steps))
        return steps

    def no_journal_left(self, ds):
        jobs = os.path.join(ds, ".sedpack-hpc", "jobs")
        left = [n for n in (os.listdir(jobs) if os.path.isdir(jobs) else []) if "journal" in n]
        if left:
            raise Failure("journals left after the rerun: %s" % left)

    # -- one stop and resume ---------------------------------------------------
    def stop_and_resume(self, name, argv, ds, reference, fraction, signal_name, rank=None, ranks=1):
        steps = self.journal_steps(argv, ds, rank or 0)
        # Right after the k-th journal record, counted among the records alone:
        # the job's threads interleave their other points differently each run,
        # so the k-th point of all kinds may come before any record.
        k = int(fraction * (len(steps) - 1)) + 1
        env = {"SEDPACK_TEST_KILL_AT": str(k), "SEDPACK_TEST_KILL_WHAT": "journal"}
        if signal_name == "SIGTERM":
            env["SEDPACK_TEST_KILL_SIGNAL"] = "15"
        if rank is not None:
            env["SEDPACK_TEST_KILL_RANK"] = str(rank)
        rc, _, err = self.run(argv, env)
        expected = SIGTERM_EXIT if signal_name == "SIGTERM" and ranks == 1 else None
        if rc == 0 or (expected and rc not in expected) or (signal_name == "SIGKILL" and ranks == 1
                                                              and rc not in SIGKILL_EXIT):
            raise Failure("%s: stopped by %s at journal record %d, exit %d: %s" % (name, signal_name, k, rc,
                                                                                  err[-800:]))
        if signal_name == "SIGTERM" and ranks == 1 and "the finished shards are kept" not in err:
            raise Failure("%s: the interrupted line does not say the work is kept: %s" % (name, err[-800:]))
        out, err = self.must(argv)
        m = re.search(r"resumed job (\S+): (\d+) of (\d+) shards kept", err)
        if not m or int(m.group(2)) == 0:
            raise Failure("%s: the rerun kept nothing: %s" % (name, err[-800:]))
        if self.dump(ds) != reference:
            raise Failure("%s: the resumed dataset differs from an uninterrupted run" % name)
        self.must([self.sedpack, "verify", ds])
        self.no_journal_left(ds)
        self.table.append((name, signal_name + ("" if rank is None else " of rank %d" % rank),
                           "%.0f%%" % (100 * fraction), "%s of %s" % (m.group(2), m.group(3))))
        shutil.rmtree(ds)

    def refused(self, argv, word):
        rc, out, err = self.run(argv)
        if rc != 2 or word not in err or "--restart" not in err:
            raise Failure("a changed rerun (%s) was not refused naming %r: exit %d %s" % (word, word, rc, err[-800:]))

    # -- the cases ---------------------------------------------------------------
    def generate_cases(self):
        small = ["--examples-train", "600", "--examples-test", "90", "--examples-holdout", "20",
                 "--examples-per-shard", "32", "--trace-length", "500", "--threads", "2", "-q"]
        reference_ds = self.path("g-ref")
        self.must([self.sedpack, "generate", self.config, reference_ds, *small])
        reference = self.dump(reference_ds)
        ds = self.path("g")
        argv = [self.sedpack, "generate", self.config, ds, *small]
        for fraction, sig in ((0.45, "SIGTERM"), (0.1, "SIGKILL"), (0.8, "SIGKILL")):
            self.stop_and_resume("generate", argv, ds, reference, fraction, sig)

        # A stopped job as fix and verify see it, changed reruns, --restart.
        steps = self.journal_steps(argv, ds)
        self.run(argv, {"SEDPACK_TEST_KILL_AT": str(steps[len(steps) // 2])})
        out, _ = self.must([self.sedpack, "verify", ds])
        if "resumable_job" not in out:
            raise Failure("verify does not note the stopped job:\n" + out)
        out, _ = self.must([self.sedpack, "fix", ds, "--gc", "--apply"])
        if "resumable job" not in out or "0 orphan files" not in out:
            raise Failure("fix --gc does not list the stopped job, or counts its shards as orphans:\n" + out)
        if not re.search(r"resumable job \S+: \d+ files of a stopped run, last recorded \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", out):
            raise Failure("fix does not say when the stopped job last recorded:\n" + out)
        self.refused(argv + ["--seed", "5"], "seed")
        self.refused([x if x != "600" else "700" for x in argv], "examples")
        # A changed structure option is named with both values, not as a digest.
        self.refused([x if x != "32" else "64" for x in argv], "examples per shard: the journal has 32, this run 64")
        self.refused([x if x != "500" else "400" for x in argv], "attributes: the journal has ")
        _, err = self.must(argv + ["--restart"])
        if "resumed job" in err or self.dump(ds) != reference:
            raise Failure("--restart did not start afresh with the uninterrupted result: " + err)
        self.no_journal_left(ds)
        shutil.rmtree(ds)
        self.run(argv, {"SEDPACK_TEST_KILL_AT": str(steps[len(steps) // 2])})
        out, _ = self.must([self.sedpack, "fix", ds, "--remove-abandoned-jobs"])
        files = [f for _, _, fs in os.walk(os.path.join(ds, "train")) for f in fs]
        if "removed" not in out or files:
            raise Failure("fix --remove-abandoned-jobs left %d files:\n%s" % (len(files), out))
        self.no_journal_left(ds)
        shutil.rmtree(ds)
        self.table.append(("generate", "changed seed, examples, shard size, trace length", "-", "refused (exit 2)"))

        if self.mpirun:
            mpi = [self.mpirun, "-np", "2", "--oversubscribe"]
            argv = mpi + [self.sedpack, "generate", self.config, ds, *small[:-3], "--threads", "1", "-q"]
            self.stop_and_resume("mpirun -n 2 generate", argv, ds, reference, 0.45, "SIGKILL", rank=1, ranks=2)
            steps = self.journal_steps(argv, ds, 0)
            self.run(argv, {"SEDPACK_TEST_KILL_AT": str(steps[len(steps) // 2]), "SEDPACK_TEST_KILL_RANK": "0"})
            self.refused(argv[4:], "ranks")
            shutil.rmtree(ds)
            self.table.append(("mpirun -n 2 generate", "rerun on 1 rank", "-", "refused (exit 2)"))

    def import_cases(self):
        h5 = self.path("capture.h5")
        self.must([self.make_h5, "ascad1", h5, "trace_len=700", "profiling_rows=6000", "attack_rows=100",
                   "fixed_key=1", "float_metadata=1"])
        # Small shards: enough journal records to stop among.
        opts = ["--threads", "2", "-q", "--memory-budget", "16"]
        reference_ds = self.path("h-ref")
        self.must([self.sedpack, "import-hdf5", "--config", self.import_config, h5, reference_ds, *opts])
        reference = self.dump(reference_ds)
        ds = self.path("h")
        argv = [self.sedpack, "import-hdf5", "--config", self.import_config, h5, ds, *opts, "--resumable"]
        self.stop_and_resume("import-hdf5", argv, ds, reference, 0.45, "SIGTERM")
        if self.mpirun:
            mpi = [self.mpirun, "-np", "2", "--oversubscribe"]
            self.stop_and_resume("mpirun -n 2 import-hdf5", mpi + argv, ds, reference, 0.45, "SIGKILL", rank=1,
                                 ranks=2)
        steps = self.journal_steps(argv, ds)
        self.run(argv, {"SEDPACK_TEST_KILL_AT": str(steps[len(steps) // 2])})
        self.refused(argv + ["--compression", "ZSTD"], "compression: the journal has ")
        os.utime(h5, None)
        self.refused(argv, "input 1")
        self.table.append(("import-hdf5", "compression changed, input touched", "-", "refused (exit 2)"))

    def capture_case(self, name, argv, ds, reference, touched, word):
        """Stops by SIGTERM and (under mpirun) SIGKILL of rank 1 of 2, a touched input, --restart."""
        self.stop_and_resume(name, argv, ds, reference, 0.45, "SIGTERM")
        if self.mpirun:
            mpi = [self.mpirun, "-np", "2", "--oversubscribe"]
            self.stop_and_resume("mpirun -n 2 " + name, mpi + argv, ds, reference, 0.45, "SIGKILL", rank=1, ranks=2)
        steps = self.journal_steps(argv, ds)
        self.run(argv, {"SEDPACK_TEST_KILL_AT": str(steps[len(steps) // 2])})
        out, _ = self.must([self.sedpack, "verify", ds])
        if "resumable_job" not in out:
            raise Failure("%s: verify does not note the stopped job:\n%s" % (name, out))
        os.utime(touched, None)
        self.refused(argv, word)
        self.table.append((name, "input touched", "-", "refused (exit 2)"))
        _, err = self.must(argv + ["--restart"])
        if "resumed job" in err or self.dump(ds) != reference:
            raise Failure("%s --restart did not start afresh with the uninterrupted result: %s" % (name, err))
        self.no_journal_left(ds)
        shutil.rmtree(ds)
        self.table.append((name, "--restart", "-", "uninterrupted result"))

    def capture_cases(self):
        tool = [sys.executable, self.trs_tool]
        a, b = self.path("a.trs"), self.path("b.trs")
        self.must(tool + ["write", a, "1", "2", "300", "200", "--v2", "--titles"])
        self.must(tool + ["write", b, "2", "2", "200", "200", "--v2", "--titles"])
        # Small shards: enough journal records to stop among.
        opts = ["--threads", "2", "-q", "--memory-budget", "16", "--examples-per-shard", "16"]
        reference_ds = self.path("t-ref")
        self.must([self.sedpack, "import-trs", a, b, "-o", reference_ds, *opts, "--no-journal"])
        reference = self.dump(reference_ds)
        ds = self.path("t")
        self.capture_case("import-trs", [self.sedpack, "import-trs", a, b, "-o", ds, *opts], ds, reference, b,
                          "input 2")

        project = self.path("cw")
        self.must(tool + ["cw", project])
        cwp = os.path.join(project, "proj.cwp")
        opts = ["--threads", "2", "-q", "--examples-per-shard", "2"]
        reference_ds = self.path("c-ref")
        self.must([self.sedpack, "import-chipwhisperer", cwp, "-o", reference_ds, *opts, "--no-journal"])
        reference = self.dump(reference_ds)
        ds = self.path("c")
        traces = os.path.join(project, "proj_data", "traces")
        touched = os.path.join(traces, sorted(n for n in os.listdir(traces) if n.endswith("traces.npy"))[-1])
        self.capture_case("import-chipwhisperer", [self.sedpack, "import-chipwhisperer", cwp, "-o", ds, *opts], ds,
                          reference, touched, os.path.basename(touched))

    COMMAND_WIDTH = 26  # of the table's first column

    def cases(self):
        """The case groups this harness runs, in order."""
        return [c for c in (self.generate_cases, self.import_cases if self.make_h5 else None,
                            self.capture_cases if self.trs_tool else None) if c is not None]

    def main(self):
        for case in self.cases():
            try:
                case()
            except Failure as e:
                self.failures.append(str(e))
        row_format = "%%-%ds %%-24s %%-6s %%s" % self.COMMAND_WIDTH
        print(row_format % ("command", "stopped by", "done", "kept"))
        for row in self.table:
            print(row_format % row)
        for f in self.failures:
            print("FAILED: " + f, file=sys.stderr)
        if not self.failures:
            shutil.rmtree(self.work, ignore_errors=True)
        return 1 if self.failures else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sedpack")
    ap.add_argument("config")
    ap.add_argument("workdir")
    ap.add_argument("--mpirun")
    ap.add_argument("--make-h5")
    ap.add_argument("--import-config")
    ap.add_argument("--trs-tool")
    sys.exit(Harness(ap.parse_args()).main())
