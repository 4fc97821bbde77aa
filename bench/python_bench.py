# SPDX-License-Identifier: Apache-2.0
"""Read and write throughput from Python: sedpack_hpc, and the reference
sedpack (`sedpack.io`) when it is importable, in the same run on the same
examples. Run by hand (docs/performance.md, "From Python"):

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
sedpack_hpc / reference. sedpack_hpc's default check uses the checks sidecar
its filler writes (XXH3-64 per shard) and falls back to the recorded sha256;
verify_hashes="strict" always checks the sha256: both are printed against
verify_hashes=False from the same run ("verified/unverified").

The codec library limit is measured in the same run on the same bytes: the
uncompressed fb shards sedpack_hpc wrote (its shard files decompressed with the
codec's own Python binding) are compressed and decompressed, one thread, by
that binding alone at the level sedpack_hpc uses (lz4.frame level 0, zstandard
level 3, zlib level 9 as a gzip member). "of limit" is sedpack_hpc's write
figure over the compress figure and its "read, no hash" figure over the
decompress figure (MB/s of raw example bytes on both sides, so the fraction is
a ratio of times). sedpack_hpc's filler compresses on all hardware threads and
also hashes and writes files, so its write fraction can pass 100% on a
multi-core machine. A codec whose binding is not importable (python3-lz4,
python3-zstandard) is left out of that table.
"""
import argparse
import shutil
import statistics
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

import sedpack_hpc

try:
    import sedpack.io as reference
except ImportError:  # the reference is optional
    reference = None

CODECS = ("LZ4", "ZSTD", "GZIP")
TRACE = 80_000


def codec_library(codec):
    """(name, compress, decompress) of the codec's Python binding at the level
    sedpack_hpc writes (include/sedpack/codecs/compress.h), or None."""
    if codec == "GZIP":
        def gzip_compress(data):
            c = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: one gzip member
            return c.compress(data) + c.flush()
        return "zlib level 9 (gzip)", gzip_compress, lambda data: zlib.decompress(data, 31)
    if codec == "LZ4":
        try:
            import lz4.frame
        except ImportError:
            return None
        def lz4_compress(data):
            return lz4.frame.compress(data, compression_level=0, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                      block_linked=True, content_checksum=False, store_size=True)
        return "lz4.frame level 0", lz4_compress, lz4.frame.decompress
    if codec == "ZSTD":
        try:
            import zstandard
        except ImportError:
            return None
        compressor = zstandard.ZstdCompressor(level=3, write_content_size=True)
        decompressor = zstandard.ZstdDecompressor()
        return "zstandard level 3", compressor.compress, decompressor.decompress
    return None


def shard_payloads(root, decompress):
    """The uncompressed fb shards of the dataset at `root` (its shard files,
    decompressed by the codec library)."""
    files = sorted(f for f in (Path(root) / "train").rglob("*") if f.is_file() and f.suffix != ".json")
    return [decompress(f.read_bytes()) for f in files]


def library_limit(payloads, compress, decompress, repeat):
    """Median seconds to compress, and to decompress, every payload once."""
    c_times, d_times = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        packed = [compress(p) for p in payloads]
        c_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        unpacked = [decompress(p) for p in packed]
        d_times.append(time.perf_counter() - t)
        assert unpacked == payloads
    return statistics.median(c_times), statistics.median(d_times)


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
    limits = {}
    modes = {}  # codec -> (default, strict, unverified) read seconds, sedpack_hpc
    try:
        for codec in CODECS:
            library = codec_library(codec)
            for name, module in modules:
                w, r, r_nohash, r_strict = [], [], [], []
                for i in range(args.repeat):
                    root = scratch / f"{name}-{codec}-{i}"
                    shutil.rmtree(root, ignore_errors=True)
                    w.append(write(module, root, codec, examples))
                    if module is sedpack_hpc:
                        # One untimed pass first (the first read of a process
                        # also warms the decoder's memory pool), then the
                        # three modes in an order that rotates with i, so that
                        # none is always first.
                        read(module, root, verify_hashes=False)
                        runs = [(r, True), (r_nohash, False), (r_strict, "strict")]
                        for k in range(3):
                            out, verify = runs[(i + k) % 3]
                            seconds, n = read(module, root, verify_hashes=verify)
                            assert n == args.examples, (name, codec, n)
                            out.append(seconds)
                        if i == 0 and library:
                            payloads = shard_payloads(root, library[2])
                    else:
                        seconds, n = read(module, root)
                        assert n == args.examples, (name, codec, n)
                        r.append(seconds)
                        r_nohash.append(seconds)
                    shutil.rmtree(root)
                if module is sedpack_hpc:
                    modes[codec] = (statistics.median(r), statistics.median(r_strict), statistics.median(r_nohash))
                rows[(codec, name)] = (mb / statistics.median(w), mb / statistics.median(r),
                                       mb / statistics.median(r_nohash))
                wr, rd, rn = rows[(codec, name)]
                print(f"{codec:6} {name:12} {wr:11.1f} {rd:10.1f} {rn:14.1f}", flush=True)
            if library:
                c, d = library_limit(payloads, library[1], library[2], args.repeat)
                limits[codec] = (library[0], mb / c, mb / d)
        # One line per codec: the ratios against the reference and the
        # fractions of the codec library limit, from this run.
        print("sedpack_hpc against the reference (ratios) and against the codec library limit "
              "(one thread, the same uncompressed fb shards):")
        print(f"  {'codec':6} {'write/ref':>9} {'read/ref':>9}  {'library':20} {'compress MB/s':>13} "
              f"{'decompress MB/s':>15} {'write/limit':>11} {'read/limit':>10}")
        for codec in CODECS:
            ours = rows[(codec, "sedpack_hpc")]
            if reference:
                theirs = rows[(codec, "reference")]
                ratios = f"{ours[0] / theirs[0]:8.2f}x {ours[2] / theirs[2]:8.2f}x"
            else:
                ratios = f"{'-':>9} {'-':>9}"
            if codec in limits:
                lib, c, d = limits[codec]
                limit = f"{lib:20} {c:13.1f} {d:15.1f} {100 * ours[0] / c:10.0f}% {100 * ours[2] / d:9.0f}%"
            else:
                limit = f"{'(binding not importable)':20}"
            print(f"  {codec:6} {ratios}  {limit}")
        print("sedpack_hpc reads verified against unverified (speed ratios, same run):")
        for codec, (default, strict, unverified) in modes.items():
            print(f"  {codec:6} default {unverified / default:5.2f}x of unverified   "
                  f"strict {unverified / strict:5.2f}x of unverified")
    finally:
        if args.dir is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
