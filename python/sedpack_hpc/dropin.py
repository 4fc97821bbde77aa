# SPDX-License-Identifier: Apache-2.0
"""The rest of the reference's `sedpack.io.Dataset` API, so that code written
for the reference runs unchanged: its iterator variants (`_concurrent`,
`_rust`, `_rust_batched`, `_async`) over the one threaded reader,
`shard_info_iterator`, `shard_paths_dataset`, `as_numpy_common`,
`write_multiprocessing`, and the private names the reference's own tests
reach (`_dataset_info`, `_get_config_path`). They are methods of
`sedpack_hpc.Dataset` (the package's subclass of the extension's class,
defined in `__init__.py`), written here as plain functions of `self`.

`adopt_reference_errors()` makes `sedpack_hpc.DatasetExistsError` a subclass
of the reference's `sedpack.io.errors.DatasetExistsError` too, so that
`except` clauses written for the reference catch ours. It is an explicit
call: importing sedpack_hpc never imports the reference (which pulls in
pydantic and tries TensorFlow) and changes nothing about its classes.
"""
from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import os
import random
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any, AsyncIterator, Callable, Iterator, Optional

from . import _sedpack_hpc as _ext

_CPUS = os.cpu_count() or 1
_REFERENCE_ERRORS = "sedpack.io.errors"
_ShardFilter = Optional[Callable[[_ext.ShardInfo], bool]]
_Process = Optional[Callable[[dict[str, Any]], Any]]


def _prefetch(file_parallelism):
    """The reference decodes `file_parallelism` shards at once; so many are
    read and decoded ahead here (at least one)."""
    return max(1, int(file_parallelism or 1))


# ---- Iterator variants ---------------------------------------------------------------


def as_numpy_iterator_concurrent(self: _ext.Dataset, *, split: str, process_record: _Process = None,
                                 shards: int | None = None, custom_metadata_type_limit: int | None = None,
                                 shard_filter: _ShardFilter = None, repeat: bool = True,
                                 file_parallelism: int = _CPUS, shuffle: int = 1000) -> _ext.NumpyIterator:
    """The reference's signature over `as_numpy_iterator` (already threaded):
    `file_parallelism` shards are read and decoded ahead; `shuffle` is the
    example shuffle buffer as in `as_numpy_iterator`."""
    return self.as_numpy_iterator(split=split, process_record=process_record, shards=shards,
                                  custom_metadata_type_limit=custom_metadata_type_limit, shard_filter=shard_filter,
                                  repeat=repeat, shuffle=shuffle, prefetch_shards=_prefetch(file_parallelism))


def as_numpy_iterator_rust(self: _ext.Dataset, *, split: str, process_record: _Process = None,
                           shards: int | None = None, shard_filter: _ShardFilter = None, repeat: bool = True,
                           file_parallelism: int = _CPUS, shuffle: int = 1000) -> _ext.NumpyIterator:
    """The reference's Rust-backed iterator: here the same threaded C++ reader
    as `as_numpy_iterator_concurrent` (every argument honoured likewise)."""
    return as_numpy_iterator_concurrent(self, split=split, process_record=process_record, shards=shards,
                                        shard_filter=shard_filter, repeat=repeat,
                                        file_parallelism=file_parallelism, shuffle=shuffle)


def as_numpy_iterator_rust_batched(self: _ext.Dataset, *, split: str, process_batch: _Process = None,
                                   shards: int | None = None, shard_filter: _ShardFilter = None,
                                   repeat: bool = True, batch_size: int = 1, file_parallelism: int = _CPUS,
                                   shuffle: int = 1000) -> _ext.NumpyIterator:
    """The reference's batched Rust iterator over `as_numpy_iterator_batched`
    (numeric attributes stacked, the others as lists)."""
    return self.as_numpy_iterator_batched(split=split, batch_size=batch_size, process_batch=process_batch,
                                          shards=shards, shard_filter=shard_filter, repeat=repeat, shuffle=shuffle,
                                          prefetch_shards=_prefetch(file_parallelism))


# Examples taken from the reader per hop to the executor thread: one hop per
# example would cost more than reading it; the reader runs ahead meanwhile.
_ASYNC_CHUNK = 64


async def as_numpy_iterator_async(self: _ext.Dataset, *, split: str, process_record: Callable[[Any], Any] | None = None,
                                  shards: int | None = None, shard_filter: _ShardFilter = None,
                                  repeat: bool = True, file_parallelism: int = _CPUS,
                                  shuffle: int = 1000) -> AsyncIterator[Any]:
    """The reference's async generator. Examples are taken from the threaded
    reader on an executor thread, so the event loop never waits for a read;
    `process_record` may be a coroutine function (its result is awaited), as
    asyncstdlib.map allows there. tfrec datasets are read too (the
    reference refuses them here)."""
    import asyncio  # imported when used: it costs more than the rest of the package's Python
    import inspect

    examples = self.as_numpy_iterator(split=split, shards=shards, shard_filter=shard_filter, repeat=repeat,
                                      shuffle=shuffle, prefetch_shards=_prefetch(file_parallelism))
    loop = asyncio.get_running_loop()
    while True:
        chunk = await loop.run_in_executor(None, lambda: list(itertools.islice(examples, _ASYNC_CHUNK)))
        if not chunk:
            return
        for example in chunk:
            if process_record is not None:
                example = process_record(example)
                if inspect.isawaitable(example):
                    example = await example
            yield example


# ---- Shards -----------------------------------------------------------------------------


class ShardInfoIterator:
    """The reference's ShardInfoIterator over one split (every split for
    None): `len()`, `number_of_shards()`, and reentrant iteration of the
    ShardInfo records (each shards_list.json checked against its recorded
    hash as it is read)."""

    def __init__(self, dataset: _ext.Dataset, split: str | None) -> None:
        self._dataset = dataset
        self.split = split
        self._iterator: Iterator[_ext.ShardInfo] = iter(())

    def number_of_shards(self) -> int:
        """The number of shards of the split (of all splits for None), as
        dataset_info.json records it."""
        splits = self._dataset.dataset_info.splits
        if self.split is None:
            return sum(info.number_of_shards for info in splits.values())
        info = splits.get(self.split)
        return info.number_of_shards if info is not None else 0

    def __len__(self) -> int:
        return self.number_of_shards()

    def __iter__(self) -> Iterator[_ext.ShardInfo]:
        self._iterator = iter(self._dataset._shard_infos(self.split))
        return self._iterator

    def __next__(self) -> _ext.ShardInfo:
        return next(self._iterator)


def shard_info_iterator(self: _ext.Dataset, split: str | None) -> ShardInfoIterator:
    """Every ShardInfo of `split` (of all splits for None) in the reference's
    order. ValueError for a split the dataset does not have."""
    if split and split not in self.dataset_info.splits:
        raise ValueError(f"There is no shard in {split}.")
    return ShardInfoIterator(self, split)


def _selected_shards(dataset, split, shards, custom_metadata_type_limit, shard_filter):
    """The reference's selection, in its order: `shard_filter`, then the first
    `custom_metadata_type_limit` shards of each custom_metadata, then the first
    `shards` (0 and None: no limit)."""
    selected = list(dataset._shard_infos(split))
    if shard_filter:
        selected = [s for s in selected if shard_filter(s)]
    if custom_metadata_type_limit:
        counts = {}
        kept = []
        for s in selected:
            key = json.dumps(s.custom_metadata, sort_keys=True)
            counts[key] = counts.get(key, 0) + 1
            if counts[key] <= custom_metadata_type_limit:
                kept.append(s)
        selected = kept
    if shards:
        selected = selected[:shards]
    return selected


def shard_paths_dataset(self: _ext.Dataset, split: str, shards: int | None = None,
                        custom_metadata_type_limit: int | None = None, shard_filter: _ShardFilter = None) -> list[str]:
    """The full paths (str) of the shards `as_numpy_iterator` would read with
    these arguments and shuffle=0. ValueError when none is left."""
    selected = _selected_shards(self, split, shards, custom_metadata_type_limit, shard_filter)
    if not selected:
        raise ValueError("The list of shards is empty. Try less restrictive filtering.")
    return [str(self.path / s.file_infos[0].file_path) for s in selected]


def as_numpy_common(self: _ext.Dataset, *, split: str, shards: int | None = None,
                    custom_metadata_type_limit: int | None = None, shard_filter: _ShardFilter = None,
                    repeat: bool = True, shuffle: int = 1000) -> Iterator[str]:
    """The reference's shard path stream: `shard_paths_dataset`, cycled with
    `repeat`, in a random order with `shuffle` (reshuffled on every pass)."""
    paths = shard_paths_dataset(self, split=split, shards=shards, custom_metadata_type_limit=custom_metadata_type_limit,
                                     shard_filter=shard_filter)

    def passes() -> Iterator[str]:
        while True:
            order = list(paths)
            if shuffle:
                random.shuffle(order)
            yield from order
            if not repeat:
                return

    return passes()


# ---- Writing from several processes -------------------------------------------------


def _write_part(job):
    """One worker of write_multiprocessing: its own filler in its own subfolder
    of every split, committed by the caller (auto_update_dataset=False)."""
    feed_writer, dataset, args, kwargs = job
    filler = dataset.filler(relative_path_from_split=uuid.uuid4().hex, auto_update_dataset=False)
    result = feed_writer(filler, *args, **kwargs)
    return filler.get_updated_infos(), result


def write_multiprocessing(self: _ext.Dataset, *, feed_writer: Callable[..., Any], custom_arguments: list[Any],
                          custom_kwarguments: list[dict[str, Any]] | None = None, consistency_check: bool = True,
                          single_process: bool = False) -> list[Any]:
    """The reference's write_multiprocessing: `feed_writer(filler, *args,
    **kwargs)` for each entry of `custom_arguments` in a pool of that many
    processes (`single_process`: one after the other here), each filler in a
    subfolder of its own; then one commit of everything they wrote (nothing
    if a worker failed), `check()` with `consistency_check`, and the list of
    `feed_writer`'s results. `feed_writer` and its arguments are pickled for
    the workers as in the reference; the dataset is reopened there by path."""
    if custom_kwarguments is None:
        custom_kwarguments = [{} for _ in custom_arguments]
    if len(custom_arguments) != len(custom_kwarguments):
        raise ValueError(f"write_multiprocessing: custom_arguments and custom_kwarguments must have the same length, "
                         f"got {len(custom_arguments)} and {len(custom_kwarguments)}")
    jobs = [(feed_writer, self, args, kwargs) for args, kwargs in zip(custom_arguments, custom_kwarguments)]
    if single_process:
        outputs = [_write_part(job) for job in jobs]
    else:
        import multiprocessing

        with multiprocessing.Pool(len(jobs)) as pool:
            outputs = pool.map(_write_part, jobs)
    self.write_config([info for infos, _ in outputs for info in infos])
    if consistency_check:
        self.check()
    return [result for _, result in outputs]


# ---- Names the reference's tests reach ------------------------------------------------


def _get_config_path(path: str | os.PathLike[str], relative: bool = False) -> Path:
    """The reference's DatasetBase._get_config_path: `path`/dataset_info.json
    (relative: dataset_info.json alone)."""
    name = Path("dataset_info.json")
    return name if relative else Path(path) / name


def _dataset_info(self: _ext.Dataset) -> _ext.DatasetInfo:
    """The reference's name of dataset_info."""
    return self.dataset_info


# ---- The reference's error classes ------------------------------------------------------


def _own_message(self, *args):
    # The reference's __init__ takes the dataset path and writes its own
    # message; ours are raised with the library's message.
    FileExistsError.__init__(self, *args)


def _adopt(module: ModuleType) -> type | None:
    """Raise, from now on, as DatasetExistsError a subclass of ours and of
    `module.DatasetExistsError` (the only error class the reference defines;
    it raises it from Dataset.create). Python cannot add the reference's class
    to the bases of ours (its instances are larger), hence the new class.
    Returns the class raised from now on."""
    theirs = getattr(module, "DatasetExistsError", None)
    ours = _ext.DatasetExistsError
    if not isinstance(theirs, type) or not issubclass(theirs, FileExistsError):
        return None
    if issubclass(ours, theirs):
        return ours  # adopted before
    both = type("DatasetExistsError", (ours, theirs), {
        "__init__": _own_message,
        "__module__": ours.__module__,
        "__qualname__": "DatasetExistsError",
        "__doc__": f"{ours.__doc__ or 'The dataset exists.'} Also a {theirs.__module__}.DatasetExistsError.",
    })
    _ext._set_exists_error(both)
    package = sys.modules.get(__name__.rpartition(".")[0])
    if package is not None and getattr(package, "DatasetExistsError", None) is ours:
        setattr(package, "DatasetExistsError", both)
    return both


def adopt_reference_errors() -> type | None:
    """Make `sedpack_hpc.DatasetExistsError` also a subclass of the
    reference's `sedpack.io.errors.DatasetExistsError`, so that `except`
    clauses written for the reference catch what `Dataset.create` raises.

    Imports `sedpack.io.errors` if it is not loaded yet (which imports the
    reference's package: pydantic, and TensorFlow if installed). From then on
    `sedpack_hpc.DatasetExistsError` (and `_sedpack_hpc.DatasetExistsError`)
    is a new subclass of both classes, raised with our message; handlers
    holding the previous class keep catching it. Calling it again changes
    nothing.

    Returns:
        The class raised from now on, or None when no reference is installed
        (nothing is changed then).
    """
    module = sys.modules.get(_REFERENCE_ERRORS)
    if module is None:
        try:
            installed = importlib.util.find_spec("sedpack") is not None
        except (ImportError, ValueError):
            installed = False
        if not installed:
            return None
        module = importlib.import_module(_REFERENCE_ERRORS)
    return _adopt(module)
