# SPDX-License-Identifier: Apache-2.0
"""Training-loop read throughput: a torch DataLoader over sedpack_hpc.torch
against the module's own as_numpy_iterator_batched, in this process and
wrapped in the same DataLoader, and the reference's as_numpy_iterator wrapped
the same way, in one run on one dataset. Run by hand (docs/performance.md,
"PyTorch DataLoader"):

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_bench.py [--examples 2048] [--epochs 2] \
        [--rounds 5] [--dataset DS]

The dataset is TinyAES-shaped (configs/generate_tinyaes.json; `--dataset` reads
one made by `sedpack generate configs/generate_tinyaes.json DS` instead): a
float16 trace of 80,000 samples and three uint8[16] per example, 256 examples
per LZ4 fb shard, sha256. Every path reads `--epochs` full passes of the train
split in batches of 64 and touches each batch's traces (the sum of their first
samples):
  torch       DataLoader(IterableDataset(batch_size=64), batch_size=None,
              num_workers=2, persistent_workers=True), set_epoch per pass:
              shuffled elastic order, batches built in the workers in shared
              memory, handed over as tensors;
  torch-fresh the same with persistent_workers=False: 2 workers started and
              stopped per pass (included in the time);
  torch-w0    the same IterableDataset iterated in this process (what
              DataLoader(num_workers=0) does);
  batched     as_numpy_iterator_batched(batch_size=64, shuffle=0), in this
              process (its prefetch threads decode);
  batched-dl  the same iterator in an IterableDataset whose 2 workers take
              every other shard, DataLoader(batch_size=None, num_workers=2,
              persistent_workers=True): what the DataLoader hand-over costs;
  reference   the reference's as_numpy_iterator(shuffle=0) wrapped as
              batched-dl but collated by the DataLoader (batch_size=64); run
              through /tmp/refenv/run-ref.py when it exists (optional).
The persistent loaders are made and run once before the clock starts. The
paths take turns, `--rounds` times; the figures are each path's median and
the ratios are of medians; CPU s is the mean CPU time of a round over this
process and all its workers. MB/s counts raw example bytes. The figure to watch
is torch / batched (target >= 0.9); torch / batched-dl separates the cost of
the DataLoader's processes from that of sedpack_hpc.torch.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
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
    for epoch in range(epochs):
        for b in batches(epoch):
            x = b["trace1"]
            total += float(x[:, 0].astype(np.float32).sum()) if isinstance(x, np.ndarray) else float(
                x[:, 0].float().sum())
            n += len(x)
    return n, time.perf_counter() - t0


def sharded_batches(open_dataset, torch_tensors, method="as_numpy_iterator_batched", **kw):
    import itertools
    import torch.utils.data as tud

    class Sharded(tud.IterableDataset):
        def __iter__(self):
            info = tud.get_worker_info()
            w, nw = (info.id, info.num_workers) if info is not None else (0, 1)
            counter = itertools.count()
            it = getattr(open_dataset(), method)(
                split="train", shuffle=0, repeat=False, shard_filter=lambda _s: next(counter) % nw == w, **kw)
            if not torch_tensors:
                return iter(it)
            import torch
            return ({k: torch.from_numpy(v) for k, v in b.items()} for b in it)
    return Sharded()


def torch_paths(root, args):
    """(name, batches(epoch)) of the paths in this interpreter; the persistent loaders warmed up."""
    import sedpack_hpc
    from torch.utils.data import DataLoader
    from sedpack_hpc import torch as st

    def loader(ds, persistent, **kw):
        return DataLoader(ds, num_workers=args.workers, multiprocessing_context="fork",
                          persistent_workers=persistent, **kw)

    ds = st.IterableDataset(root, batch_size=args.batch, shards_per_block=args.shards_per_block, rank=0, world_size=1)
    fresh_ds = st.IterableDataset(root, batch_size=args.batch, shards_per_block=args.shards_per_block, rank=0,
                                  world_size=1)
    persistent = loader(ds, True, batch_size=None)
    batched_dl = loader(sharded_batches(lambda: sedpack_hpc.Dataset(root), True, batch_size=args.batch), True,
                        batch_size=None)
    in_process = sedpack_hpc.Dataset(root)

    def torch_batches(epoch):
        ds.set_epoch(epoch)
        return persistent

    def fresh_batches(epoch):
        fresh_ds.set_epoch(epoch)
        return loader(fresh_ds, False, batch_size=None)

    def in_process_torch(epoch):
        fresh_ds.set_epoch(epoch)
        return fresh_ds

    paths = [("torch", torch_batches), ("torch-fresh", fresh_batches), ("torch-w0", in_process_torch),
             ("batched", lambda _e: in_process.as_numpy_iterator_batched(split="train", batch_size=args.batch,
                                                                        shuffle=0, repeat=False)),
             ("batched-dl", lambda _e: batched_dl)]
    for _, batches in paths:
        timed(batches, 1)
    return paths


def run_reference(root, args):
    """In the reference's interpreter (this file run by run-ref.py): one line per round."""
    import sedpack.io as reference
    import torch.utils.data as tud
    loader = tud.DataLoader(sharded_batches(lambda: reference.Dataset(root), False, "as_numpy_iterator"),
                            batch_size=args.batch, num_workers=args.workers, multiprocessing_context="fork",
                            persistent_workers=True)
    timed(lambda _e: loader, 1)
    for _ in range(args.rounds):
        n, secs = timed(lambda _e: loader, args.epochs)
        print(f"reference-result {n} {secs}", flush=True)


def reference_figures(root, args, tmp):
    """Seconds per round of the reference, or None and why not."""
    if not REF_RUNNER.exists():
        return None, f"not run ({REF_RUNNER} not found)"
    # The reference refuses a dataset that names a newer sedpack_version than
    # its own; the format is the same, so it reads a copy (files linked, the
    # dataset_info.json written anew) that names an older one.
    copy = pathlib.Path(tmp) / "for-reference"
    shutil.copytree(root, copy, copy_function=os.link)
    info_path = copy / "dataset_info.json"
    info = json.loads(info_path.read_text())
    info["metadata"]["sedpack_version"] = "0.0.1"
    info_path.unlink()
    info_path.write_text(json.dumps(info))
    cmd = [str(REF_RUNNER), __file__, "--reference-only", str(copy), "--epochs", str(args.epochs),
           "--batch", str(args.batch), "--workers", str(args.workers), "--rounds", str(args.rounds)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    got = [line.split()[1:] for line in r.stdout.splitlines() if line.startswith("reference-result ")]
    if not got:
        return None, "failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    return [(int(n), float(secs)) for n, secs in got], ""


def _descendants(pid):
    out = []
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids = (task / "children").read_text().split()
        except OSError:
            continue
        for k in kids:
            out += [int(k)] + _descendants(int(k))
    return out


def cpu_seconds():
    """CPU time of this process, its live descendants (persistent workers) and
    its reaped children (the workers of a finished loader): under a load from
    other users, the cost of a path that wall time hides."""
    def ticks(pid, fields):
        try:
            f = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0
        return sum(int(f[i]) for i in fields)
    own = ticks(os.getpid(), (11, 12, 13, 14))  # utime stime cutime cstime
    return (own + sum(ticks(p, (11, 12)) for p in _descendants(os.getpid()))) / os.sysconf("SC_CLK_TCK")


def load():
    return pathlib.Path("/proc/loadavg").read_text().split()[:3] if pathlib.Path("/proc/loadavg").exists() else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=2048)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards-per-block", type=int, default=4, help="of the torch path's elastic order")
    ap.add_argument("--dataset", help="read this TinyAES-shaped dataset instead of writing one")
    ap.add_argument("--reference-only", metavar="ROOT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reference_only:
        run_reference(args.reference_only, args)
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        root = pathlib.Path(args.dataset) if args.dataset else pathlib.Path(tmp) / "tinyaes"
        if not args.dataset:
            write_dataset(root, args.examples)
        warm(root)
        print(f"load before: {' '.join(load())}")
        paths = torch_paths(str(root), args)
        secs = {name: [] for name, _ in paths}
        cpu = {name: 0.0 for name, _ in paths}
        examples = {}
        for r in range(args.rounds):
            for name, batches in paths[r % len(paths):] + paths[:r % len(paths)]:
                c0 = cpu_seconds()
                examples[name], t = timed(batches, args.epochs)
                cpu[name] += cpu_seconds() - c0
                secs[name].append(t)
        del paths
        ref, why = reference_figures(root, args, tmp)
        if ref is not None:
            examples["reference"] = ref[0][0]
            secs["reference"] = [t for _, t in ref]
        print(f"load after: {' '.join(load())}")
        n = examples["batched"]
        print(f"{n // args.epochs} examples x {args.epochs} epochs, batch {args.batch}, {args.workers} workers "
              f"({EXAMPLE_BYTES * n / args.epochs / 1e6:.0f} MB per epoch), median of {args.rounds} rounds")
        rate = {}
        for name in list(secs) + ([] if ref is not None else ["reference"]):
            if name not in secs:
                print(f"  {name:11s} {why}")
                continue
            med = statistics.median(secs[name])
            rate[name] = examples[name] / med
            used = f", {cpu[name] / args.rounds:.2f} CPU s" if name in cpu else ""
            print(f"  {name:11s} {rate[name]:9.0f} examples/s {rate[name] * EXAMPLE_BYTES / 1e6:8.0f} MB/s  "
                  f"(median {med:.3f} s{used}, all {' '.join(f'{t:.3f}' for t in secs[name])})")
        print(f"  torch / batched: {rate['torch'] / rate['batched']:.2f} (target >= 0.9)")
        print(f"  torch / batched-dl: {rate['torch'] / rate['batched-dl']:.2f}")
        print(f"  torch-fresh / batched: {rate['torch-fresh'] / rate['batched']:.2f}")
        print(f"  torch-w0 / batched: {rate['torch-w0'] / rate['batched']:.2f}")
        if "reference" in rate:
            print(f"  torch / reference: {rate['torch'] / rate['reference']:.2f}")


if __name__ == "__main__":
    main()
