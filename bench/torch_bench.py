# SPDX-License-Identifier: Apache-2.0
"""Training-loop read throughput: a torch DataLoader over sedpack_hpc.torch
against the module's own as_numpy_iterator_batched, and the reference's
as_numpy_iterator wrapped in a DataLoader the same way, in one run on one
dataset. Run by hand (docs/performance.md, "PyTorch DataLoader"):

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_bench.py [--examples 2048] [--epochs 2]

The dataset is TinyAES-shaped (configs/generate_tinyaes.json): a float16 trace
of 80,000 samples and three uint8[16] per example, 256 examples per LZ4 fb
shard, sha256. Every path reads `--epochs` full passes of the train split in
batches of 64 and touches each batch's traces (the sum of their first
samples):
  torch      DataLoader(IterableDataset(batch_size=64), batch_size=None,
             num_workers=2): shuffled elastic order, batches built in the
             workers, handed over as tensors;
  batched    as_numpy_iterator_batched(batch_size=64, shuffle=0), in this
             process (its prefetch threads decode);
  reference  the reference's as_numpy_iterator(shuffle=0) in an
             IterableDataset whose 2 workers take every other shard,
             DataLoader(batch_size=64, num_workers=2) collating; run through
             /tmp/refenv/run-ref.py when it exists (optional).
Times include starting the workers. MB/s counts raw example bytes. The
figure to watch is torch / batched (target >= 0.9): what the DataLoader hand
over costs against reading in the training process itself.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

TRACE = 80_000
EXAMPLE_BYTES = TRACE * 2 + 3 * 16
REF_RUNNER = pathlib.Path("/tmp/refenv/run-ref.py")


def write_dataset(root, n):
    import sedpack_hpc
    ds = sedpack_hpc.Dataset.create(root, metadata={}, dataset_structure={
        "saved_data_description": [{"name": "trace1", "dtype": "float16", "shape": [TRACE]},
                                   {"name": "key", "dtype": "uint8", "shape": [16]},
                                   {"name": "plaintext", "dtype": "uint8", "shape": [16]},
                                   {"name": "ciphertext", "dtype": "uint8", "shape": [16]}],
        "compression": "LZ4", "examples_per_shard": 256, "shard_file_type": "fb",
        "hash_checksum_algorithms": ["sha256"]})
    rng = np.random.default_rng(0)
    trace = (rng.standard_normal(TRACE) * 0.01).astype(np.float16)
    with ds.filler() as f:
        for i in range(n):
            b = rng.integers(0, 256, 48, dtype=np.uint8)
            f.write_example(values={"trace1": np.roll(trace, i), "key": b[:16], "plaintext": b[16:32],
                                    "ciphertext": b[32:]}, split="train")


def warm(root):
    """Read every file once, so that no path pays for the disk."""
    for p in pathlib.Path(root).rglob("*"):
        if p.is_file():
            p.read_bytes()


def timed(batches, epochs):
    t0 = time.perf_counter()
    n, total = 0, 0.0
    for _ in range(epochs):
        for b in batches():
            x = b["trace1"]
            total += float(x[:, 0].astype(np.float32).sum()) if isinstance(x, np.ndarray) else float(
                x[:, 0].float().sum())
            n += len(x)
    return n, time.perf_counter() - t0


def run_torch(root, args):
    from torch.utils.data import DataLoader
    from sedpack_hpc import torch as st
    ds = st.IterableDataset(root, batch_size=args.batch, shards_per_block=args.shards_per_block, rank=0, world_size=1)

    def batches():
        return DataLoader(ds, batch_size=None, num_workers=args.workers, multiprocessing_context="fork")
    return timed(batches, args.epochs)


def run_batched(root, args):
    import sedpack_hpc
    ds = sedpack_hpc.Dataset(root)

    def batches():
        return ds.as_numpy_iterator_batched(split="train", batch_size=args.batch, shuffle=0, repeat=False)
    return timed(batches, args.epochs)


def run_reference(root, args):
    """In the reference's interpreter (this file run by run-ref.py)."""
    import itertools
    import sedpack.io as reference
    import torch.utils.data as tud

    class Wrapped(tud.IterableDataset):
        def __iter__(self):
            info = tud.get_worker_info()
            w, nw = (info.id, info.num_workers) if info is not None else (0, 1)
            counter = itertools.count()
            ds = reference.Dataset(root)
            return iter(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False,
                                             shard_filter=lambda _s: next(counter) % nw == w))

    def batches():
        return tud.DataLoader(Wrapped(), batch_size=args.batch, num_workers=args.workers,
                              multiprocessing_context="fork")
    return timed(batches, args.epochs)


def reference_figure(root, args):
    if not REF_RUNNER.exists():
        return None, f"not run ({REF_RUNNER} not found)"
    # The reference refuses a dataset that names a newer sedpack_version than
    # its own; the format is the same, so the copy it reads names none newer.
    info_path = pathlib.Path(root) / "dataset_info.json"
    info = json.loads(info_path.read_text())
    info["metadata"]["sedpack_version"] = "0.0.1"
    info_path.write_text(json.dumps(info))
    cmd = [str(REF_RUNNER), __file__, "--reference-only", str(root), "--epochs", str(args.epochs),
           "--batch", str(args.batch), "--workers", str(args.workers)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("reference-result "):
            _, n, secs = line.split()
            return (int(n), float(secs)), ""
    return None, "failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=2048)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards-per-block", type=int, default=4, help="of the torch path's elastic order")
    ap.add_argument("--reference-only", metavar="ROOT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reference_only:
        n, secs = run_reference(args.reference_only, args)
        print(f"reference-result {n} {secs}")
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        root = pathlib.Path(tmp) / "tinyaes"
        write_dataset(root, args.examples)
        warm(root)
        figures = {"torch": run_torch(root, args), "batched": run_batched(root, args)}
        ref, why = reference_figure(root, args)
        print(f"{args.examples} examples x {args.epochs} epochs, batch {args.batch}, {args.workers} workers "
              f"({EXAMPLE_BYTES * args.examples / 1e6:.0f} MB per epoch)")
        for name, fig in list(figures.items()) + [("reference", ref)]:
            if fig is None:
                print(f"  {name:10s} {why}")
                continue
            n, secs = fig
            print(f"  {name:10s} {n / secs:9.0f} examples/s {n * EXAMPLE_BYTES / secs / 1e6:8.0f} MB/s  ({secs:.2f} s)")
        rate = {k: v[0] / v[1] for k, v in figures.items()}
        print(f"  torch / batched: {rate['torch'] / rate['batched']:.2f} (target >= 0.9)")
        if ref is not None:
            print(f"  torch / reference: {rate['torch'] / (ref[0] / ref[1]):.2f}")


if __name__ == "__main__":
    main()
