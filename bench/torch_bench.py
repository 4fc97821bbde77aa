# SPDX-License-Identifier: Apache-2.0
"""Training-loop read throughput: a torch DataLoader over sedpack_hpc.torch
against the module's own as_numpy_iterator_batched, in this process and
wrapped in the same DataLoader, and the reference's as_numpy_iterator wrapped
the same way, in one run on one dataset. Run by hand (docs/performance.md,
"PyTorch DataLoader"):

    PYTHONPATH=build/python /usr/bin/python3 bench/torch_bench.py [--examples 2048] [--epochs 2] \
        [--rounds 7] [--dataset DS]

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
paths take turns, `--rounds` times, the reference among them (its process
waits for its turn); the figures are each path's median, the ratios are of
medians, with the median of the per-round ratios beside them (the two paths
of a round ran back to back, under nearly the same load) and the ratio of
CPU seconds (the median CPU time of a round over the path's processes and
workers: what the path costs whatever else runs on the machine). `uptime`
before and after says how loaded the machine was. MB/s counts raw example
bytes. The figure to watch is torch / batched (target >= 0.9); torch /
batched-dl separates the cost of the DataLoader's processes from that of
sedpack_hpc.torch.
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


def serve_reference(root, args):
    """In the reference's interpreter (this file run by run-ref.py): one timed
    round per line read, so that the reference takes its turn among the other
    paths; the loader is made and run once before the first."""
    import sedpack.io as reference
    import torch.utils.data as tud
    loader = tud.DataLoader(sharded_batches(lambda: reference.Dataset(root), False, "as_numpy_iterator"),
                            batch_size=args.batch, num_workers=args.workers, multiprocessing_context="fork",
                            persistent_workers=True)
    timed(lambda _e: loader, 1)
    print("reference-ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "round":
            break
        c0 = cpu_seconds()
        n, secs = timed(lambda _e: loader, args.epochs)
        print(f"reference-result {n} {secs} {cpu_seconds() - c0}", flush=True)


class Reference:
    """The reference's as_numpy_iterator in the same 2-worker DataLoader,
    served by a process of the reference's interpreter, a round on request."""

    def __init__(self, root, args, tmp):
        self.proc, self.why = None, ""
        if not REF_RUNNER.exists():
            self.why = f"not run ({REF_RUNNER} not found)"
            return
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
               "--batch", str(args.batch), "--workers", str(args.workers)]
        # Its warnings go to a file: a pipe nobody reads while it runs would fill and stop it.
        self.err = open(pathlib.Path(tmp) / "reference.err", "w+")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True)
        if self._line() != ["reference-ready"]:
            self.close()

    def _line(self):
        while True:
            line = self.proc.stdout.readline()
            if not line or line.startswith("reference-"):
                return line.split()

    def round(self):
        """(examples, seconds, CPU seconds) of one round, or None."""
        if self.proc is None:
            return None
        self.proc.stdin.write("round\n")
        self.proc.stdin.flush()
        got = self._line()
        if len(got) != 4:
            self.close()
            return None
        return int(got[1]), float(got[2]), float(got[3])

    def close(self):
        if self.proc is None:
            return
        # Said, not an end of file: the DataLoader workers forked since hold the pipe open.
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        if self.proc.wait() != 0 and not self.why:
            self.err.seek(0)
            self.why = "failed: " + (self.err.read().strip().splitlines() or ["?"])[-1]
        self.err.close()
        self.proc = None


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


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load " + (" ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3]))


def run_rounds(paths, reference, args):
    """Every path once per round, in an order that rotates by one each round
    (ABC.., BC..A, ...), so that a change of the machine's load falls on all of
    them: {name: [(examples, seconds, CPU seconds)]}."""
    names = [name for name, _ in paths] + ["reference"]
    runs = dict(paths)
    got = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if name == "reference":
                one = reference.round()
                if one is not None:
                    got[name].append(one)
                continue
            c0 = cpu_seconds()
            n, t = timed(runs[name], args.epochs)
            got[name].append((n, t, cpu_seconds() - c0))
    return {name: runs for name, runs in got.items() if runs}


def report(got, args, why_no_reference):
    n = got["batched"][0][0]
    print(f"{n // args.epochs} examples x {args.epochs} epochs, batch {args.batch}, {args.workers} workers "
          f"({EXAMPLE_BYTES * n / args.epochs / 1e6:.0f} MB per epoch), {args.rounds} rounds, medians")
    rate, cpu = {}, {}
    for name, runs in got.items():
        med = statistics.median(t for _, t, _ in runs)
        rate[name] = runs[0][0] / med
        cpu[name] = statistics.median(c for _, _, c in runs)
        print(f"  {name:11s} {rate[name]:9.0f} examples/s {rate[name] * EXAMPLE_BYTES / 1e6:8.0f} MB/s  "
              f"(median {med:.3f} s, {cpu[name]:.2f} CPU s; all {' '.join(f'{t:.3f}' for _, t, _ in runs)})")
    if "reference" not in got:
        print(f"  reference   {why_no_reference}")

    def paired(a, b):
        """Median of the ratio of a round's rates (its paths ran back to back)."""
        return statistics.median(tb / ta for (_, ta, _), (_, tb, _) in zip(got[a], got[b]))
    print("ratios of medians (median of the per-round ratios; CPU s of b / CPU s of a):")
    for a, b, note in (("torch", "batched", " (target >= 0.9)"), ("torch", "batched-dl", ""),
                       ("torch-fresh", "batched", ""), ("torch-w0", "batched", ""), ("torch", "reference", "")):
        if a in rate and b in rate:
            print(f"  {a} / {b}: {rate[a] / rate[b]:.2f} ({paired(a, b):.2f}; CPU {cpu[b] / cpu[a]:.2f}){note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=2048)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--shards-per-block", type=int, default=4, help="of the torch path's elastic order")
    ap.add_argument("--dataset", help="read this TinyAES-shaped dataset instead of writing one")
    ap.add_argument("--reference-only", metavar="ROOT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.reference_only:
        serve_reference(args.reference_only, args)
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        root = pathlib.Path(args.dataset) if args.dataset else pathlib.Path(tmp) / "tinyaes"
        if not args.dataset:
            write_dataset(root, args.examples)
        warm(root)
        print(f"before: {uptime()}")
        reference = Reference(str(root), args, tmp)
        paths = torch_paths(str(root), args)
        got = run_rounds(paths, reference, args)
        reference.close()
        del paths
        print(f"after:  {uptime()}")
        report(got, args, reference.why)


if __name__ == "__main__":
    main()
