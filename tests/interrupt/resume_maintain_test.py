#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Resumable maintenance jobs (`recompress`, `digest`, `index build`): stop a job, run the same
command again, and compare with an uninterrupted run, byte for byte.

Stops at known points: the job is first run to the end with SEDPACK_TEST_STEP_LOG
(io/kill_point.h), whose "journal" lines are its journal records; it is then
stopped at the step of the journal record at a chosen fraction (records are
appended by a thread of their own: each shard waits PACE_MS first, so that the
records come in the same order in every run), by SIGTERM
(SEDPACK_TEST_KILL_SIGNAL=15: what SLURM sends at the time limit) or SIGKILL, of
the process or of one rank of two under mpirun. A real SIGTERM also lands
mid-pass, the pass slowed by SEDPACK_TEST_SHARD_DELAY_MS. The rerun must say
"resumed job <id>: k of n shards kept" with k > 0 and leave exactly the files of
an uninterrupted run (every byte of every shard, list, dataset_info.json and
sidecar) and no journal. A rerun with other options (codec, level, ranks; for a
digest, a changed dataset_info.json) is refused with exit 2 naming the difference
and --restart; --restart starts afresh; `verify` notes a stopped digest, `fix`
lists a stopped recompress (its staging tree) as a resumable job that --gc keeps,
and `fix --remove-abandoned-jobs` removes either.
Usage: resume_maintain_test.py SEDPACK CONFIG WORKDIR [--mpirun MPIRUN]
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import resume_test  # noqa: E402  (run, must, refused, no_journal_left, path)

Failure = resume_test.Failure
SIGTERM_EXIT = resume_test.SIGTERM_EXIT
SIGKILL_EXIT = resume_test.SIGKILL_EXIT
PACE = {"SEDPACK_TEST_SHARD_DELAY_MS": "30"}


class Harness(resume_test.Harness):
    def __init__(self, args):
        args.make_h5 = None
        args.import_config = None
        args.trs_tool = None
        super().__init__(args)

    def env(self, extra):
        """The environment of a job started here: no test variable but `extra`."""
        return resume_test.job_harness.job_env(extra)

    @staticmethod
    def tree(root):
        """Every file below `root` (its relative path and bytes); folders by name."""
        out = {}
        for d, dirs, files in os.walk(root):
            rel = os.path.relpath(d, root)
            out[rel + "/"] = b""
            for f in files:
                with open(os.path.join(d, f), "rb") as fh:
                    out[os.path.join(rel, f)] = fh.read()
        return out

    def journal_steps(self, argv, prepare, rank=0):
        """The step numbers (of `rank`) right after each journal record of a full run."""
        log = self.path("steps.log")
        if os.path.exists(log):
            os.remove(log)
        prepare()
        self.must(argv, env=dict(PACE, SEDPACK_TEST_STEP_LOG=log))
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

    def check_stop(self, name, how, rc, err, ranks):
        if rc == 0:
            raise Failure("%s: stopped by %s, but it exited 0" % (name, how))
        if ranks == 1 and how.startswith("SIGTERM") and rc not in SIGTERM_EXIT:
            raise Failure("%s: stopped by %s, exit %d: %s" % (name, how, rc, err[-800:]))
        if ranks == 1 and how.startswith("SIGKILL") and rc not in SIGKILL_EXIT:
            raise Failure("%s: stopped by %s, exit %d: %s" % (name, how, rc, err[-800:]))
        if ranks == 1 and how.startswith("SIGTERM") and " are kept: run the same command again to resume" not in err:
            raise Failure("%s: the interrupted line does not say the work is kept: %s" % (name, err[-800:]))

    def resume(self, name, how, fraction, argv, prepare, result, reference, ranks=1, rerun=None):
        """Rerun (`rerun` or the same argv) after a stop; compare `result()` with `reference`."""
        out, err = self.must(rerun or argv)
        m = re.search(r"resumed job (\S+): (\d+) of (\d+) (?:shards|subtrees) kept", err)
        if not m or int(m.group(2)) == 0:
            raise Failure("%s (%s): the rerun kept nothing: %s" % (name, how, err[-800:]))
        if result() != reference:
            raise Failure("%s (%s): the resumed result differs from an uninterrupted run" % (name, how))
        self.table.append((name, how, fraction, "%s of %s" % (m.group(2), m.group(3))))

    def stop_at_step(self, name, argv, prepare, result, reference, fraction, signal_name, rank=None, ranks=1,
                     rerun=None, check=None):
        steps = self.journal_steps(argv, prepare, rank or 0)
        k = steps[int(fraction * (len(steps) - 1))]
        env = dict(PACE, SEDPACK_TEST_KILL_AT=str(k))
        if signal_name == "SIGTERM":
            env["SEDPACK_TEST_KILL_SIGNAL"] = "15"
        if rank is not None:
            env["SEDPACK_TEST_KILL_RANK"] = str(rank)
        prepare()
        rc, _, err = self.run(argv, env)
        how = signal_name + ("" if rank is None else " of rank %d" % rank)
        self.check_stop(name, how, rc, err, ranks)
        if check:
            check()
        self.resume(name, how, "%.0f%%" % (100 * fraction), argv, prepare, result, reference, ranks, rerun)

    def stop_mid_pass(self, name, argv, prepare, result, reference, journal_dir):
        """A real SIGTERM once a few units are journaled, the pass held at its
        9th shard (SEDPACK_TEST_SHARD_GATE) until then."""
        prepare()
        p = subprocess.Popen(argv, env=self.env({"SEDPACK_TEST_SHARD_GATE": "9"}), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None:
            jobs = os.path.join(journal_dir, ".sedpack-hpc", "jobs")
            sizes = [os.path.getsize(os.path.join(jobs, n)) for n in (os.listdir(jobs) if os.path.isdir(jobs) else [])
                     if n.endswith(".journal")]
            if sizes and max(sizes) > 600:
                break
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=120)
        self.check_stop(name, "SIGTERM", p.returncode, err, 1)
        self.resume(name, "SIGTERM mid-pass", "-", argv, prepare, result, reference)

    def make_base(self, ds):
        self.must([self.sedpack, "generate", self.config, ds, "--examples-train", "400", "--examples-test", "64",
                   "--examples-holdout", "0", "--examples-per-shard", "16", "--trace-length", "600", "--threads",
                   "2", "-q"])

    def recompress_cases(self):
        base = self.path("base")
        self.make_base(base)
        ref = self.path("rc-ref")
        self.must([self.sedpack, "recompress", base, "--compression", "zstd", "--level", "3", "-o", ref, "-q",
                   "--no-journal"])
        reference = self.tree(ref)
        out = self.path("rc-out")

        def fresh_out():
            shutil.rmtree(out, ignore_errors=True)

        argv = [self.sedpack, "recompress", base, "--compression", "zstd", "--level", "3", "-o", out, "-q",
                "--threads", "2"]
        result = lambda: self.tree(out)
        for fraction, sig in ((0.45, "SIGTERM"), (0.1, "SIGKILL"), (0.8, "SIGKILL")):
            self.stop_at_step("recompress -o", argv, fresh_out, result, reference, fraction, sig)
            self.no_journal_left(out)
        self.stop_mid_pass("recompress -o", argv, fresh_out, result, reference, out)

        # In place: the staging tree beside the dataset is kept and resumed.
        ip = self.path("rc-inplace")

        def fresh_copy():
            shutil.rmtree(ip, ignore_errors=True)
            shutil.copytree(base, ip, symlinks=True)

        ip_argv = [self.sedpack, "recompress", ip, "--compression", "zstd", "--level", "3", "-q", "--threads", "2"]
        staging = os.path.join(self.work, ".rc-inplace.recompress")

        def staging_kept():
            if not os.path.isdir(staging):
                raise Failure("recompress in place: the stopped run's staging tree is gone")

        self.stop_at_step("recompress in place", ip_argv, fresh_copy, lambda: self.tree(ip), reference, 0.45,
                          "SIGKILL", check=staging_kept)
        self.must([self.sedpack, "verify", ip])
        if os.path.exists(staging):
            raise Failure("recompress in place: the staging tree is left after the rerun")
        # fix sees the stopped run's staging tree as a resumable job: --gc keeps it,
        # --remove-abandoned-jobs removes it.
        steps = self.journal_steps(ip_argv, fresh_copy)
        fresh_copy()
        self.run(ip_argv, dict(PACE, SEDPACK_TEST_KILL_AT=str(steps[len(steps) // 2])))
        said, _ = self.must([self.sedpack, "fix", ip, "--gc", "--apply"])
        if "resumable job" not in said or not os.path.isdir(staging):
            raise Failure("fix --gc does not keep the stopped recompress as a resumable job:\n" + said)
        said, _ = self.must([self.sedpack, "fix", ip, "--remove-abandoned-jobs"])
        if "removed" not in said or os.path.exists(staging):
            raise Failure("fix --remove-abandoned-jobs left the stopped recompress:\n" + said)
        self.must([self.sedpack, "verify", ip])

        # Changed options are refused, --restart starts afresh.
        steps = self.journal_steps(argv, fresh_out)
        fresh_out()
        self.run(argv, dict(PACE, SEDPACK_TEST_KILL_AT=str(steps[len(steps) // 2])))
        self.refused([x if x != "zstd" else "lz4" for x in argv if x not in ("--level", "3")], "compression")
        self.refused([x if x != "3" else "5" for x in argv], "level")
        _, err = self.must(argv + ["--restart"])
        if "resumed job" in err or self.tree(out) != reference:
            raise Failure("recompress --restart did not start afresh with the uninterrupted result: " + err)
        self.table.append(("recompress -o", "changed codec, level", "-", "refused (exit 2)"))

        if self.mpirun:
            mpi = [self.mpirun, "-np", "2", "--oversubscribe"]
            m_argv = mpi + argv[:-2] + ["--threads", "1"]
            self.stop_at_step("mpirun -n 2 recompress -o", m_argv, fresh_out, result, reference, 0.45, "SIGKILL",
                              rank=1, ranks=2)
            steps = self.journal_steps(m_argv, fresh_out, 0)
            fresh_out()
            self.run(m_argv, dict(PACE, SEDPACK_TEST_KILL_AT=str(steps[len(steps) // 2]),
                                  SEDPACK_TEST_KILL_RANK="0"))
            self.refused(m_argv[4:], "ranks")
            self.table.append(("mpirun -n 2 recompress -o", "rerun on 1 rank", "-", "refused (exit 2)"))

    def digest_cases(self):
        base = self.path("dbase")
        self.make_base(base)
        ref = self.path("d-ref")
        shutil.copytree(base, ref, symlinks=True)
        self.must([self.sedpack, "digest", ref, "-q", "--no-journal"])
        content = lambda root: open(os.path.join(root, ".sedpack-hpc", "content.json"), "rb").read()
        reference = content(ref)
        ds = self.path("d")

        def fresh_copy():
            shutil.rmtree(ds, ignore_errors=True)
            shutil.copytree(base, ds, symlinks=True)

        def result():
            self.no_journal_left(ds)
            return content(ds)

        argv = [self.sedpack, "digest", ds, "-q", "--threads", "2"]
        for fraction, sig in ((0.45, "SIGTERM"), (0.8, "SIGKILL")):
            self.stop_at_step("digest", argv, fresh_copy, result, reference, fraction, sig)
        self.stop_mid_pass("digest", argv, fresh_copy, result, reference, ds)
        if self.mpirun:
            mpi = [self.mpirun, "-np", "2", "--oversubscribe"]
            # Kept by any number of ranks: the rerun runs on one.
            self.stop_at_step("mpirun -n 2 digest", mpi + argv[:-2] + ["--threads", "1"], fresh_copy, result,
                              reference, 0.45, "SIGKILL", rank=1, ranks=2, rerun=argv)

        # A stopped digest as verify and fix see it; a changed dataset is refused; --restart.
        steps = self.journal_steps(argv, fresh_copy)
        fresh_copy()
        self.run(argv, dict(PACE, SEDPACK_TEST_KILL_AT=str(steps[len(steps) // 2])))
        out, _ = self.must([self.sedpack, "verify", ds])
        if "resumable_job" not in out:
            raise Failure("verify does not note the stopped digest:\n" + out)
        self.must([self.sedpack, "generate", self.config, ds, "--append", "--examples-train", "16",
                   "--examples-test", "0", "--examples-holdout", "0", "--trace-length", "600", "-q"])
        self.refused(argv, "dataset_info.json")
        _, err = self.must(argv + ["--restart"])
        fresh = self.path("d-fresh")
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(ds, fresh, symlinks=True)
        self.must([self.sedpack, "digest", fresh, "-q", "--no-journal"])
        if "resumed job" in err or content(ds) != content(fresh):
            raise Failure("digest --restart did not start afresh with the uninterrupted result: " + err)
        self.no_journal_left(ds)
        fresh_copy()
        self.run(argv, dict(PACE, SEDPACK_TEST_KILL_AT=str(steps[len(steps) // 2])))
        out, _ = self.must([self.sedpack, "fix", ds, "--remove-abandoned-jobs"])
        if "removed" not in out:
            raise Failure("fix --remove-abandoned-jobs did not remove the stopped digest:\n" + out)
        self.no_journal_left(ds)
        self.table.append(("digest", "changed dataset_info.json", "-", "refused (exit 2)"))

    def index_cases(self):
        # Appends give the tree subtrees (child lists) for the walk to journal.
        base = self.path("ibase")
        self.make_base(base)
        for seed in range(10):
            self.must([self.sedpack, "generate", self.config, base, "--append", "--seed", str(100 + seed),
                       "--examples-train", "16", "--examples-test", "16", "--examples-holdout", "0",
                       "--trace-length", "600", "-q"])
        index = lambda root: open(os.path.join(root, ".sedpack-hpc", "index.bin"), "rb").read()
        ref = self.path("i-ref")
        shutil.copytree(base, ref, symlinks=True)
        self.must([self.sedpack, "index", "build", ref, "-q", "--no-journal"])
        reference = index(ref)
        ds = self.path("i")

        def fresh_copy():
            shutil.rmtree(ds, ignore_errors=True)
            shutil.copytree(base, ds, symlinks=True)

        def result():
            self.no_journal_left(ds)
            return index(ds)

        argv = [self.sedpack, "index", "build", ds, "-q", "--threads", "2"]
        for fraction, sig in ((0.45, "SIGTERM"), (0.8, "SIGKILL")):
            self.stop_at_step("index build", argv, fresh_copy, result, reference, fraction, sig)
        if self.mpirun:
            self.index_mpi_cases(argv, fresh_copy, result, reference, ds)
        steps = self.journal_steps(argv, fresh_copy)
        fresh_copy()
        self.run(argv, dict(PACE, SEDPACK_TEST_KILL_AT=str(steps[len(steps) // 2])))
        self.must([self.sedpack, "generate", self.config, ds, "--append", "--examples-train", "16",
                   "--examples-test", "0", "--examples-holdout", "0", "--trace-length", "600", "-q"])
        self.refused(argv, "dataset_info.json")
        _, err = self.must(argv + ["--restart"])
        if "resumed job" in err:
            raise Failure("index build --restart kept work: " + err)
        self.no_journal_left(ds)
        self.table.append(("index build", "changed dataset_info.json", "-", "refused (exit 2)"))

    def index_mpi_cases(self, argv, fresh_copy, result, reference, ds):
        """The distributed builder: every rank journals the subtrees it walks."""
        mpi = lambda n: [self.mpirun, "-np", str(n), "--oversubscribe"]
        for sig in ("SIGKILL", "SIGTERM"):
            self.stop_at_step("mpirun -n 2 index build", mpi(2) + argv, fresh_copy, result, reference, 0.45, sig,
                              rank=1, ranks=2)
        # Stopped on 2 ranks, resumed on 1 and on 4: the subtrees are the same units.
        self.stop_at_step("mpirun -n 2 index build", mpi(2) + argv, fresh_copy, result, reference, 0.45, "SIGKILL",
                          rank=1, ranks=2, rerun=argv)
        self.table[-1] = self.table[-1][:1] + ("rank 1 killed, rerun np 1",) + self.table[-1][2:]
        self.stop_at_step("mpirun -n 2 index build", mpi(2) + argv, fresh_copy, result, reference, 0.45, "SIGKILL",
                          rank=1, ranks=2, rerun=mpi(4) + argv)
        self.table[-1] = self.table[-1][:1] + ("rank 1 killed, rerun np 4",) + self.table[-1][2:]
        # A serial stop resumed on 2 ranks.
        self.stop_at_step("index build", argv, fresh_copy, result, reference, 0.45, "SIGKILL", rerun=mpi(2) + argv)
        self.table[-1] = self.table[-1][:1] + ("SIGKILL, rerun np 2",) + self.table[-1][2:]
        # Refused when the dataset changed, --restart starts afresh, --no-journal keeps none.
        steps = self.journal_steps(mpi(2) + argv, fresh_copy, 1)
        fresh_copy()
        self.run(mpi(2) + argv, dict(PACE, SEDPACK_TEST_KILL_AT=str(steps[len(steps) // 2]), SEDPACK_TEST_KILL_RANK="1"))
        kept = self.tree(os.path.join(ds, ".sedpack-hpc"))
        if not any(k.endswith(".journal") for k in kept):
            raise Failure("mpirun -n 2 index build stopped: no journal left")
        self.must([self.sedpack, "generate", self.config, ds, "--append", "--examples-train", "16",
                   "--examples-test", "0", "--examples-holdout", "0", "--trace-length", "600", "-q"])
        self.refused(mpi(2) + argv, "dataset_info.json")
        _, err = self.must(mpi(2) + argv + ["--restart"])
        if "resumed job" in err:
            raise Failure("mpirun -n 2 index build --restart kept work: " + err)
        self.no_journal_left(ds)
        self.table.append(("mpirun -n 2 index build", "changed dataset_info.json", "-", "refused (exit 2)"))
        fresh_copy()
        log = self.path("mpi-plain.log")
        if os.path.exists(log):
            os.remove(log)
        self.must(mpi(2) + argv + ["--no-journal"], {"SEDPACK_TEST_STEP_LOG": log})
        journaled = [line for line in open(log)] if os.path.exists(log) else []
        journaled = [line for line in journaled if ".journal" in line]
        if journaled or result() != reference:
            raise Failure("mpirun -n 2 index build --no-journal: %s" % (journaled[:2] or "the index differs"))
        self.table.append(("mpirun -n 2 index build", "--no-journal", "-", "no journal, same index"))

    COMMAND_WIDTH = 28

    def cases(self):
        return [self.recompress_cases, self.digest_cases, self.index_cases]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sedpack")
    ap.add_argument("config")
    ap.add_argument("workdir")
    ap.add_argument("--mpirun")
    sys.exit(Harness(ap.parse_args()).main())
