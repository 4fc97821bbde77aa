# SPDX-License-Identifier: Apache-2.0
"""The reference's remaining Dataset names (sedpack_hpc/dropin.py), value
equality of the records, and the reference's error class as a base of ours
after `sedpack_hpc.adopt_reference_errors()` (with a stand-in
`sedpack.io.errors`, so that no reference is needed)."""
import asyncio
import importlib.util
import inspect
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sedpack_hpc
from sedpack_hpc import Attribute, Dataset, DatasetStructure, Metadata

# The reference's keyword arguments (google/sedpack, src/sedpack/io/dataset_iteration.py
# and dataset_writing.py), in its order.
REFERENCE_SIGNATURES = {
    "as_numpy_iterator_concurrent": ["split", "process_record", "shards", "custom_metadata_type_limit",
                                     "shard_filter", "repeat", "file_parallelism", "shuffle"],
    "as_numpy_iterator_rust": ["split", "process_record", "shards", "shard_filter", "repeat", "file_parallelism",
                               "shuffle"],
    "as_numpy_iterator_rust_batched": ["split", "process_batch", "shards", "shard_filter", "repeat", "batch_size",
                                       "file_parallelism", "shuffle"],
    "as_numpy_iterator_async": ["split", "process_record", "shards", "shard_filter", "repeat", "file_parallelism",
                                "shuffle"],
    "as_numpy_common": ["split", "shards", "custom_metadata_type_limit", "shard_filter", "repeat", "shuffle"],
    "write_multiprocessing": ["feed_writer", "custom_arguments", "custom_kwarguments", "consistency_check",
                              "single_process"],
}


def make_dataset(path, examples=20, per_shard=4, shard_file_type="fb", splits=("train",)):
    ds = Dataset.create(path, metadata=Metadata(description="dropin", custom_metadata={"a": 1, "b": 2}),
                        dataset_structure=DatasetStructure(
                            saved_data_description=[Attribute(name="x", dtype="int32", shape=(2,)),
                                                    Attribute(name="s", dtype="str", shape=())],
                            compression="", examples_per_shard=per_shard, shard_file_type=shard_file_type))
    with ds.filler() as f:
        for split in splits:
            for k in range(examples):
                f.write_example(values={"x": np.array([k, -k], np.int32), "s": f"#{k}"}, split=split,
                                custom_metadata={"group": k // (2 * per_shard)})
    return Dataset(path)


def xs(examples):
    return [int(e["x"][0]) for e in examples]


@pytest.fixture()
def ds(tmp_path):
    return make_dataset(tmp_path / "ds")


def test_the_reference_signatures(ds):
    for name, keywords in REFERENCE_SIGNATURES.items():
        params = inspect.signature(getattr(Dataset, name)).parameters
        got = [p for p in params if p != "self"]
        assert got == keywords, name
        assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in keywords), name
    params = inspect.signature(Dataset.shard_paths_dataset).parameters
    assert list(params) == ["self", "split", "shards", "custom_metadata_type_limit", "shard_filter"]
    assert list(inspect.signature(Dataset.shard_info_iterator).parameters) == ["self", "split"]


def test_concurrent_and_rust_are_the_threaded_iterator(ds):
    want = xs(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False))
    assert want == list(range(20))
    for name in ("as_numpy_iterator_concurrent", "as_numpy_iterator_rust"):
        it = getattr(ds, name)
        assert xs(it(split="train", shuffle=0, repeat=False, file_parallelism=3)) == want, name
        assert xs(it(split="train", shuffle=0, repeat=False, shards=2)) == want[:8], name
        assert xs(it(split="train", shuffle=0, repeat=False, shards=0)) == want, name  # 0: no limit, as there
        only_second = it(split="train", shuffle=0, repeat=False,
                         shard_filter=lambda s: s.custom_metadata == {"group": 1})
        assert xs(only_second) == list(range(8, 16)), name
        doubled = it(split="train", shuffle=0, repeat=False, process_record=lambda e: 2 * int(e["x"][0]))
        assert list(doubled) == [2 * x for x in want], name
        shuffled = xs(it(split="train", shuffle=10, repeat=False, file_parallelism=2))
        assert sorted(shuffled) == want, name
        repeated = it(split="train", shuffle=0, repeat=True)
        assert [int(next(repeated)["x"][0]) for _ in range(25)] == want + want[:5], name
    limited = ds.as_numpy_iterator_concurrent(split="train", shuffle=0, repeat=False, custom_metadata_type_limit=1)
    assert xs(limited) == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19]


def test_rust_batched_is_the_batched_iterator(ds):
    batches = list(ds.as_numpy_iterator_rust_batched(split="train", shuffle=0, repeat=False, batch_size=8,
                                                     file_parallelism=2))
    assert [b["x"].shape for b in batches] == [(8, 2), (8, 2), (4, 2)]
    assert batches[2]["s"] == ["#16", "#17", "#18", "#19"]
    sums = ds.as_numpy_iterator_rust_batched(split="train", shuffle=0, repeat=False, batch_size=10,
                                             process_batch=lambda b: int(b["x"][:, 0].sum()))
    assert list(sums) == [45, 145]


def test_async_iterator(ds):
    async def collect(**kwargs):
        return [e async for e in ds.as_numpy_iterator_async(split="train", repeat=False, **kwargs)]

    assert xs(asyncio.run(collect(shuffle=0))) == list(range(20))
    assert sorted(xs(asyncio.run(collect(shuffle=100, file_parallelism=2)))) == list(range(20))
    assert xs(asyncio.run(collect(shuffle=0, shards=1))) == [0, 1, 2, 3]

    async def later(e):
        await asyncio.sleep(0)
        return int(e["x"][0]) + 100

    assert asyncio.run(collect(shuffle=0, process_record=later)) == list(range(100, 120))
    assert asyncio.run(collect(shuffle=0, process_record=lambda e: e["s"]))[:2] == ["#0", "#1"]


def test_shard_info_iterator(tmp_path):
    ds = make_dataset(tmp_path / "ds", splits=("train", "test"))
    train = ds.shard_info_iterator("train")
    assert len(train) == train.number_of_shards() == 5
    shards = list(train)
    assert len(shards) == 5 and list(train) == shards  # reentrant
    assert [s.number_of_examples for s in shards] == [4] * 5
    assert [s.custom_metadata for s in shards] == [{"group": g} for g in (0, 0, 1, 1, 2)]
    assert all((ds.path / s.file_infos[0].file_path).is_file() for s in shards)
    everything = ds.shard_info_iterator(None)
    assert len(everything) == 10 and len(list(everything)) == 10
    assert next(iter(ds.shard_info_iterator(split=None))) == shards[0]
    with pytest.raises(ValueError, match="There is no shard in holdout"):
        ds.shard_info_iterator("holdout")


def test_shard_paths_and_the_common_stream(ds):
    paths = ds.shard_paths_dataset("train")
    assert len(paths) == 5 and all(isinstance(p, str) and os.path.isfile(p) for p in paths)
    assert ds.shard_paths_dataset("train", shards=2) == paths[:2]
    assert ds.shard_paths_dataset("train", custom_metadata_type_limit=1) == [paths[0], paths[2], paths[4]]
    assert ds.shard_paths_dataset("train", shard_filter=lambda s: s.custom_metadata["group"] == 2) == [paths[4]]
    with pytest.raises(ValueError, match="empty"):
        ds.shard_paths_dataset("train", shard_filter=lambda s: False)
    assert list(ds.as_numpy_common(split="train", shuffle=0, repeat=False)) == paths
    assert sorted(ds.as_numpy_common(split="train", shuffle=1, repeat=False)) == sorted(paths)
    stream = ds.as_numpy_common(split="train", shuffle=0, repeat=True)
    assert [next(stream) for _ in range(7)] == paths + paths[:2]


def feed(filler, first, count, split="train"):
    with filler as f:
        for k in range(first, first + count):
            f.write_example(values={"x": np.array([k, -k], np.int32), "s": f"#{k}"}, split=split)
    return count


def feed_and_fail(filler, first, count):
    feed(filler, first, count)
    raise RuntimeError("worker failed")


@pytest.mark.parametrize("single_process", [True, False])
def test_write_multiprocessing(tmp_path, single_process):
    ds = make_dataset(tmp_path / "ds", examples=0)
    results = ds.write_multiprocessing(feed_writer=feed, custom_arguments=[(0, 5), (5, 7), (12, 3)],
                                       custom_kwarguments=[{}, {"split": "train"}, {"split": "test"}],
                                       single_process=single_process)
    assert results == [5, 7, 3]
    assert ds.dataset_info.splits["train"].number_of_examples == 12
    assert sorted(xs(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False))) == list(range(12))
    assert xs(ds.as_numpy_iterator(split="test", shuffle=0, repeat=False)) == [12, 13, 14]
    Dataset(ds.path).check()
    assert ds.write_config().file_path == pathlib.Path("dataset_info.json")  # nothing new: rewritten as it was
    assert ds.write_config(None) is not None and Dataset(ds.path).dataset_info == ds.dataset_info
    with pytest.raises(ValueError, match="same length"):
        ds.write_multiprocessing(feed_writer=feed, custom_arguments=[(0, 1)], custom_kwarguments=[])


def test_write_multiprocessing_commits_nothing_when_a_worker_fails(tmp_path):
    ds = make_dataset(tmp_path / "ds", examples=4)
    before = ds.dataset_info
    with pytest.raises(RuntimeError, match="worker failed"):
        ds.write_multiprocessing(feed_writer=feed_and_fail, custom_arguments=[(0, 5)], single_process=True)
    assert Dataset(ds.path).dataset_info == before


def test_private_names_of_the_reference(ds):
    assert ds._dataset_info == ds.dataset_info
    assert ds._dataset_info.splits["train"].number_of_examples == 20
    assert Dataset._get_config_path(ds.path) == ds.path / "dataset_info.json"
    assert ds._get_config_path(ds.path, relative=True) == pathlib.Path("dataset_info.json")


def test_value_equality(tmp_path):
    ds = make_dataset(tmp_path / "ds")
    again = Dataset(ds.path)
    assert ds.dataset_info == again.dataset_info
    assert ds.dataset_info is not again.dataset_info
    other = make_dataset(tmp_path / "other", examples=3)
    assert ds.dataset_info != other.dataset_info
    assert ds.metadata == other.metadata and ds.dataset_structure == other.dataset_structure
    # Field-wise as pydantic: dicts compare by content, not by key order.
    assert Metadata(custom_metadata={"a": 1, "b": 2}) == Metadata(custom_metadata={"b": 2, "a": 1})
    assert Metadata(description="x") != Metadata(description="y")
    assert Attribute(name="a", dtype="uint8", shape=(2,)) == Attribute(name="a", dtype="uint8", shape=[2])
    assert Attribute(name="a", dtype="uint8", shape=(2,)) != Attribute(name="a", dtype="uint8", shape=(3,))
    assert DatasetStructure(compression="LZ4") != DatasetStructure(compression="ZSTD")
    first, second = list(ds.shard_info_iterator("train"))[:2]
    assert first == list(again.shard_info_iterator("train"))[0]
    assert first != second
    assert first.file_infos[0] == list(again.shard_info_iterator("train"))[0].file_infos[0]
    assert first.file_infos[0] != second.file_infos[0]
    split = ds.dataset_info.splits["train"]
    assert split == again.dataset_info.splits["train"] and split != other.dataset_info.splits["train"]
    # Another class is never equal (pydantic compares the class too), and the
    # records are unhashable as mutable pydantic models are.
    assert first != first.model_dump() and ds.metadata != ds.metadata.model_dump()
    for record in (first, first.file_infos[0], split, ds.dataset_info, ds.metadata, ds.dataset_structure):
        with pytest.raises(TypeError):
            hash(record)


def test_dataset_info_is_a_copy(ds):
    info = ds.dataset_info
    info.dataset_structure.compression = "GZIP"  # changes the copy only
    assert ds.dataset_info.dataset_structure.compression == ""


def test_check_names_files_by_their_full_path(ds):
    config = ds._get_config_path(ds.path)
    expected = ds.current_metadata_checksums()
    with open(config, "a") as f:
        f.write("\n")
    with pytest.raises(ValueError) as err:
        ds.check(hash_checksums_values=expected)
    assert str(config) in str(err.value)


# ---- The reference's error class ----------------------------------------------------

STAND_IN_ERRORS = '''
class DatasetExistsError(FileExistsError):
    def __init__(self, dataset_path):
        super().__init__(f"exists: {dataset_path}")
        self.dataset_path = dataset_path
'''

PROBE = '''
import json, pathlib, sys
order, root = sys.argv[1], pathlib.Path(sys.argv[2])
finders = list(sys.meta_path)
if order == "reference-first":
    import sedpack.io.errors as reference
    import sedpack_hpc
    first = sedpack_hpc.DatasetExistsError
    adopted = sedpack_hpc.adopt_reference_errors()
elif order == "ours-first":
    import sedpack_hpc
    first = sedpack_hpc.DatasetExistsError
    adopted = sedpack_hpc.adopt_reference_errors()  # imports the reference
    import sedpack.io.errors as reference
elif order == "not-asked":
    import sedpack_hpc
    first = sedpack_hpc.DatasetExistsError
    import sedpack.io.errors as reference
    adopted = None
else:
    import sedpack_hpc
    first = sedpack_hpc.DatasetExistsError
    reference = None
    adopted = sedpack_hpc.adopt_reference_errors()
again = sedpack_hpc.adopt_reference_errors() if adopted is not None else None
kind = {"saved_data_description": [{"name": "x", "dtype": "uint8", "shape": [1]}]}
sedpack_hpc.Dataset.create(root / "ds", metadata={}, dataset_structure=kind)
out = {"finders_added": len(sys.meta_path) - len(finders),
       "adopted": adopted is sedpack_hpc.DatasetExistsError if adopted is not None else None,
       "idempotent": again is adopted,
       "extension": sedpack_hpc._sedpack_hpc.DatasetExistsError is sedpack_hpc.DatasetExistsError,
       "bases": [c.__module__ + "." + c.__name__ for c in sedpack_hpc.DatasetExistsError.__mro__[1:3]]}
try:
    sedpack_hpc.Dataset.create(root / "ds", metadata={}, dataset_structure=kind)
except FileExistsError as e:
    out["reference"] = reference is not None and isinstance(e, reference.DatasetExistsError)
    out["first"] = isinstance(e, first)
    out["current"] = type(e) is sedpack_hpc.DatasetExistsError
    out["message"] = str(e)
print(json.dumps(out))
'''


def probe(tmp_path, order, with_stand_in):
    site = tmp_path / "site"
    if with_stand_in:
        (site / "sedpack" / "io").mkdir(parents=True)
        (site / "sedpack" / "__init__.py").write_text("")
        (site / "sedpack" / "io" / "__init__.py").write_text("")
        (site / "sedpack" / "io" / "errors.py").write_text(textwrap.dedent(STAND_IN_ERRORS))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + [p for p in sys.path if p])
    run = subprocess.run([sys.executable, "-c", PROBE, order, str(tmp_path)], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("order", ["reference-first", "ours-first"])
def test_the_reference_error_class_catches_ours(tmp_path, order):
    out = probe(tmp_path, order, with_stand_in=True)
    assert out["reference"] and out["first"] and out["current"], out
    assert out["adopted"] and out["idempotent"] and out["extension"], out
    # Our message (naming the dataset), not the reference's constructor's.
    assert "exists: " not in out["message"] and "ds" in out["message"], out
    assert out["finders_added"] == 0, out  # no import hook
    assert out["bases"] == ["sedpack_hpc.DatasetExistsError", "sedpack.io.errors.DatasetExistsError"], out


def test_the_reference_error_class_is_adopted_only_when_asked(tmp_path):
    out = probe(tmp_path, "not-asked", with_stand_in=True)
    assert not out["reference"] and out["first"] and out["current"] and out["finders_added"] == 0, out
    assert out["bases"] == ["builtins.FileExistsError", "builtins.OSError"], out


@pytest.mark.skipif(importlib.util.find_spec("sedpack") is not None, reason="a package named sedpack is installed")
def test_without_the_reference_nothing_changes(tmp_path):
    out = probe(tmp_path, "no-reference", with_stand_in=False)
    assert out["adopted"] is None, out  # adopt_reference_errors() returned None: nothing to adopt
    assert out["first"] and out["current"] and out["finders_added"] == 0, out
    assert out["bases"] == ["builtins.FileExistsError", "builtins.OSError"], out
