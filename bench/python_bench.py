# SPDX-License-Identifier: Apache-2.0
"""Read and write throughput from Python: sedpack_hpc, and the reference
sedpack (`sedpack.io`) when it is importable, in the same run on the same
examples. Run by hand (README, "Benchmarks"):

    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--examples 512] [--repeat 3]

The workload is TinyAES-shaped (configs/generate_tinyaes.json): a float16
trace of 80,000 samples and three uint8[16] per example, 256 examples per fb
shard, sha256. Writing is `with ds.filler() as f: f.write_example(...)`;
reading is a full pass of `as_numpy_iterator(split="train", shuffle=0,
repeat=False)` that takes one sample of every trace (both libraries hand out
arrays over already decoded shards). sedpack_hpc checks each shard's sha256
while reading (its default); the reference does not, so sedpack_hpc is also
measured with verify_hashes=False ("read, no hash"), and the read ratio uses
that figure (the same work). MB/s counts raw example bytes. The ratios are
sedpack_hpc / reference.
"""
import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import sedpack_hpc

try:
    import sedpack.io as reference
except ImportError:  # the reference is optional
    reference = None

CODECS = ("LZ4", "ZSTD", "GZIP")
TRACE = 80_000


def structure(codec):
    return {
        "saved_data_description": [
            {"name": "trace1", "dtype": "float16", "shape": [TRACE]},
            {"name": "key", "dtype": "uint8", "shape": [16]},
            {"name": "plaintext", "dtype": "uint8", "shape": [16]},
            {"name": "ciphertext", "dtype": "uint8", "shape": [16]},
        ],
        "compression": codec,
        "examples_per_shard": 256,
        "shard_file_type": "fb",
        "hash_checksum_algorithms": ["sha256"],
    }


def make_examples(n):
    rng = np.random.default_rng(0)
    # Trace-like values (a smooth signal plus noise) so that the codecs see
    # realistic, partly compressible data rather than pure noise.
    base = np.sin(np.linspace(0, 60, TRACE)).astype(np.float32)
    out = []
    for _ in range(n):
        trace = (base + rng.normal(0, 0.01, TRACE).astype(np.float32)).astype(np.float16)
        out.append({
            "trace1": trace,
            "key": rng.integers(0, 256, 16, dtype=np.uint8),
            "plaintext": rng.integers(0, 256, 16, dtype=np.uint8),
            "ciphertext": rng.integers(0, 256, 16, dtype=np.uint8),
        })
    return out


def example_bytes(examples):
    return sum(v.nbytes for e in examples for v in e.values())


def write(module, root, codec, examples):
    if module is sedpack_hpc:
        ds = sedpack_hpc.Dataset.create(root, metadata={"description": "bench"},
                                        dataset_structure=structure(codec))
    else:
        s = structure(codec)
        s["saved_data_description"] = [reference.metadata.Attribute(**a) for a in s["saved_data_description"]]
        ds = reference.Dataset.create(root, metadata=reference.Metadata(description="bench"),
                                      dataset_structure=reference.DatasetStructure(**s))
    t = time.perf_counter()
    with ds.filler() as f:
        for e in examples:
            f.write_example(values=e, split="train")
    return time.perf_counter() - t


def read(module, root, **kwargs):
    ds = module.Dataset(root)
    t = time.perf_counter()
    n = 0
    acc = 0.0
    for e in ds.as_numpy_iterator(split="train", shuffle=0, repeat=False, **kwargs):
        acc += float(e["trace1"][-1])
        n += 1
    return time.perf_counter() - t, n


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--examples", type=int, default=512)
    p.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is printed")
    p.add_argument("--dir", default=None, help="scratch folder (default: a temporary one)")
    args = p.parse_args()

    examples = make_examples(args.examples)
    mb = example_bytes(examples) / 1e6
    print(f"{args.examples} TinyAES-shaped examples, {mb:.1f} MB raw; median of {args.repeat}")
    print("reference sedpack: " + ("importable, measured in the same run" if reference else
                                   "not importable, sedpack_hpc only"))
    modules = [("sedpack_hpc", sedpack_hpc)] + ([("reference", reference)] if reference else [])
    scratch = Path(args.dir or tempfile.mkdtemp(prefix="sedpack-pybench-"))
    header = f"{'codec':6} {'library':12} {'write MB/s':>11} {'read MB/s':>10} {'read, no hash':>14}"
    print(header)
    rows = {}
    try:
        for codec in CODECS:
            for name, module in modules:
                w, r, r_nohash = [], [], []
                for i in range(args.repeat):
                    root = scratch / f"{name}-{codec}-{i}"
                    shutil.rmtree(root, ignore_errors=True)
                    w.append(write(module, root, codec, examples))
                    seconds, n = read(module, root)
                    assert n == args.examples, (name, codec, n)
                    r.append(seconds)
                    if module is sedpack_hpc:
                        r_nohash.append(read(module, root, verify_hashes=False)[0])
                    else:
                        r_nohash.append(seconds)
                    shutil.rmtree(root)
                rows[(codec, name)] = (mb / statistics.median(w), mb / statistics.median(r),
                                       mb / statistics.median(r_nohash))
                wr, rd, rn = rows[(codec, name)]
                print(f"{codec:6} {name:12} {wr:11.1f} {rd:10.1f} {rn:14.1f}", flush=True)
        if reference:
            print("ratios sedpack_hpc / reference (write, read):")
            for codec in CODECS:
                ours, theirs = rows[(codec, "sedpack_hpc")], rows[(codec, "reference")]
                print(f"  {codec:6} {ours[0] / theirs[0]:6.2f}x {ours[2] / theirs[2]:6.2f}x")
    finally:
        if args.dir is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
