#!/usr/bin/env bash
# Resume of exports and of the Python filler, one run, warm page cache:
#  - full: an uninterrupted journaled run (the default);
#  - stopped at ~45%: SIGKILL right after the journal record nearest 45% of the
#    row ranges (export-trs, export-hdf5: the kill points of io/kill_point.h) or
#    of the examples (the filler script kills itself there);
#  - rerun: the same command again; ratio = rerun / full (target <= 0.60 plus
#    start-up); equal: TRS byte for byte, HDF5 every dataset through h5py, the
#    filler every example in order; the CPU seconds (user + sys) of the two runs
#    beside the wall times, since on a shared machine the wall time is mostly
#    what the other jobs leave of the disk;
#  - start-up: the fixed cost a rerun pays whatever is left, measured as the
#    wall time of the same command (journaled, same options) on a source of one
#    shard (export-trs: 16 rows, export-hdf5: 256 rows; the filler: 64 examples,
#    one shard), median of REPEAT runs: process (and interpreter) start, MPI
#    init, metadata parse, input open, journal set-up, commit; each row says
#    whether rerun <= 0.60 * full + start-up;
#  - overhead: journaled against --no-journal (the filler: job_id against a plain
#    filler), REPEAT interleaved pairs, the sum of each side (target < 2%);
#    export-hdf5: the median of the pairs' ratios.
# export-hdf5 exports a dataset of its own, H5_EXAMPLES rows in shards of 256
# (default 240000 of 4000 samples, 1.9 GB: a few seconds), also under mpirun -n 2
# (the collective MPI-IO write) when this sedpack has parallel HDF5; its stop
# and the run counting its records use a record every ~32 MiB
# (SEDPACK_TEST_RECORD_MS=0) instead of one a second, the rerun the default;
# so do export-trs's stops and its counting run (a record every row range).
# Each export-hdf5 row is REPEAT interleaved rounds of full (journaled),
# --no-journal, stopped + rerun, medians (the overhead: the median of the
# rounds' full / --no-journal); equal is checked in the first round.
# export-trs runs on a dataset of its own, TRS_EXAMPLES rows (default 96000:
# a full run of some 3 s, ~1.5 GB of TRS, so that start-up does not decide the
# ratio), REPEAT interleaved rounds of full, stopped + rerun, stopped after the
# last range + rerun ("all kept": start-up plus the check of every kept row)
# and --no-journal, medians; its own table also gives the process start-up
# (`sedpack --help`) and the target 0.60 * full + all kept.
# JOBS (environment, default all): words separated by spaces, each choosing the
# rows whose key begins with it; the keys: export-trs, export-hdf5 (one rank),
# export-hdf5-mpi (2 ranks), filler. JOBS="export-hdf5" runs both export-hdf5
# rows. Only their inputs are made.
# Usage: [JOBS="..."] bench/resume_export.sh [BUILD_DIR] [WORKDIR] [TRAIN_EXAMPLES] [TRACE_LENGTH] [REPEAT] [H5_EXAMPLES] [TRS_EXAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="$(cd "${1:-build}" && pwd)"
WORK="${2:-${TMPDIR:-/tmp}/sedpack-resume-export-bench}"
EXAMPLES="${3:-16000}"
LENGTH="${4:-4000}"
REPEAT="${5:-5}"
H5_EXAMPLES="${6:-240000}"
TRS_EXAMPLES="${7:-96000}"
export JOBS="${JOBS:-}"
wanted() {  # KEY: true if JOBS chooses a row whose key begins with KEY (or is KEY)
  [ -z "$JOBS" ] && return 0
  local word
  for word in $JOBS; do
    case $1 in "$word"*) return 0 ;; esac
    case $word in "$1"*) return 0 ;; esac
  done
  return 1
}
rm -rf "$WORK"
mkdir -p "$WORK"
"$BUILD/src/cli/sedpack" generate configs/generate_small.json "$WORK/ds" -q --examples-train "$EXAMPLES" \
  --examples-test 0 --examples-holdout 0 --trace-length "$LENGTH" --shard-by-key=false
sed 's/"examples_per_shard": 16,/"examples_per_shard": 256,/' configs/generate_small.json > "$WORK/h5.json"
if wanted export-hdf5; then
  "$BUILD/src/cli/sedpack" generate "$WORK/h5.json" "$WORK/ds_h5" -q --examples-train "$H5_EXAMPLES" \
    --examples-test 0 --examples-holdout 0 --trace-length "$LENGTH" --shard-by-key=false
fi
if wanted export-trs; then
  "$BUILD/src/cli/sedpack" generate configs/generate_small.json "$WORK/ds_trs" -q --examples-train "$TRS_EXAMPLES" \
    --examples-test 0 --examples-holdout 0 --trace-length "$LENGTH" --shard-by-key=false
fi
# The start-up sources: one shard each.
"$BUILD/src/cli/sedpack" generate configs/generate_small.json "$WORK/one" -q --examples-train 16 \
  --examples-test 0 --examples-holdout 0 --trace-length "$LENGTH" --shard-by-key=false
"$BUILD/src/cli/sedpack" generate "$WORK/h5.json" "$WORK/one_h5" -q --examples-train 256 \
  --examples-test 0 --examples-holdout 0 --trace-length "$LENGTH" --shard-by-key=false
MPIRUN=""
if "$BUILD/src/cli/sedpack" --version | grep -q "(parallel, MPI-IO)" && command -v mpirun > /dev/null; then
  MPIRUN=$(command -v mpirun)
fi
PYTHONPATH="$BUILD/python" /usr/bin/python3 - "$BUILD/src/cli/sedpack" "$WORK" "$EXAMPLES" "$LENGTH" "$REPEAT" "$MPIRUN" \
  "$TRS_EXAMPLES" <<'PY'
import hashlib, os, re, resource, statistics, subprocess, sys, time
sedpack, work, examples, length, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
mpirun = sys.argv[6]
trs_examples = int(sys.argv[7])
ds = os.path.join(work, "ds")
JOBS = os.environ.get("JOBS", "").split()


def wanted(name):
    return not JOBS or any(name.startswith(w) for w in JOBS)


CLEAN = {k: v for k, v in os.environ.items() if not k.startswith("SEDPACK_TEST_")}


CPU = {}  # the last timed run's CPU seconds (user + sys)


def timed(argv, env=None, ok=(0,)):
    # What an earlier run (a killed one above all) left for the disk to write
    # is not this run's cost.
    os.sync()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(argv, env=dict(CLEAN, **(env or {})), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["last"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode not in ok:
        sys.exit("%s exited %d: %s" % (" ".join(argv), p.returncode, p.stderr[-1000:]))
    return wall, p


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def rm(*paths):
    for p in paths:
        if os.path.lexists(p):
            os.remove(p)


def fingerprint(path):
    """SHA-256 of a TRS file's bytes, or of every HDF5 dataset's values and every attribute."""
    import hashlib
    h = hashlib.sha256()
    if not path.endswith(".h5"):
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 24), b""):
                h.update(block)
        return h.hexdigest()
    import h5py, numpy as np
    with h5py.File(path, "r") as f:
        names = [""]
        f.visit(names.append)
        for n in names:
            obj = f[n] if n else f
            h.update(repr((n, sorted((k, str(v)) for k, v in obj.attrs.items()))).encode())
            if isinstance(obj, h5py.Dataset) and obj.shape:
                for at in range(0, obj.shape[0], 8192):
                    h.update(np.ascontiguousarray(obj[at:at + 8192]).tobytes())
            elif isinstance(obj, h5py.Dataset):
                h.update(np.ascontiguousarray(obj[()]).tobytes())
    return h.hexdigest()


rows = []


def startup(cmd, out):
    """Median wall seconds of `cmd` (writing `out`, a file or a folder, removed before each run) over `repeat` runs."""
    import shutil
    gone = lambda: shutil.rmtree(out) if os.path.isdir(out) else rm(out)
    walls = []
    for _ in range(repeat):
        gone()
        walls.append(timed(cmd)[0])
    gone()
    return statistics.median(walls)


def export(kind, source=ds, ranks=0):
    ext = "trs" if kind == "trs" else "h5"
    out = lambda name: os.path.join(work, "%s.%s" % (name, ext))
    # Under mpirun (ranks > 0) every variable the run sets is passed on with -x.
    mpi = lambda env: [mpirun, "-n", str(ranks), "--oversubscribe"] + [x for k in env for x in ("-x", k)] if ranks else []
    cmd = lambda o, *x, env={}: mpi(env) + [sedpack, "export-" + kind, source, "-o", o, "-q"] + list(x)
    steady = {"SEDPACK_TEST_RECORD_MS": "0"} if kind == "hdf5" else {}
    log = os.path.join(work, "steps.log")
    rm(out("count"), log)
    env = dict(steady, SEDPACK_TEST_STEP_LOG=log)
    timed(cmd(out("count"), env=env), env)
    steps = [int(l.split("\t")[1]) for l in open(log) if l.split("\t")[:3:2] == ["0", "journal"]]
    rm(out("count"), log)
    at = steps[int(len(steps) * 0.45)]
    stop = dict(steady, SEDPACK_TEST_KILL_AT=str(at), SEDPACK_TEST_KILL_RANK="0")
    t = {k: [] for k in ("full", "full_cpu", "off", "rerun", "rerun_cpu")}
    kept, equal = "?", True
    for r in range(repeat):
        wall, _ = timed(cmd(out("full")))
        t["full"].append(wall)
        t["full_cpu"].append(CPU["last"])
        # Removed at once: the page cache of a large file left behind would be
        # reclaimed at the cost of whichever run writes next.
        reference = fingerprint(out("full")) if r == 0 else None
        rm(out("full"))
        t["off"].append(timed(cmd(out("off"), "--no-journal"))[0])
        rm(out("off"))
        timed(cmd(out("part"), env=stop), stop, ok=(-9, 137))
        wall, p = timed(cmd(out("part")))
        t["rerun"].append(wall)
        t["rerun_cpu"].append(CPU["last"])
        kept = re.search(r"resumed job \S+ .*kept|$", p.stderr).group(0) or "?"
        if r == 0:
            equal = fingerprint(out("part")) == reference
        rm(out("part"))
    m = {k: statistics.median(v) for k, v in t.items()}
    full, rerun, full_cpu, rerun_cpu = m["full"], m["rerun"], m["full_cpu"], m["rerun_cpu"]
    over = statistics.median(a / b for a, b in zip(t["full"], t["off"])) - 1
    print("export-hdf5%s rounds: full %s; --no-journal %s; rerun %s" % (
        " (%d ranks)" % ranks if ranks else "", *(" ".join("%.2f" % x for x in t[k]) for k in ("full", "off", "rerun"))),
        flush=True)
    name = "export-" + kind + (" (mpirun -n %d, collective)" % ranks if ranks else "")
    one = os.path.join(work, "one_h5" if kind == "hdf5" else "one")
    up = startup(mpi({}) + [sedpack, "export-" + kind, one, "-o", out("one"), "-q"], out("one"))
    rows.append((name, "SIGKILL" + (" of rank 0" if ranks else ""), kept, full, rerun, up, full_cpu, rerun_cpu, equal,
                 over))
    rm(out("full"), out("part"), out("on"), out("off"))


TRS = {}  # export-trs figures beyond the common row


def export_trs():
    ds_trs = os.path.join(work, "ds_trs")
    out = lambda name: os.path.join(work, "%s.trs" % name)
    cmd = lambda o, *x: [sedpack, "export-trs", ds_trs, "-o", o, "-q"] + list(x)
    log = os.path.join(work, "steps.log")
    rm(out("count"), log)
    # export-trs records at most once a second too: its stops and the run
    # counting its records take a record at every row range instead.
    steady = {"SEDPACK_TEST_RECORD_MS": "0"}
    timed(cmd(out("count")), dict(steady, SEDPACK_TEST_STEP_LOG=log))
    steps = [int(l.split("\t")[1]) for l in open(log) if l.split("\t")[2] == "journal"]
    rm(out("count"), log)
    at, last = steps[int(len(steps) * 0.45)], steps[-1]
    t = {k: [] for k in ("full", "full_cpu", "rerun", "rerun_cpu", "kept", "off", "help")}
    kept, equal = "?", True
    for _ in range(repeat):
        # Each output is removed as soon as it has been compared, as in the
        # export-hdf5 rounds: with three 1.5 GB files left on a tmpfs, the
        # --no-journal run that followed paid for the reclaim of their pages
        # (2.7 times the journaled run's wall time on a 24 GB VM).
        t["full"].append(timed(cmd(out("full")))[0])
        t["full_cpu"].append(CPU["last"])
        reference = sha256_of(out("full"))
        rm(out("full"))
        t["off"].append(timed(cmd(out("off"), "--no-journal"))[0])
        rm(out("off"))
        timed(cmd(out("part")), dict(steady, SEDPACK_TEST_KILL_AT=str(at)), ok=(-9, 137))
        wall, p = timed(cmd(out("part")))
        t["rerun"].append(wall)
        t["rerun_cpu"].append(CPU["last"])
        kept = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "?"
        equal = equal and sha256_of(out("part")) == reference
        rm(out("part"))
        timed(cmd(out("all")), dict(steady, SEDPACK_TEST_KILL_AT=str(last)), ok=(-9, 137))
        t["kept"].append(timed(cmd(out("all")))[0])
        equal = equal and sha256_of(out("all")) == reference
        rm(out("all"))
        t["help"].append(timed([sedpack, "--help"])[0])
    print("export-trs rounds: full %s; --no-journal %s; rerun %s; all kept %s" % tuple(
        " ".join("%.2f" % x for x in t[k]) for k in ("full", "off", "rerun", "kept")))
    m = {k: statistics.median(v) for k, v in t.items()}
    up = startup([sedpack, "export-trs", os.path.join(work, "one"), "-o", out("one"), "-q"], out("one"))
    rows.append(("export-trs", "SIGKILL", kept, m["full"], m["rerun"], up, m["full_cpu"], m["rerun_cpu"], equal,
                 m["full"] / m["off"] - 1))
    TRS.update(m, ranges=len(steps), at=steps.index(at) + 1)


FILL = r'''
import os, signal, sys, numpy as np
from sedpack_hpc import Attribute, Dataset, DatasetStructure, Metadata
path, n, length, kill_at, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if not os.path.exists(os.path.join(path, "dataset_info.json")):
    Dataset.create(path, metadata=Metadata(description="bench"), dataset_structure=DatasetStructure(
        saved_data_description=[Attribute(name="trace", dtype="float16", shape=(length,)),
                                Attribute(name="i", dtype="int64", shape=())],
        compression="LZ4", examples_per_shard=64))
ds = Dataset(path)
kw = {} if mode == "plain" else {"job_id": "bench", "skip_kept": True}
base = np.random.default_rng(0).standard_normal((256, length)).astype(np.float16)
with ds.filler(concurrency=2, **kw) as f:
    start = 0 if mode == "plain" else f.resumed_examples["train"]
    if start:
        print("kept %d of %d examples" % (start, n), file=sys.stderr)
    for i in range(start, n):
        f.write_example(values={"trace": base[i % 256] + np.float16(i % 7), "i": i}, split="train")
        if i + 1 == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
'''


def filler():
    script = os.path.join(work, "fill.py")
    open(script, "w").write(FILL)
    import shutil
    from sedpack_hpc import Dataset
    run = lambda path, kill, mode="job", ok=(0,): timed([sys.executable, script, os.path.join(work, path),
                                                        str(examples), str(length), str(kill), mode],
                                                       {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}, ok=ok)
    full, _ = run("f_full", 0)
    full_cpu = CPU["last"]
    run("f_part", int(examples * 0.45), ok=(-9,))
    rerun, p = run("f_part", 0)
    rerun_cpu = CPU["last"]
    kept = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "?"
    values = lambda path: [(e["trace"].tobytes(), int(e["i"])) for e in Dataset(os.path.join(work, path))
                           .as_numpy_iterator(split="train", shuffle=0, repeat=False)]
    equal = values("f_full") == values("f_part")
    on = off = 0.0
    for r in range(repeat):
        on += run("f_on%d" % r, 0)[0]
        off += run("f_off%d" % r, 0, "plain")[0]
        shutil.rmtree(os.path.join(work, "f_on%d" % r))
        shutil.rmtree(os.path.join(work, "f_off%d" % r))
    up = startup([sys.executable, script, os.path.join(work, "f_one"), "64", str(length), "0", "job"],
                 os.path.join(work, "f_one"))
    rows.append(("python filler", "SIGKILL", kept, full, rerun, up, full_cpu, rerun_cpu, equal, on / off - 1))


if wanted("export-trs"):
    export_trs()
if wanted("export-hdf5"):
    export("hdf5", os.path.join(work, "ds_h5"))
if mpirun and wanted("export-hdf5-mpi"):
    export("hdf5", os.path.join(work, "ds_h5"), ranks=2)
if wanted("filler"):
    filler()
print("%d train examples of %d float16 samples (export-trs: %d); overhead over %d interleaved pairs" % (
    examples, length, trs_examples, repeat))
if os.path.isdir(os.path.join(work, "ds_h5")):  # JOBS may leave export-hdf5 out
    print("export-hdf5: its own dataset of %s" % subprocess.run(
        ["du", "-sh", os.path.join(work, "ds_h5")], stdout=subprocess.PIPE, text=True).stdout.split()[0])
print("load %.1f %.1f %.1f" % os.getloadavg())
print("| job | stopped by | kept | full s | rerun s | start-up s | rerun/full | rerun <= 0.60 full + start-up "
      "| CPU s full / rerun (ratio) | equal | journal overhead |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for job, how, kept, full, rerun, up, fcpu, rcpu, equal, over in rows:
    print("| %s | %s at ~45%% | %s | %.2f | %.2f | %.2f | %.2f | %s | %.2f / %.2f (%.2f) | %s | %+.1f%% |" % (
        job, how, kept.replace("sedpack ", ""), full, rerun, up, rerun / full,
        "yes" if rerun <= 0.60 * full + up else "no", fcpu, rcpu, rcpu / max(fcpu, 1e-9),
        "yes" if equal else "NO", 100 * over))
m = TRS
if not m:
    sys.exit(0)
print()
print("export-trs, medians of %d interleaved rounds (%d row ranges, stopped after range %d):" % (
    repeat, m["ranges"], m["at"]))
print("| full s | --no-journal s | rerun s | all kept s | --help s | rerun/full | target 0.60 + all kept/full |")
print("|---|---|---|---|---|---|---|")
print("| %.2f | %.2f | %.2f | %.2f | %.3f | %.2f | %.2f |" % (
    m["full"], m["off"], m["rerun"], m["kept"], m["help"], m["rerun"] / m["full"], 0.60 + m["kept"] / m["full"]))
print("(all kept: a rerun after a stop right after the last range: start-up, the check of every row, the rename)")
PY
