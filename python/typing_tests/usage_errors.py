# SPDX-License-Identifier: Apache-2.0
"""Mistakes the types catch: `mypy --strict` (check_stubs.py) must report an
error on every line marked `# error` and on no other line. Never run."""
from sedpack_hpc import Attribute, Dataset, DatasetStructure


def mistakes(ds: Dataset) -> None:
    ds.num_examples(3)  # error
    ds.as_numpy_iterator("train")  # error
    ds.get("train", "7")  # error
    n: str = ds.dataset_info.splits["train"].number_of_shards  # error
    ds.filler(job_id=5)  # error
    Dataset(42)  # error
    ds.no_such_method()  # error
    shape: list[int] = Attribute(name="x", dtype="uint8", shape=(1,)).shape  # error
    DatasetStructure().examples_per_shard = "many"  # error
    print(n, shape)
