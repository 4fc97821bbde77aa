# SPDX-License-Identifier: Apache-2.0
"""A typed use of sedpack_hpc, checked by `mypy --strict` (check_stubs.py):
the package's annotations and the extension's stub must accept it as it is.
Never run; only type-checked."""
import pathlib
from typing import Any

import numpy as np

import sedpack_hpc
from sedpack_hpc import Attribute, Dataset, DatasetStructure, Metadata


def write(root: pathlib.Path) -> Dataset:
    structure = DatasetStructure(saved_data_description=[Attribute(name="x", dtype="float32", shape=(4,))],
                                 compression="ZSTD", examples_per_shard=16)
    ds = Dataset.create(root / "ds", metadata=Metadata(description="typed"), dataset_structure=structure)
    with ds.filler(concurrency=2) as f:
        for i in range(10):
            f.write_example(values={"x": np.full(4, i, np.float32)}, split="train", custom_metadata={"i": i // 5})
        written: int = f.examples_written
    assert written == 10
    return ds


def read(ds: Dataset) -> float:
    total = 0.0
    for example in ds.as_numpy_iterator(split="train", shuffle=0, repeat=False,
                                        shard_filter=lambda s: s.number_of_examples > 0):
        total += float(example["x"].sum())
    batches = ds.as_numpy_iterator_batched(split="train", batch_size=4, repeat=False, seed=1)
    seed: int = batches.seed
    elastic = ds.as_numpy_iterator_elastic(split="train", seed=seed)
    state: dict[str, Any] = elastic.state_dict()
    elastic.load_state_dict(state)
    merged = sedpack_hpc.merge_elastic_states([state])
    one: dict[str, Any] = ds.get("train", 0)
    paths: list[str] = ds.shard_paths_dataset("train")
    return total + len(merged) + len(one) + len(paths)


def inspect_dataset(ds: Dataset) -> str:
    info = ds.dataset_info
    counts = {name: split.number_of_examples for name, split in info.splits.items()}
    shape: tuple[int, ...] = ds.dataset_structure.attribute_by_name("x").shape
    checksums = ds.current_metadata_checksums()
    ds.check(hash_checksums_values=checksums)
    job: str | None = sedpack_hpc.slurm_job_id()
    try:
        Dataset.create(ds.path, metadata={}, dataset_structure={})
    except sedpack_hpc.DatasetExistsError:
        pass
    return f"{ds!r} {counts} {shape} {job} {ds.path.name} {ds.metadata.description}"
