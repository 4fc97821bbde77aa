# SPDX-License-Identifier: Apache-2.0
"""Shuffling with a seed, the elastic order and its resumable state."""
import numpy as np
import pytest

from sedpack_hpc import Dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("order") / "ds"
    ds = Dataset.create(root, metadata={}, dataset_structure={
        "saved_data_description": [{"name": "k", "dtype": "int", "shape": []},
                                   {"name": "v", "dtype": "uint32", "shape": [2]}],
        "examples_per_shard": 5, "compression": "LZ4"})
    with ds.filler() as f:
        for k in range(60):
            f.write_example(values={"k": k, "v": np.array([k, 2 * k], np.uint32)}, split="train")
    return ds


def keys(it, n=None):
    out = []
    for e in it:
        out.append(e["k"])
        if n is not None and len(out) == n:
            break
    return out


def test_shuffle_with_seed_is_reproducible(dataset):
    a = keys(dataset.as_numpy_iterator(split="train", shuffle=16, seed=7, repeat=False))
    b = keys(dataset.as_numpy_iterator(split="train", shuffle=16, seed=7, repeat=False))
    c = keys(dataset.as_numpy_iterator(split="train", shuffle=16, seed=8, repeat=False))
    assert a == b
    assert sorted(a) == list(range(60))
    assert a != c and a != list(range(60))
    it = dataset.as_numpy_iterator(split="train", shuffle=16, repeat=False)  # no seed: a fresh one
    assert keys(dataset.as_numpy_iterator(split="train", shuffle=16, seed=it.seed, repeat=False)) == keys(it)


def test_shuffle_by_default_and_repeat(dataset):
    it = dataset.as_numpy_iterator(split="train", seed=1)  # shuffle=1000, repeat=True
    got = keys(it, 150)
    # The 1000-example buffer holds many passes at once (as the reference's).
    assert len(got) == 150 and set(got) <= set(range(60)) and got != sorted(got)
    it = dataset.as_numpy_iterator(split="train", seed=1, shuffle=10)
    got = keys(it, 120)
    assert sorted(got[:50]) != got[:50] and len(set(got)) == 60


def test_elastic_order_resumes(dataset):
    full = keys(dataset.as_numpy_iterator_elastic(split="train", seed=3, shards_per_block=2))
    assert sorted(full) == list(range(60)) and full != list(range(60))
    it = dataset.as_numpy_iterator_elastic(split="train", seed=3, shards_per_block=2)
    head = keys(it, 23)
    state = it.state_dict()
    assert state["position"] == 23 and state["seed"] == 3
    resumed = dataset.as_numpy_iterator_elastic(split="train", seed=99)
    resumed.load_state_dict(state)
    assert head + keys(resumed) == full
    # Two readers split the epoch between them.
    parts = [keys(dataset.as_numpy_iterator_elastic(split="train", seed=3, shards_per_block=2, rank=r,
                                                    num_readers=2)) for r in range(2)]
    assert sorted(parts[0] + parts[1]) == list(range(60))
    assert not set(parts[0]) & set(parts[1])


def test_get_random_access(dataset):
    for i in (0, 59, 31, 4, 5):
        e = dataset.get("train", i)
        assert e["k"] == i and e["v"].tolist() == [i, 2 * i]


def test_threads_share_an_iterator_and_a_filler(dataset, tmp_path):
    import threading
    it = dataset.as_numpy_iterator(split="train", shuffle=0, repeat=False)
    got = [[], [], []]

    def drain(out):
        for e in it:
            out.append(e["k"])

    threads = [threading.Thread(target=drain, args=(g,)) for g in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got[0] + got[1] + got[2]) == list(range(60))

    ds = Dataset.create(tmp_path / "t", metadata={}, dataset_structure={
        "saved_data_description": [{"name": "k", "dtype": "int", "shape": []}], "examples_per_shard": 3})
    with ds.filler() as f:
        def fill(start):
            for k in range(start, start + 20):
                f.write_example(values={"k": k}, split="train")
        threads = [threading.Thread(target=fill, args=(s,)) for s in (0, 20, 40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(e["k"] for e in ds.as_numpy_iterator(split="train", shuffle=0, repeat=False)) == list(range(60))
