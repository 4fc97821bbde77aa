# SPDX-License-Identifier: Apache-2.0
"""The rest of the reference's `sedpack.io.Dataset` API, so that code written
for the reference runs unchanged: its iterator variants (`_concurrent`,
`_rust`, `_rust_batched`, `_async`) over the one threaded reader,
`shard_info_iterator`, `shard_paths_dataset`, `as_numpy_common`,
`write_multiprocessing`, and the private names the reference's own tests
reach (`_dataset_info`, `_get_config_path`).

It also makes `sedpack_hpc.DatasetExistsError` a subclass of the reference's
`sedpack.io.errors.DatasetExistsError` whenever that module is loaded, so that
`except` clauses written for the reference catch ours. The reference is never
imported from here (importing it pulls in pydantic and tries TensorFlow): its
class is adopted when it is already loaded, or at the moment something else
imports it, and only if a package named `sedpack` is installed at all.
"""
import importlib.util
import itertools
import json
import os
import random
import sys
import uuid
from pathlib import Path

from . import _sedpack_hpc as _ext
from ._sedpack_hpc import Dataset

_CPUS = os.cpu_count() or 1
_REFERENCE_ERRORS = "sedpack.io.errors"


def _prefetch(file_parallelism):
    """The reference decodes `file_parallelism` shards at once; so many are
    read and decoded ahead here (at least one)."""
    return max(1, int(file_parallelism or 1))


# ---- Iterator variants ---------------------------------------------------------------


def as_numpy_iterator_concurrent(self, *, split, process_record=None, shards=None, custom_metadata_type_limit=None,
                                 shard_filter=None, repeat=True, file_parallelism=_CPUS, shuffle=1000):
    """The reference's signature over `as_numpy_iterator` (already threaded):
    `file_parallelism` shards are read and decoded ahead; `shuffle` is the
    example shuffle buffer as in `as_numpy_iterator`."""
    return self.as_numpy_iterator(split=split, process_record=process_record, shards=shards,
                                  custom_metadata_type_limit=custom_metadata_type_limit, shard_filter=shard_filter,
                                  repeat=repeat, shuffle=shuffle, prefetch_shards=_prefetch(file_parallelism))


def as_numpy_iterator_rust(self, *, split, process_record=None, shards=None, shard_filter=None, repeat=True,
                           file_parallelism=_CPUS, shuffle=1000):
    """The reference's Rust-backed iterator: here the same threaded C++ reader
    as `as_numpy_iterator_concurrent` (every argument honoured likewise)."""
    return as_numpy_iterator_concurrent(self, split=split, process_record=process_record, shards=shards,
                                        shard_filter=shard_filter, repeat=repeat,
                                        file_parallelism=file_parallelism, shuffle=shuffle)


def as_numpy_iterator_rust_batched(self, *, split, process_batch=None, shards=None, shard_filter=None, repeat=True,
                                   batch_size=1, file_parallelism=_CPUS, shuffle=1000):
    """The reference's batched Rust iterator over `as_numpy_iterator_batched`
    (numeric attributes stacked, the others as lists)."""
    return self.as_numpy_iterator_batched(split=split, batch_size=batch_size, process_batch=process_batch,
                                          shards=shards, shard_filter=shard_filter, repeat=repeat, shuffle=shuffle,
                                          prefetch_shards=_prefetch(file_parallelism))


# Examples taken from the reader per hop to the executor thread: one hop per
# example would cost more than reading it; the reader runs ahead meanwhile.
_ASYNC_CHUNK = 64


async def as_numpy_iterator_async(self, *, split, process_record=None, shards=None, shard_filter=None, repeat=True,
                                  file_parallelism=_CPUS, shuffle=1000):
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

    def __init__(self, dataset, split):
        self._dataset = dataset
        self.split = split
        self._iterator = iter(())

    def number_of_shards(self):
        splits = self._dataset.dataset_info.splits
        if self.split is None:
            return sum(info.number_of_shards for info in splits.values())
        info = splits.get(self.split)
        return info.number_of_shards if info is not None else 0

    def __len__(self):
        return self.number_of_shards()

    def __iter__(self):
        self._iterator = iter(self._dataset._shard_infos(self.split))
        return self._iterator

    def __next__(self):
        return next(self._iterator)


def shard_info_iterator(self, split):
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


def shard_paths_dataset(self, split, shards=None, custom_metadata_type_limit=None, shard_filter=None):
    """The full paths (str) of the shards `as_numpy_iterator` would read with
    these arguments and shuffle=0. ValueError when none is left."""
    selected = _selected_shards(self, split, shards, custom_metadata_type_limit, shard_filter)
    if not selected:
        raise ValueError("The list of shards is empty. Try less restrictive filtering.")
    return [str(self.path / s.file_infos[0].file_path) for s in selected]


def as_numpy_common(self, *, split, shards=None, custom_metadata_type_limit=None, shard_filter=None, repeat=True,
                    shuffle=1000):
    """The reference's shard path stream: `shard_paths_dataset`, cycled with
    `repeat`, in a random order with `shuffle` (reshuffled on every pass)."""
    paths = self.shard_paths_dataset(split=split, shards=shards, custom_metadata_type_limit=custom_metadata_type_limit,
                                     shard_filter=shard_filter)

    def passes():
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


def write_multiprocessing(self, *, feed_writer, custom_arguments, custom_kwarguments=None, consistency_check=True,
                          single_process=False):
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


def _get_config_path(path, relative=False):
    """The reference's DatasetBase._get_config_path."""
    name = Path("dataset_info.json")
    return name if relative else Path(path) / name


# ---- The reference's error classes ------------------------------------------------------


def _own_message(self, *args):
    # The reference's __init__ takes the dataset path and writes its own
    # message; ours are raised with the library's message.
    FileExistsError.__init__(self, *args)


def _adopt_reference_errors(module):
    """From now on raise, as DatasetExistsError, a subclass of ours and of the
    reference's (the only error class the reference defines; it raises it
    from Dataset.create). Python cannot add the reference's class to the
    bases of ours (its instances are larger), hence the new class."""
    theirs = getattr(module, "DatasetExistsError", None)
    ours = _ext.DatasetExistsError
    if not isinstance(theirs, type) or not issubclass(theirs, FileExistsError) or issubclass(ours, theirs):
        return
    both = type("DatasetExistsError", (ours, theirs), {
        "__init__": _own_message,
        "__module__": ours.__module__,
        "__qualname__": "DatasetExistsError",
        "__doc__": f"{ours.__doc__ or 'The dataset exists.'} Also a {theirs.__module__}.DatasetExistsError.",
    })
    _ext._set_exists_error(both)
    package = sys.modules.get(__name__.rpartition(".")[0])
    if package is not None and getattr(package, "DatasetExistsError", None) is ours:
        package.DatasetExistsError = both


class _ReferenceErrorsWatcher:
    """A finder on sys.meta_path (not derived from importlib.abc.MetaPathFinder,
    whose import costs more than the rest of the package) that adopts the
    reference's error classes when `sedpack.io.errors` is first imported
    after us; it finds nothing itself and leaves once it fired."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _REFERENCE_ERRORS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module
        watcher = self

        def exec_and_adopt(module):
            exec_module(module)
            _adopt_reference_errors(module)
            if watcher in sys.meta_path:
                sys.meta_path.remove(watcher)

        loader.exec_module = exec_and_adopt
        return spec


def _watch_reference_errors():
    loaded = sys.modules.get(_REFERENCE_ERRORS)
    if loaded is not None:
        _adopt_reference_errors(loaded)
        return
    # Finding a top-level package imports nothing; without one nothing changes.
    try:
        installed = importlib.util.find_spec("sedpack") is not None
    except (ImportError, ValueError):
        installed = False
    if installed and not any(isinstance(f, _ReferenceErrorsWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _ReferenceErrorsWatcher())


def install():
    """Attach the names above to Dataset (called once by the package)."""
    for function in (as_numpy_iterator_concurrent, as_numpy_iterator_rust, as_numpy_iterator_rust_batched,
                     as_numpy_iterator_async, shard_info_iterator, shard_paths_dataset, as_numpy_common,
                     write_multiprocessing):
        setattr(Dataset, function.__name__, function)
    Dataset._get_config_path = staticmethod(_get_config_path)
    Dataset._dataset_info = property(lambda self: self.dataset_info, doc="The reference's name of dataset_info.")
    _watch_reference_errors()
