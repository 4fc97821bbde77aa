# SPDX-License-Identifier: Apache-2.0
"""sedpack_hpc: the sedpack-hpc C++ reader and writer, with the names of the
reference's `sedpack.io` (Dataset, Metadata, DatasetStructure, Attribute).

Everything is implemented in the C++ extension `_sedpack_hpc`; this file
re-exports it. `Dataset` here is the extension's class with the reference's
other Dataset names added (dropin.py) and `as_tfdataset` (tf.py, TensorFlow
imported when called). The torch datasets are in `sedpack_hpc.torch`.
Importing the package changes nothing else: making `DatasetExistsError` a
subclass of the reference's error class too is the explicit call
`adopt_reference_errors()` (docs/python.md).
"""
from __future__ import annotations

import os
from typing import Any, Mapping

from . import _sedpack_hpc as _ext
from . import dropin as _dropin
from . import tf as _tf
from ._sedpack_hpc import (HAVE_MPI, Attribute, CorruptionError, DatasetExistsError, DatasetFiller, DatasetInfo,
                           DatasetStructure, ElasticIterator, FileInfo, Metadata, NumpyIterator, PeerAbortedError,
                           ShardInfo, ShardListInfo, __version__, elastic_part_size, merge_elastic_states,
                           slurm_job_id)
from .dropin import ShardInfoIterator, adopt_reference_errors

if HAVE_MPI:
    from ._sedpack_hpc import (DistributedFiller, distributed_check, distributed_filler, mpi_barrier, mpi_rank,
                               mpi_size)

__all__ = [
    "Attribute",
    "CorruptionError",
    "Dataset",
    "DatasetExistsError",
    "DatasetFiller",
    "DatasetInfo",
    "DatasetStructure",
    "ElasticIterator",
    "FileInfo",
    "HAVE_MPI",
    "Metadata",
    "NumpyIterator",
    "PeerAbortedError",
    "ShardInfo",
    "ShardInfoIterator",
    "ShardListInfo",
    "adopt_reference_errors",
    "elastic_part_size",
    "merge_elastic_states",
    "slurm_job_id",
]
if HAVE_MPI:
    __all__ += ["DistributedFiller", "distributed_check", "distributed_filler", "mpi_barrier", "mpi_rank", "mpi_size"]


class Dataset(_ext.Dataset):
    """A sedpack dataset on disk: its metadata, and reading and writing it.

    `Dataset(path)` opens an existing dataset, `Dataset.create(path, metadata,
    dataset_structure)` makes a new one. This is the extension's Dataset
    (`_sedpack_hpc.Dataset`: filler, the iterators, get, check, report, ...)
    with the rest of the reference's `sedpack.io.Dataset` names, written in
    Python over it: the iterator variants, shard_info_iterator,
    shard_paths_dataset, as_numpy_common, write_multiprocessing,
    as_tfdataset, and the private names the reference's tests use. A Dataset
    pickles (by path).
    """

    __slots__ = ()

    @classmethod
    def create(cls, path: str | os.PathLike[str], metadata: Metadata | Mapping[str, Any] | Any = None,
               dataset_structure: DatasetStructure | Mapping[str, Any] | Any = None, *,
               exist_ok: bool = False) -> Dataset:
        """Create an empty dataset, to be filled with `filler()` or
        `write_multiprocessing()`.

        Args:
            path: the directory to create it in (made if missing).
            metadata: a Metadata, a dict of its fields, or any object with
                them (the reference's pydantic model too); None: the defaults.
            dataset_structure: how examples are stored (DatasetStructure,
                dict or object as for metadata), with at least one attribute.
            exist_ok: open a dataset already at `path` instead of failing, if
                its structure is the one given (the metadata is not compared).

        Returns:
            The new (or, with exist_ok, existing) dataset, opened.

        Raises:
            DatasetExistsError: a dataset exists at `path` (without exist_ok).
            ValueError: an invalid field (named), or with exist_ok an
                existing dataset of another structure.
        """
        return cls(_ext.Dataset.create(path, metadata, dataset_structure, exist_ok=exist_ok))

    # The reference's iterator variants (all over the one threaded reader).
    as_numpy_iterator_concurrent = _dropin.as_numpy_iterator_concurrent
    as_numpy_iterator_rust = _dropin.as_numpy_iterator_rust
    as_numpy_iterator_rust_batched = _dropin.as_numpy_iterator_rust_batched
    as_numpy_iterator_async = _dropin.as_numpy_iterator_async
    # Shards and their paths.
    shard_info_iterator = _dropin.shard_info_iterator
    shard_paths_dataset = _dropin.shard_paths_dataset
    as_numpy_common = _dropin.as_numpy_common
    # Writing from several processes.
    write_multiprocessing = _dropin.write_multiprocessing
    # TensorFlow (imported when called).
    as_tfdataset = _tf.as_tfdataset
    # Names the reference's own tests reach.
    _get_config_path = staticmethod(_dropin._get_config_path)
    _dataset_info = property(_dropin._dataset_info, doc="The reference's name of dataset_info.")
