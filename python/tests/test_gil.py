# SPDX-License-Identifier: Apache-2.0
"""The GIL is released while the library reads, decompresses and decodes
shards (as_numpy_iterator, batched or not, decoding inline or on prefetch
threads) and while a filler compresses and writes them: a pure-Python thread
keeps running meanwhile.

The probe is a thread counting loop iterations. The main thread alternates
calls into sedpack_hpc with sleeps (time.sleep releases the GIL) and compares
the counter's rate during its calls with its rate during its sleeps. A call
that released the GIL leaves the counter about its free rate (somewhat less:
it shares the cores with the decoding or compressing thread); a call that held
it leaves the counter only the switch-interval slice around the call. Rates
measured in alternation are compared, not times, so a loaded machine (whose
load changes from second to second) slows both sides alike.
`test_the_probe_tells_a_gil_holding_call` runs the same probe around a C call
that holds the GIL (sorted() of a list of floats) and checks it reads low: the
probe can fail. (Checked by hand too: with the gil_scoped_release calls of
NumpyIterator::Next and PyFiller::WriteExample removed from the binding,
every other test here fails, keeping 0.01 to 0.02 of the rate.)

The shards are slow to decode on purpose (one 1 MiB example per BZ2 shard), so
each call the main thread makes waits tens of milliseconds on C++ work: on a
loaded machine the thread that gets the GIL back can wait milliseconds for
the scheduler, and a GIL holder's calls must be long beside that for the
probe to see them.
"""
import random
import sys
import threading
import time

import numpy as np
import pytest

from sedpack_hpc import Dataset

SHARDS = 8
EXAMPLE_BYTES = 1 << 20
SWITCH_INTERVAL = 0.00025  # seconds: a GIL holder gives the counter about this per call
MIN_FRACTION_RELEASED = 0.1  # seen: 0.6 to 0.9 at load 6; held calls keep 0.01 to 0.02
MAX_FRACTION_HELD = 0.08  # seen: 0.00 for sorted(); 0.01 to 0.02 with a release removed


class Counter:
    """A pure-Python thread counting loop iterations until stopped."""

    def __init__(self):
        self.count = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        n = 0
        while not self._stop:
            n += 1
            self.count = n

    def __enter__(self):
        self._thread.start()
        while self.count == 0:
            time.sleep(0.001)
        return self

    def __exit__(self, *exc):
        self._stop = True
        self._thread.join()


def fraction_kept(calls):
    """Make the calls `calls` yields as (label, function), sleeping half as
    long as each took after it, until they run out or a function returns
    False. For each label: the counter's rate during those calls over its rate
    during the sleeps."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    during = {}
    sleeps = [0, 0.0]
    try:
        with Counter() as counter:
            for label, function in calls:
                c, t = counter.count, time.perf_counter()
                more = function()
                dt = time.perf_counter() - t
                d = during.setdefault(label, [0, 0.0])
                d[0] += counter.count - c
                d[1] += dt
                c, t = counter.count, time.perf_counter()
                time.sleep(min(dt / 2, 0.05))
                sleeps[0] += counter.count - c
                sleeps[1] += time.perf_counter() - t
                if more is False:
                    break
    finally:
        sys.setswitchinterval(old)
    assert sleeps[0] > 0, "the counter never ran while the main thread slept"
    free = sleeps[0] / sleeps[1]
    return {label: (c / t) / free for label, (c, t) in during.items()}


def check(kept, what):
    for label, fraction in kept.items():
        assert fraction > MIN_FRACTION_RELEASED, (
            f"{what}: the counter kept only {fraction:.2f} of its rate during {label} (all: {kept})")


def payload(k):
    # 4 bits of entropy per byte: BZ2 works hard both ways.
    return np.random.default_rng(k).integers(0, 16, EXAMPLE_BYTES, dtype=np.uint8)


def create(path):
    return Dataset.create(path, metadata={"description": "gil"}, dataset_structure={
        "saved_data_description": [{"name": "x", "dtype": "uint8", "shape": [EXAMPLE_BYTES]}],
        "compression": "BZ2", "examples_per_shard": 1, "shard_file_type": "fb",
        "hash_checksum_algorithms": ["sha256"]})


def filler_calls(ds, values):
    """write_example for each value, then the filler's __exit__. One worker
    thread: write_example blocks once two full shards wait for it, __exit__
    until the last ones are written."""
    f = ds.filler(concurrency=1).__enter__()
    for v in values:
        yield "write_example", lambda v=v: f.write_example(values={"x": v}, split="train")
    yield "__exit__", lambda: f.__exit__(None, None, None)


@pytest.fixture(scope="module")
def values():
    return [payload(k) for k in range(SHARDS)]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, values):
    path = tmp_path_factory.mktemp("gil") / "ds"
    with create(path).filler() as f:
        for v in values:
            f.write_example(values={"x": v}, split="train")
    return Dataset(path)


def test_the_probe_tells_a_gil_holding_call():
    data = [random.random() for _ in range(400_000)]
    held = fraction_kept(("sorted", lambda: sorted(data)) for _ in range(6))["sorted"]
    # sorted() is C code that never releases the GIL.
    assert held < MAX_FRACTION_HELD, f"the counter kept {held:.2f} of its rate around GIL-holding calls"


def test_filler_releases_the_gil(tmp_path, values):
    ds = create(tmp_path / "ds")
    check(fraction_kept(filler_calls(ds, values)), "writing")
    got = [e["x"] for e in Dataset(tmp_path / "ds").as_numpy_iterator(split="train", shuffle=0, repeat=False)]
    assert len(got) == SHARDS and all(np.array_equal(g, v) for g, v in zip(got, values))


@pytest.mark.parametrize("batch_size,prefetch_shards", [(None, 0), (None, 1), (2, 1)])
def test_reading_releases_the_gil(dataset, values, batch_size, prefetch_shards):
    # prefetch_shards=0: each shard is decoded inside __next__ on this thread;
    # 1: on a prefetch thread while __next__ waits for it.
    if batch_size is None:
        it = dataset.as_numpy_iterator(split="train", shuffle=0, repeat=False, prefetch_shards=prefetch_shards)
    else:
        it = dataset.as_numpy_iterator_batched(split="train", batch_size=batch_size, shuffle=0, repeat=False,
                                               prefetch_shards=prefetch_shards)
    got = []

    def next_example():
        e = next(it, None)
        if e is None:
            return False
        got.extend(e["x"] if batch_size else [e["x"]])
        return True

    check(fraction_kept(("__next__", next_example) for _ in range(SHARDS + 1)), "reading")
    assert len(got) == SHARDS and all(np.array_equal(g, v) for g, v in zip(got, values))
