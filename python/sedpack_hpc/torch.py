# SPDX-License-Identifier: Apache-2.0
"""PyTorch datasets over sedpack_hpc (docs/python.md, "PyTorch").

`IterableDataset` reads the elastic epoch order, split by training rank and by
DataLoader worker; `MapDataset` fetches by sequential number through the sample
index. Importing this module does not import torch: the classes are made on
first use (module `__getattr__`). Both datasets hold only their path and
options, so they pickle for `spawn` and `forkserver` workers; each process
opens the dataset itself.

Split rule. With W workers per rank and world size N, the reader of worker w
on rank r is reader `r * W + w` of `N * W`, in groups of W (one per rank). What
the epoch still has to produce (M examples: the whole epoch, or what a merged
state left) is cut into N contiguous parts, part r = [floor(r M / N),
floor((r + 1) M / N)); with equal_counts="pad" each part is brought to
ceil(M / N) by repeating its own first example, with "drop" cut to floor(M / N),
with None left as it is (parts differ by at most one). A rank's part is dealt
to its workers in whole batches, contiguously, so the rank yields
ceil(C / batch_size) batches whatever W is (only its last batch is short).

Resume. `state_dict(steps, num_workers)` gives this rank's position after the
training loop received `steps` items from its loader in this pass (the loader
takes from its workers in turn, so the position of each worker follows).
Resuming with the same world size and workers: `load_state_dict(own state)`.
On another layout: gather the states of all ranks (e.g. with
`torch.distributed.all_gather_object`, or from one file per rank), merge them
with `merge_states(states)` and load the merged state on every new rank: what
none of the old readers produced is split over the new ones.
"""
import os
import weakref
from typing import Any

from . import _sedpack_hpc as _ext

__all__ = ["IterableDataset", "MapDataset", "merge_states", "distributed_layout"]

_FORMAT = "sedpack_hpc.torch/1"
_EQUAL_COUNTS = (None, "pad", "drop")
_opened: dict[Any, Any] = {}  # (pid, path) -> Dataset: one per process, reopened after a fork


def _open(path):
    key = (os.getpid(), path)
    ds = _opened.get(key)
    if ds is None:
        ds = _opened[key] = _ext.Dataset(path)
    return ds


def distributed_layout():
    """(rank, world_size): torch.distributed's when initialised, else the
    RANK / WORLD_SIZE environment, else (0, 1)."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    try:
        rank = int(os.environ.get("RANK", "0"))
        world = int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError as e:
        raise ValueError(f"RANK / WORLD_SIZE must be integers: {e}") from None
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"RANK={rank} is not in [0, WORLD_SIZE={world})")
    return rank, world


def _ceil_div(a, b):
    return -(-a // b)


def _spans_size(spans):
    return sum(e - b for b, e in spans)


def _delivered(steps, items):
    """Items each worker delivered after `steps`, the loader taking one from
    each worker in turn and skipping the finished ones."""
    done = [0] * len(items)
    left = steps
    while left > 0:
        active = [w for w in range(len(items)) if done[w] < items[w]]
        if not active:
            raise ValueError(f"steps={steps} is more than the {sum(items)} items of this pass")
        rounds = min(left // len(active), min(items[w] - done[w] for w in active))
        if rounds == 0:
            for w in active[:left]:
                done[w] += 1
            break
        for w in active:
            done[w] += rounds
        left -= rounds * len(active)
    return done


def merge_states(states):
    """One epoch position from the state_dict() of every rank of one run: the
    examples none of their readers produced. Load it on every rank of the new
    run (any world size, any number of workers)."""
    states = list(states)
    if not states:
        raise ValueError("merge_states: no states")
    first = states[0]
    for s in states:
        if s.get("format") != _FORMAT or s.get("kind") != "rank":
            raise ValueError("merge_states takes the state_dict() of each rank")
    readers = []
    for s in states:
        for key in ("epoch", "seed", "shards_per_block", "shuffle", "world_size", "num_workers", "remaining",
                    "split_unit", "equal_counts"):
            if s[key] != first[key]:
                raise ValueError(f"merge_states: rank {s['rank']} has {key}={s[key]!r}, "
                                 f"rank {first['rank']} {first[key]!r}")
        w_count = s["num_workers"]
        for w, position in enumerate(s["positions"]):
            readers.append(_reader_state(s, s["rank"] * w_count + w, s["world_size"] * w_count, w_count,
                                         s["split_unit"], s["equal_counts"], position))
    merged = _ext.merge_elastic_states(readers)
    return {"format": _FORMAT, "kind": "epoch", "epoch": first["epoch"], "seed": first["seed"],
            "shards_per_block": first["shards_per_block"], "shuffle": first["shuffle"],
            "remaining": [list(p) for p in merged["remaining"]]}


def _reader_state(base, rank, num_readers, group_size, split_unit, equal_counts, position):
    return {"seed": base["seed"], "epoch": base["epoch"], "position": position,
            "shards_per_block": base["shards_per_block"], "rank": rank, "num_readers": num_readers,
            "group_size": group_size, "split_unit": split_unit, "shuffle": base["shuffle"],
            "equal_counts": equal_counts, "remaining": base["remaining"]}


def _tensors(item, copy):
    """numpy values as tensors. A stacked batch is a fresh writable array and is
    wrapped as it is; a single example's values are views of the decoded shard
    (read-only), which torch cannot wrap without a copy."""
    import numpy as np
    import torch
    out = {}
    for name, v in item.items():
        if isinstance(v, np.ndarray):
            if copy or not v.flags.writeable:
                v = np.array(v)
            out[name] = torch.from_numpy(v)
        elif isinstance(v, np.generic):
            out[name] = torch.from_numpy(np.array(v))
        elif isinstance(v, int):
            out[name] = torch.tensor(v)
        elif isinstance(v, list) and v and all(isinstance(x, int) for x in v):
            out[name] = torch.tensor(v)
        else:
            out[name] = v
    return out


_BLOCK = "__sedpack_shared_block__"  # a worker's batch: its one shared block and the views made in it


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _block_layout(dataset, batch_size):
    """(byte offset and size of each numeric attribute's batch array, total):
    the arrays of one batch laid out in one block, 64-byte aligned."""
    import numpy as np
    offsets, at = {}, 0
    for a in dataset.dataset_structure.saved_data_description:
        if a.dtype in ("int", "str", "bytes"):
            continue
        n = np.dtype(a.dtype).itemsize * batch_size * _prod(a.shape)
        offsets[a.name] = (at, n)
        at += -(-n // 64) * 64
    return offsets, at


def _shared_bytes(n):
    """A uint8 tensor over n bytes of fresh shared memory."""
    import torch
    storage = torch.UntypedStorage._new_shared(max(1, n))
    return torch.empty(0, dtype=torch.uint8).set_(torch.TypedStorage(wrap_storage=storage, dtype=torch.uint8), 0,
                                                  (max(1, n),))


_POOL_SLOTS = 8  # blocks a worker keeps: the loader's prefetch (2), what the loop holds, and some slack
_BOARD = 4096  # the pool's first page: a byte per slot (1: in use), then the receiver's "mapped" byte
_MAPPED = _POOL_SLOTS
_pools: dict[Any, Any] = {}  # (pid, block bytes) -> this worker process's _BlockPool (it outlives a pass: persistent workers)
_mapped: dict[Any, Any] = {}  # in the receiving process: worker pid -> {pool token: (pool, board)} it keeps mapped
_TORCH_DTYPES: dict[Any, Any] = {}  # numpy dtype string -> torch dtype


def _torch_dtype(descr):
    """(torch dtype, item size) of a numpy dtype string."""
    got = _TORCH_DTYPES.get(descr)
    if got is None:
        import numpy as np
        import torch
        d = np.dtype(descr)
        got = _TORCH_DTYPES[descr] = (torch.from_numpy(np.empty(0, d)).dtype, d.itemsize)
    return got


class _BlockPool:
    """The blocks one DataLoader worker builds its batches in: slots of one
    shared mapping, reused. Fresh shared memory costs a page fault and zeroing
    per page (about as much as reading the batch), and each storage torch sends
    costs a connection to the worker to pass its file descriptor (a handshake,
    a thread switch on both sides), so the pool is one storage, sent only until
    the receiving process says on the board (its first page) that it has it
    mapped; later batches name their slot. A slot goes around again once that
    process has dropped every tensor of the batch in it: the worker sets the
    slot's byte when it sends the batch, the receiver clears it when the last
    tensor is gone. With every slot still held a batch gets a fresh block of
    its own, sent as torch sends any tensor."""

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.stride = -(-max(1, nbytes) // _BOARD) * _BOARD
        self.storage = _shared_bytes(_BOARD + _POOL_SLOTS * self.stride)  # pages are taken when first written
        self.flags = self.storage[:_BOARD].numpy()
        self.flags[:] = 0
        self.token = os.urandom(8).hex()  # this pool, among the pools of a process (and a reused pid)
        self.used = 0  # slots written so far
        self.unpooled = 0  # batches sent in a fresh block because every slot was still held

    def take(self):
        """(block, slot), slot None for a block outside the pool."""
        for slot in range(min(self.used + 1, _POOL_SLOTS)):
            if self.flags[slot] == 0:
                self.flags[slot] = 1
                self.used = max(self.used, slot + 1)
                at = _BOARD + slot * self.stride
                return self.storage[at:at + self.nbytes], slot
        self.unpooled += 1
        return _shared_bytes(self.nbytes), None

    def give_back(self, slot):
        if slot is not None:
            self.flags[slot] = 0


def _pool(nbytes):
    key = (os.getpid(), nbytes)
    pool = _pools.get(key)
    if pool is None:
        pool = _pools[key] = _BlockPool(nbytes)
    return pool


def _clear_flag(flags, slot):
    flags[slot] = 0


def _batch_buffers(layout):
    """An `alloc` for ElasticIterator.next_batch, the tensors it made and the
    block they live in. With a layout (in a DataLoader worker) the arrays are
    views of one block from the worker's pool: no copy when the batch is sent
    (a tensor over private memory is copied into shared memory) and, once the
    receiver has the pool mapped, no file descriptor either."""
    import torch
    made, block = {}, []

    def alloc(name, descr, shape):
        dtype, itemsize = _torch_dtype(descr)
        nbytes = itemsize * _prod(shape)
        at_size = layout[0].get(name) if layout is not None else None
        if at_size is not None and nbytes <= at_size[1]:
            if not block:
                pool = _pool(layout[1])
                block.extend((*pool.take(), pool))
            at = at_size[0]
            t = block[0][at:at + nbytes].view(dtype).view(tuple(shape))
        else:
            t = torch.empty(tuple(shape), dtype=dtype)
        made[name] = t
        return t.numpy()
    return alloc, made, block


class _SharedBatch(dict):
    """A batch sent from a DataLoader worker as a slot of its pool (or a block of its own)."""

    def __reduce__(self):
        entry = self.get(_BLOCK)
        items = {k: v for k, v in self.items() if k != _BLOCK}
        if entry is None:
            return (dict, (items,))
        (block, slot, pool), made = entry
        views, rest = {}, {}
        for k, v in items.items():
            if made.get(k) is v:  # still the view made in the block (a transform may replace it)
                views[k] = (v.data_ptr() - block.data_ptr(), v.numel() * v.element_size(), v.dtype, tuple(v.shape))
            else:
                rest[k] = v
        if slot is None:
            return (_rebuild_batch, (os.getpid(), None, block, None, views, rest, list(items)))
        sent = None if pool.flags[_MAPPED] else pool.storage
        return (_rebuild_batch, (os.getpid(), pool.token, sent, (slot, pool.stride, pool.nbytes), views, rest,
                                 list(items)))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _receive_pool(worker, token, storage):
    """(the pool `token` of `worker`, its board) as numpy arrays, mapped here
    once (no mmap, munmap and page faults per batch) and kept until a new
    worker appears and this one is gone."""
    pools = _mapped.get(worker)
    if pools is None:
        for pid in [p for p in _mapped if not _alive(p)]:
            del _mapped[pid]
        pools = _mapped[worker] = {}
    entry = pools.get(token)
    if entry is None:
        if storage is None:
            raise RuntimeError(f"a batch of DataLoader worker {worker} names a block pool this process has not "
                               "received (batches of a worker go to the process that started it)")
        entry = pools[token] = (storage.numpy(), storage[:_BOARD].numpy())
        entry[1][_MAPPED] = 1
    return entry


def _rebuild_batch(worker, token, storage, slot, views, rest, order):
    if token is None:
        base = storage  # a block of its own
    else:
        # The batch's tensors live on a numpy array over its slot, whose end
        # says that the last of them was dropped.
        pool, board = _receive_pool(worker, token, storage)
        index, stride, nbytes = slot
        at = _BOARD + index * stride
        import torch
        lease = pool[at:at + nbytes]
        weakref.finalize(lease, _clear_flag, board, index)
        base = torch.from_numpy(lease)
    out = {}
    for k in order:
        if k in views:
            at, n, dtype, shape = views[k]
            out[k] = base[at:at + n].view(dtype).view(shape)
        else:
            out[k] = rest[k]
    return out


def _make_classes():
    import torch
    import torch.utils.data as tud

    class IterableDataset(tud.IterableDataset):
        """The elastic order of one split as a torch IterableDataset (see the module doc)."""

        def __init__(self, path, split="train", *, shuffle=True, seed=0, shards_per_block=4, batch_size=None,
                     drop_last=False, equal_counts="pad", transform=None, verify_hashes=True, rank=None,
                     world_size=None, prefetch_shards=None):
            super().__init__()
            if equal_counts not in _EQUAL_COUNTS:
                raise ValueError(f"equal_counts must be 'pad', 'drop' or None, not {equal_counts!r}")
            if batch_size is not None and batch_size < 1:
                raise ValueError(f"batch_size must be positive or None, not {batch_size}")
            if verify_hashes not in (True, False, "strict"):
                raise ValueError(f"verify_hashes must be True, False or 'strict', not {verify_hashes!r}")
            if (rank is None) != (world_size is None):
                raise ValueError("give both rank and world_size, or neither")
            if prefetch_shards is not None and int(prefetch_shards) < 0:
                raise ValueError(f"prefetch_shards must be >= 0 or None, not {prefetch_shards}")
            self.path = str(getattr(path, "__fspath__", lambda: path)())
            self.split = split
            self.shuffle = bool(shuffle)
            self.seed = int(seed)
            self.shards_per_block = int(shards_per_block)
            self.batch_size = batch_size
            self.drop_last = bool(drop_last)
            self.equal_counts = equal_counts
            self.transform = transform
            self.verify_hashes = verify_hashes
            self.prefetch_shards = None if prefetch_shards is None else int(prefetch_shards)
            self._layout = None if rank is None else (int(rank), int(world_size))
            # In shared memory, so that persistent workers (made once, from the
            # object as it was then) see set_epoch of later epochs.
            self._epoch_cell = torch.zeros(1, dtype=torch.int64).share_memory_()
            self._resume = None
            self._produced = 0  # items yielded by iterations in this process (num_workers=0)

        # -- layout -------------------------------------------------------------
        def rank_and_world(self):
            return self._layout if self._layout is not None else distributed_layout()

        def __getstate__(self):
            # Pickled for spawn/forkserver workers in the main process, where
            # torch.distributed is initialised; the workers are not.
            state = dict(self.__dict__)
            state["_layout"] = self.rank_and_world()
            return state

        @property
        def epoch(self):
            return int(self._epoch_cell[0])

        @epoch.setter
        def epoch(self, epoch):
            self._epoch_cell[0] = int(epoch)

        def set_epoch(self, epoch):
            self.epoch = int(epoch)
            if self._resume is not None and self._resume["epoch"] != self.epoch:
                self._resume = None

        def _unit(self):
            return self.batch_size or 1

        def _base(self):
            """(remaining spans, positions per worker or None) this pass starts from."""
            r = self._resume
            if r is not None and r["epoch"] == self.epoch:
                return r["remaining"], (r["positions"] if r["kind"] == "rank" else None)
            return [[0, self._epoch_size()]] if self._epoch_size() else [], None

        def _epoch_size(self):
            if not hasattr(self, "_n"):
                it = _open(self.path).as_numpy_iterator_elastic(split=self.split, seed=self.seed,
                                                                shards_per_block=self.shards_per_block)
                self._n = it.epoch_size
            return self._n

        def _order(self):
            r = self._resume
            if r is not None and r["epoch"] == self.epoch:
                return r["seed"], r["shards_per_block"], r["shuffle"]
            return self.seed, self.shards_per_block, self.shuffle

        def _part(self, m, rank, world, worker, workers):
            return _ext.elastic_part_size(m, rank=rank * workers + worker, num_readers=world * workers,
                                          group_size=workers, split_unit=self._unit(),
                                          equal_counts=self.equal_counts)

        def _items(self, examples):
            b = self.batch_size
            if b is None:
                return examples
            return examples // b if self.drop_last else _ceil_div(examples, b)

        def _check_rank_state(self, rank, world, workers):
            r = self._resume
            if r is None or r["kind"] != "rank" or r["epoch"] != self.epoch:
                return
            if (r["rank"], r["world_size"], r["num_workers"]) != (rank, world, workers):
                raise ValueError(
                    f"the state was saved by rank {r['rank']} of {r['world_size']} with {r['num_workers']} "
                    f"workers, this is rank {rank} of {world} with {workers}: load merge_states() of all ranks")
            if (r["split_unit"], r["equal_counts"]) != (self._unit(), self.equal_counts):
                raise ValueError("the state was saved with another batch_size or equal_counts: "
                                 "load merge_states() of all ranks")

        def __len__(self):
            """Items (batches, or examples without batch_size) this rank yields in this pass."""
            rank, world = self.rank_and_world()
            spans, positions = self._base()
            m = _spans_size(spans)
            if positions is None:
                c = self._part(m, rank, world, 0, 1)
                return self._items(c)
            w_count = len(positions)
            return sum(self._items(self._part(m, rank, world, w, w_count)) - _ceil_div(p, self._unit())
                       for w, p in enumerate(positions))

        # -- iteration ----------------------------------------------------------
        def __iter__(self):
            import torch.utils.data as tud2
            rank, world = self.rank_and_world()
            info = tud2.get_worker_info()
            worker, workers = (info.id, info.num_workers) if info is not None else (0, 1)
            self._check_rank_state(rank, world, workers)
            spans, positions = self._base()
            seed, spb, shuffle = self._order()
            base = {"seed": seed, "epoch": self.epoch, "shards_per_block": spb, "shuffle": shuffle,
                    "remaining": spans}
            state = _reader_state(base, rank * workers + worker, world * workers, workers, self._unit(),
                                  self.equal_counts, positions[worker] if positions else 0)
            it = _open(self.path).as_numpy_iterator_elastic(
                split=self.split, seed=seed, shards_per_block=spb, shuffle=shuffle, rank=state["rank"],
                num_readers=state["num_readers"], group_size=workers, split_unit=self._unit(),
                equal_counts=self.equal_counts, epoch=self.epoch, verify_hashes=self.verify_hashes,
                prefetch_shards=self._prefetch(workers if info is not None else 0), state=state)
            self._produced = 0
            return self._generate(it, shared=info is not None)

        def _prefetch(self, workers):
            """Shards each reader decodes ahead, each on a thread: by default the
            cores this process may use shared among the DataLoader's workers
            (more threads than cores only switch between them and evict each
            other's decoded shards from the caches)."""
            if self.prefetch_shards is not None:
                return self.prefetch_shards
            if workers == 0:
                return 2
            try:
                cores = len(os.sched_getaffinity(0))
            except AttributeError:
                cores = os.cpu_count() or 1
            return max(1, cores // workers)

        def _generate(self, it, shared):
            b = self.batch_size
            layout = _block_layout(_open(self.path), b) if shared and b is not None else None
            while True:
                made, block = {}, []
                try:
                    if b is None:
                        item = next(it)
                    elif layout is None:
                        # numpy's own arrays (writable; torch wraps them): its
                        # large allocations get huge pages, torch.empty's do not.
                        item = it.next_batch(b)
                    else:
                        alloc, made, block = _batch_buffers(layout)
                        item = it.next_batch(b, alloc)
                except StopIteration:
                    return
                if b is not None and self.drop_last and len(next(iter(item.values()))) < b:
                    if block:
                        block[2].give_back(block[1])
                    return
                item = _tensors(item, copy=False)
                item.update(made)
                if self.transform is not None:
                    item = self.transform(item)
                if block and isinstance(item, dict):
                    item = _SharedBatch(item)
                    item[_BLOCK] = (tuple(block), made)
                self._produced += 1
                yield item

        # -- resume -------------------------------------------------------------
        def state_dict(self, steps=None, num_workers=None):
            """This rank's position after the training loop received `steps` items
            from a DataLoader with `num_workers` workers in the current pass
            (default: what iterating this object in this process yielded)."""
            if steps is None:
                steps, workers = self._produced, 1
            else:
                workers = max(1, int(num_workers or 0))
            rank, world = self.rank_and_world()
            self._check_rank_state(rank, world, workers)
            spans, positions = self._base()
            seed, spb, shuffle = self._order()
            m = _spans_size(spans)
            parts = [self._part(m, rank, world, w, workers) for w in range(workers)]
            start = positions or [0] * workers
            unit = self._unit()
            left = [self._items(parts[w]) - _ceil_div(start[w], unit) for w in range(workers)]
            done = _delivered(int(steps), left)
            return {"format": _FORMAT, "kind": "rank", "epoch": self.epoch, "seed": seed,
                    "shards_per_block": spb, "shuffle": shuffle, "remaining": [list(s) for s in spans],
                    "rank": rank, "world_size": world, "num_workers": workers, "split_unit": unit,
                    "equal_counts": self.equal_counts,
                    "positions": [min(start[w] + done[w] * unit, parts[w]) for w in range(workers)]}

        def load_state_dict(self, state):
            """Resume from this rank's own state_dict() (same world size and
            workers) or from merge_states() of all ranks (any layout). Also
            sets the epoch to the state's."""
            if state.get("format") != _FORMAT or state.get("kind") not in ("rank", "epoch"):
                raise ValueError("not a sedpack_hpc.torch state (state_dict() or merge_states())")
            if state["kind"] == "rank" and state["world_size"] == 1:
                state = merge_states([state])  # complete: any number of workers can take it
            self._resume = dict(state)
            self.epoch = int(state["epoch"])

    class MapDataset(tud.Dataset):
        """Examples by sequential number (0 .. len - 1) through the sample index,
        for DistributedSampler and random access. Each item is a dict of tensors."""

        def __init__(self, path, split="train", *, transform=None):
            super().__init__()
            self.path = str(getattr(path, "__fspath__", lambda: path)())
            self.split = split
            self.transform = transform
            self._len = None

        def __len__(self):
            if self._len is None:
                self._len = int(_open(self.path).num_examples(self.split))
            return self._len

        def __getitem__(self, i):
            n = len(self)
            i = int(i)
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError(f"index {i} is out of range for the {n} examples of split {self.split}")
            item = _tensors(_open(self.path).get(self.split, i), copy=False)
            return self.transform(item) if self.transform is not None else item

    for cls in (IterableDataset, MapDataset):
        cls.__module__ = __name__
        cls.__qualname__ = cls.__name__  # pickle finds it through the module's __getattr__
    return {"IterableDataset": IterableDataset, "MapDataset": MapDataset}


_classes = None


def __getattr__(name):
    global _classes
    if name in ("IterableDataset", "MapDataset"):
        if _classes is None:
            _classes = _make_classes()
        return _classes[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
