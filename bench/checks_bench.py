# SPDX-License-Identifier: Apache-2.0
"""Verified reads against unverified ones, every codec, in one run: the
figures of the checks sidecar and the decode points (docs/library.md, "What a
verified read protects"). Run by hand from the source tree after a build:

    PYTHONPATH=build/python /usr/bin/python3 bench/checks_bench.py [--repeat 5] [--seconds 2]

1. build/bench/sedpack_bench_checks (checks_bench.cc) writes each codec's
   TinyAES dataset (the examples of `sedpack generate
   configs/generate_tinyaes.json`) with and without decode points and prints
   their sizes, the sidecar's size per shard, write MB/s both ways,
   sequential read MB/s unverified and verified, and random fetches/s
   unverified and verified (cache off, one thread): medians of interleaved
   repetitions, and the ratios of those medians with decode points over
   without. Its table is printed as it comes.
2. On the default TinyAES dataset (LZ4, 2048 train examples in 8 shards,
   written by build/src/cli/sedpack generate): a full as_numpy_iterator pass of
   sedpack_hpc with its default check (the sidecar), verify_hashes=False and
   verify_hashes="strict", the modes interleaved (their order rotating every
   round, --repeat rounds), and of the reference sedpack
   (/tmp/refenv/run-ref.py, when present) on a hard-linked copy naming an older
   sedpack_version (which it requires). Medians and minimums of the passes,
   the CPU time of a pass (all threads), the ratios of the medians, and the
   load before and after. --python-only runs this part alone.
3. The reference's check() and full read (/tmp/refenv/check.py) of every
   codec's dataset, and the reference function that decompresses it
   (sedpack/io/compress.py, CompressedFile.decompress).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REF_RUNNER = Path("/tmp/refenv/run-ref.py")
REF_CHECK = Path("/tmp/refenv/check.py")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
# What the reference's CompressedFile.decompress calls for each codec.
REF_DECOMPRESS = {
    "NONE": "(none: the bytes as read)",
    "LZ4": "lz4.frame.decompress",
    "GZIP": "gzip.decompress",
    "ZLIB": "gzip.decompress (its ZLIB is a gzip member)",
    "ZSTD": "zstandard.decompress (first frame)",
    "BZ2": "bz2.decompress",
    "LZMA": "lzma.decompress",
}


def reference_copy(src, dst):
    """`src` hard-linked at `dst` with a dataset_info.json naming an older
    sedpack_version (the reference refuses newer ones; the format is the same)."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, copy_function=os.link, ignore=shutil.ignore_patterns(".sedpack-hpc"))
    info_path = Path(dst) / "dataset_info.json"
    info = json.loads(info_path.read_text())
    info["metadata"]["sedpack_version"] = "0.0.1"
    info_path.unlink()  # a link to the original: replace it, do not write through it
    info_path.write_text(json.dumps(info))


def one_pass(module, root, **kwargs):
    """(seconds, examples) of a full pass: python_bench's read (the same
    pass, so that the two benches' figures compare)."""
    from python_bench import read  # imports sedpack_hpc: PYTHONPATH holds it
    return read(module, root, **kwargs)


def reference_only(root, repeat):
    """Run under REF_RUNNER: median and minimum seconds of `repeat` reference passes."""
    import sedpack.io as reference
    one_pass(reference, root)  # warm-up
    times = [one_pass(reference, root)[0] for _ in range(repeat)]
    print(f"reference-result {statistics.median(times)} {min(times)}")


def timed_pass(module, root, **kwargs):
    """(seconds, CPU seconds of every thread of the process, examples) of one pass."""
    cpu = time.process_time()
    seconds, n = one_pass(module, root, **kwargs)
    return seconds, time.process_time() - cpu, n


def python_modes(root, repeat):
    """name -> (median s, min s, median CPU s) of each mode; the modes
    interleaved, their order rotating every round, so that none is always first."""
    import sedpack_hpc
    one_pass(sedpack_hpc, root, verify_hashes=False)  # warm-up
    modes = [("default", True), ("verify_hashes=False", False), ('"strict"', "strict")]
    times = {name: [] for name, _ in modes}
    cpu = {name: [] for name, _ in modes}
    n = 0
    for i in range(repeat):
        for k in range(len(modes)):
            name, verify = modes[(i + k) % len(modes)]
            seconds, cpu_seconds, n = timed_pass(sedpack_hpc, root, verify_hashes=verify)
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
    return {name: (statistics.median(t), min(t), statistics.median(cpu[name])) for name, t in times.items()}, n


def reference_read(root, scratch, repeat):
    """(median s, min s) of the reference's passes, or (None, why)."""
    if not REF_RUNNER.exists():
        return None, f"not run ({REF_RUNNER} not found)"
    copy = scratch / "ref-LZ4"
    reference_copy(root, copy)
    r = subprocess.run([str(REF_RUNNER), __file__, "--reference-only", str(copy), "--repeat", str(repeat)],
                       capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("reference-result "):
            return tuple(float(x) for x in line.split()[1:3]), ""
    return None, "failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]


def load():
    r = subprocess.run(["uptime"], capture_output=True, text=True)
    return r.stdout.strip()


def python_part(args, scratch):
    lz4 = scratch / "tinyaes"
    subprocess.run([args.sedpack, "generate", str(ROOT / "configs/generate_tinyaes.json"), str(lz4), "-q"],
                   check=True)
    print(f"== 2. Python, full pass of the train split of `sedpack generate configs/generate_tinyaes.json` "
          f"(LZ4), modes interleaved, {args.repeat} passes each", flush=True)
    print("  load before:", load(), flush=True)
    ours, n = python_modes(str(lz4), args.repeat)
    mb = n * 160_048 / 1e6  # float16[80000] + 3 x uint8[16]
    ref, why = reference_read(lz4, scratch, args.repeat)
    print("  load after: ", load())
    unverified, unverified_best, _ = ours["verify_hashes=False"]
    print(f"  {'':11} {'mode':20} {'median':>9} {'min':>9} {'MB/s':>6} {'CPU/pass':>9}  "
          f"{'unverified/mode':>15} {'(mins)':>6}  {'reference/mode':>14}")
    for name, (seconds, best, cpu) in ours.items():
        vs_ref = f"{ref[0] / seconds:13.2f}x" if ref else ""
        print(f"  sedpack_hpc {name:20} {seconds * 1000:6.1f} ms {best * 1000:6.1f} ms {mb / seconds:6.0f} "
              f"{cpu * 1000:6.1f} ms  {unverified / seconds:14.3f}x {unverified_best / best:5.3f}x  {vs_ref}")
    if ref:
        print(f"  reference   {'as_numpy_iterator':20} {ref[0] * 1000:6.1f} ms {ref[1] * 1000:6.1f} ms "
              f"{mb / ref[0]:6.0f}")
    else:
        print(f"  reference: {why}")
    print("  (ratios of medians: unverified/mode is the mode's speed as a share of verify_hashes=False;\n"
          "   reference/mode is how many times faster than the reference's as_numpy_iterator)")


def reference_check(root, scratch, codec):
    if not (REF_RUNNER.exists() and REF_CHECK.exists()):
        return "not run (no reference)"
    copy = scratch / f"ref-check-{codec}"
    reference_copy(root, copy)
    r = subprocess.run([str(REF_RUNNER), str(REF_CHECK), str(copy), "train"], capture_output=True, text=True)
    shutil.rmtree(copy, ignore_errors=True)
    lines = r.stdout.splitlines()
    if r.returncode == 0 and lines and lines[0] == "check(): OK":
        return "check() OK, " + (lines[1].split(",")[0] if len(lines) > 1 else "read ?")
    return "FAILED: " + (r.stderr.strip().splitlines() or ["?"])[-1][:80]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reference-only", metavar="DATASET", help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, default=5, help="passes per figure (best or median of them)")
    p.add_argument("--seconds", type=float, default=2, help="seconds per fetch rate")
    p.add_argument("--examples", type=int, default=512, help="examples per codec (BZ2 and LZMA: 256)")
    p.add_argument("--codecs", default="NONE,LZ4,GZIP,ZLIB,ZSTD,BZ2,LZMA")
    p.add_argument("--bench", default=str(ROOT / "build/bench/sedpack_bench_checks"))
    p.add_argument("--sedpack", default=str(ROOT / "build/src/cli/sedpack"))
    p.add_argument("--no-python", action="store_true", help="leave out part 2")
    p.add_argument("--python-only", action="store_true", help="part 2 only")
    p.add_argument("--dir", default=None, help="scratch folder (default: a temporary one, removed)")
    args = p.parse_args()
    if args.reference_only:
        reference_only(args.reference_only, args.repeat)
        return
    scratch = Path(args.dir or tempfile.mkdtemp(prefix="sedpack-checks-bench-"))
    try:
        print("load:", load())
        if args.python_only:
            python_part(args, scratch)
            return
        print("== 1. sedpack_bench_checks", flush=True)
        subprocess.run([args.bench, "--dir", str(scratch), "--codecs", args.codecs, "--examples",
                        str(args.examples), "--repeat", str(args.repeat), "--seconds", str(args.seconds)],
                       check=True, stderr=subprocess.DEVNULL)
        codecs = args.codecs.split(",")
        if not args.no_python:
            python_part(args, scratch)
        print("== 3. the reference reading each codec's shards (written with decode points)", flush=True)
        for codec in codecs:
            print(f"  {codec:5} {REF_DECOMPRESS.get(codec, '?'):45} {reference_check(scratch / codec, scratch, codec)}",
                  flush=True)
        print("load:", load())
    finally:
        if args.dir is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
