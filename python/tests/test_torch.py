# SPDX-License-Identifier: Apache-2.0
"""sedpack_hpc.torch with the real torch (CPU): DataLoader workers under fork,
spawn and forkserver, the split by rank and worker with equal counts, DDP over gloo with
ranks as subprocesses, resume on the same and on another layout, pickling.
Run by the ctest `python_torch` (skipped there when torch is not installed)."""
import collections
import json
import os
import pickle
import socket
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import sedpack_hpc

torch = pytest.importorskip("torch", reason="torch is not installed (Debian: python3-torch)")
from torch.utils.data import DataLoader, get_worker_info  # noqa: E402

from sedpack_hpc import torch as st  # noqa: E402

N = 45  # 9 shards of 5: does not divide over 2 ranks x 2 workers, nor in blocks of 4


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    root = tmp_path_factory.mktemp("torch") / "ds"
    ds = sedpack_hpc.Dataset.create(root, metadata={}, dataset_structure={
        "saved_data_description": [{"name": "k", "dtype": "int", "shape": []},
                                   {"name": "v", "dtype": "float32", "shape": [3]},
                                   {"name": "w", "dtype": "uint8", "shape": [2]}],
        "examples_per_shard": 5, "compression": "LZ4"})
    with ds.filler() as f:
        for k in range(N):
            f.write_example(values={"k": k, "v": np.full(3, k, np.float32), "w": np.array([k % 7, 1], np.uint8)},
                            split="train")
    return str(root)


def tag_worker(item):
    """transform: remember which worker produced the item (module level: picklable)."""
    info = get_worker_info()
    item["worker"] = -1 if info is None else info.id
    return item


def keys_of(loader):
    out = []
    for item in loader:
        k = item["k"]
        out.extend(k.tolist() if k.dim() else [int(k)])
    return out


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
@pytest.mark.parametrize("batch_size", [None, 4])
def test_dataloader_workers_yield_every_example_once(path, context, batch_size):
    ds = st.IterableDataset(path, batch_size=batch_size, equal_counts=None, rank=0, world_size=1)
    loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=context)
    got = keys_of(loader)
    assert sorted(got) == list(range(N)), context
    assert len(loader) == (N if batch_size is None else -(-N // 4))
    if batch_size is not None:
        # A worker's batch arrives as views of one shared block, also after a transform added a key.
        ds.transform = tag_worker
        b = next(iter(DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=context)))
        assert b["v"].storage().data_ptr() == b["w"].storage().data_ptr()
        assert sorted(b) == ["k", "v", "w", "worker"] and torch.equal(b["v"][:, 0], b["k"].float())



def tag_pool(item):
    """transform: the worker's block pool as it is after this batch's block was taken."""
    import sedpack_hpc.torch as module
    pool = next(p for (pid, _), p in module._pools.items() if pid == os.getpid())
    item["pool"] = torch.tensor([pool.used, pool.unpooled])
    return item


def test_workers_reuse_the_blocks_of_dropped_batches(path):
    """22-23 batches per worker go around in at most 8 shared blocks each while
    the loop drops its batches; batches the loop keeps are never written over
    (the worker takes fresh blocks for the rest). Persistent workers keep
    their blocks for the next pass."""
    ds = st.IterableDataset(path, batch_size=1, equal_counts=None, transform=tag_pool, rank=0, world_size=1)
    loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork", persistent_workers=True)
    pools = [b["pool"].tolist() for b in loader]
    assert len(pools) == N and max(blocks for blocks, _ in pools) <= 8 and all(u == 0 for _, u in pools), pools
    kept = list(loader)
    assert sorted(int(b["k"]) for b in kept) == list(range(N))
    assert all(float(b["v"][0, 1]) == int(b["k"]) and int(b["w"][0, 0]) == int(b["k"]) % 7 for b in kept)
    assert max(int(b["pool"][1]) for b in kept) > 0  # kept batches forced fresh blocks
    # This process keeps the blocks mapped while their worker lives: the next
    # loader's workers drop those of the persistent ones, now gone.
    import sedpack_hpc.torch as module
    del loader
    assert len(list(DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork"))) == N
    assert len(module._mapped) == 2 and all(len(pools) == 1 for pools in module._mapped.values())
    print(f"blocks per worker, batches dropped: {max(b for b, _ in pools)}; batches kept: "
          f"{max(int(b['pool'][1]) for b in kept)} fresh blocks in the second pass")


def test_a_pool_goes_over_until_the_receiver_has_it_mapped():
    """The first batch of a pool carries the pool's storage; once the receiver
    has mapped it (the board says so), batches name only their slot. The slot
    is free again when the last tensor of its batch is gone."""
    import gc
    import sedpack_hpc.torch as module
    pool = module._BlockPool(64)

    def batch():
        block, slot = pool.take()
        b = module._SharedBatch(v=block[:8].view(torch.float32))
        b["v"].fill_(slot)
        b[module._BLOCK] = ((block, slot, pool), {"v": b["v"]})
        return b, slot
    try:
        first, slot = batch()
        fn, args = first.__reduce__()
        assert args[2] is pool.storage and not pool.flags[module._MAPPED]
        got = fn(*args)
        assert pool.flags[module._MAPPED] == 1 and pool.flags[slot] == 1
        second, slot2 = batch()
        fn, args2 = second.__reduce__()
        assert args2[2] is None and slot2 != slot
        again = fn(*args2)
        assert torch.equal(got["v"], torch.full((2,), float(slot))) and torch.equal(again["v"], torch.full((2,), float(slot2)))
        view = got["v"][1:]
        del got
        gc.collect()
        assert pool.flags[slot] == 1  # a view of the batch still holds it
        del view
        gc.collect()
        assert pool.flags[slot] == 0 and pool.flags[slot2] == 1
    finally:
        module._mapped.pop(os.getpid(), None)


def test_prefetch_shards(path):
    with pytest.raises(ValueError, match="prefetch_shards"):
        st.IterableDataset(path, prefetch_shards=-1)
    for prefetch in (None, 0, 3):
        ds = st.IterableDataset(path, batch_size=4, equal_counts=None, rank=0, world_size=1,
                                prefetch_shards=prefetch)
        assert sorted(keys_of(DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork"))) == \
            list(range(N))
    assert ds._prefetch(2) == 3 and st.IterableDataset(path)._prefetch(0) == 2
    assert st.IterableDataset(path)._prefetch(64) == 1


def test_persistent_workers_follow_set_epoch(path):
    def passes(persistent):
        ds = st.IterableDataset(path, batch_size=4, equal_counts=None, rank=0, world_size=1)
        loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork",
                            persistent_workers=persistent)
        out = []
        for epoch in (0, 1, 0):
            ds.set_epoch(epoch)
            out.append(keys_of(loader))
        return out
    fresh, persistent = passes(False), passes(True)
    assert persistent == fresh and fresh[0] != fresh[1] and fresh[0] == fresh[2]
    assert sorted(fresh[1]) == list(range(N))

def test_batches_are_tensors_without_warnings(path):
    ds = st.IterableDataset(path, batch_size=8, rank=0, world_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the non-writable-array warning among them
        batches = list(ds)
        examples = list(st.IterableDataset(path, rank=0, world_size=1))
    assert [b["k"].shape[0] for b in batches] == [8] * 5 + [5]
    b = batches[0]
    assert b["v"].dtype == torch.float32 and b["v"].shape == (8, 3) and b["w"].dtype == torch.uint8
    assert torch.equal(b["v"][:, 0], b["k"].float())
    assert examples[0]["v"].shape == (3,) and isinstance(examples[0]["k"], torch.Tensor)
    # drop_last leaves out the short batch; set_epoch gives another order
    assert len(st.IterableDataset(path, batch_size=8, drop_last=True, rank=0, world_size=1)) == 5
    assert len(list(st.IterableDataset(path, batch_size=8, drop_last=True, rank=0, world_size=1))) == 5
    other = st.IterableDataset(path, batch_size=8, rank=0, world_size=1)
    other.set_epoch(1)
    assert keys_of(other) != keys_of(batches) and sorted(keys_of(other)) == list(range(N))
    unshuffled = st.IterableDataset(path, shuffle=False, batch_size=8, rank=0, world_size=1)
    assert keys_of(unshuffled) == list(range(N))


@pytest.mark.parametrize("equal_counts,per_rank", [("pad", [23, 23]), ("drop", [22, 22]), (None, [22, 23])])
def test_split_by_rank_and_worker(path, equal_counts, per_rank):
    counts = {}
    seen = collections.Counter()
    for rank in range(2):
        ds = st.IterableDataset(path, shards_per_block=4, equal_counts=equal_counts, transform=tag_worker,
                                rank=rank, world_size=2)
        assert len(ds) == per_rank[rank]
        loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork")
        for item in loader:
            counts[(rank, item["worker"])] = counts.get((rank, item["worker"]), 0) + 1
            seen[int(item["k"])] += 1
    print(f"equal_counts={equal_counts}: examples per (rank, worker): {dict(sorted(counts.items()))}")
    assert [counts[(r, 0)] + counts[(r, 1)] for r in range(2)] == per_rank
    if equal_counts == "drop":
        assert len(seen) == N - 1 and max(seen.values()) == 1
    else:
        assert set(seen) == set(range(N))
        assert sum(seen.values()) == sum(per_rank)  # pad: one example twice


def test_batches_per_rank_do_not_depend_on_workers(path):
    for workers in (0, 1, 2, 3):
        per_rank = []
        for rank in range(2):
            ds = st.IterableDataset(path, batch_size=4, rank=rank, world_size=2)
            loader = DataLoader(ds, batch_size=None, num_workers=workers,
                                multiprocessing_context="fork" if workers else None)
            per_rank.append(sum(1 for _ in loader))
            assert per_rank[-1] == len(ds) == len(loader)
        assert per_rank == [6, 6], workers


def test_fork_after_prefetch_threads_started(path):
    ds = sedpack_hpc.Dataset(path)
    it = ds.as_numpy_iterator(split="train", shuffle=0, repeat=False, prefetch_shards=4)
    head = [next(it)["k"] for _ in range(7)]  # prefetch threads are running now
    loader = DataLoader(st.IterableDataset(path, equal_counts=None, rank=0, world_size=1), batch_size=None,
                        num_workers=2, multiprocessing_context="fork")
    assert sorted(keys_of(loader)) == list(range(N))
    assert head + [e["k"] for e in it] == list(range(N))  # the parent's reader goes on


def run_pass(path, rank, world, workers, *, stop=None, state=None, equal_counts=None, batch_size=3):
    """Keys of one pass of one rank (items after `stop` steps when resuming a
    state), and the state after `stop` steps."""
    ds = st.IterableDataset(path, batch_size=batch_size, equal_counts=equal_counts, rank=rank, world_size=world)
    if state is not None:
        ds.load_state_dict(json.loads(json.dumps(state)))  # plain data
    loader = DataLoader(ds, batch_size=None, num_workers=workers, multiprocessing_context="fork")
    expect_len = len(ds)
    head, tail, steps = [], [], 0
    for item in loader:
        (head if stop is None or steps < stop else tail).extend(item["k"].tolist())
        steps += 1
    assert steps == expect_len
    saved = ds.state_dict(steps=stop, num_workers=workers) if stop is not None else None
    return head, tail, saved


@pytest.mark.parametrize("k", [1, 3])  # 3: the workers of a rank stopped at different positions
def test_resume_on_the_same_and_on_another_layout(path, k):
    heads, tails, states = [], [], []
    for rank in range(2):
        head, tail, saved = run_pass(path, rank, 2, 2, stop=k)
        heads += head
        tails += tail
        states.append(saved)
    assert sorted(heads + tails) == list(range(N))
    after = collections.Counter(tails)
    # 2 x 2 again, each rank from its own state: exactly the uninterrupted tail.
    same = []
    for rank in range(2):
        same += run_pass(path, rank, 2, 2, state=states[rank])[0]
    assert collections.Counter(same) == after
    merged = st.merge_states(states)
    assert merged["kind"] == "epoch"
    # 1 x 2 and 2 x 2 from the merged position of both ranks.
    one = run_pass(path, 0, 1, 2, state=merged)[0]
    assert collections.Counter(one) == after
    two = run_pass(path, 0, 2, 2, state=merged)[0] + run_pass(path, 1, 2, 2, state=merged)[0]
    assert collections.Counter(two) == after
    print(f"stopped 2x2 at step {k}: {len(heads)} examples before, {len(tails)} after; "
          f"resumed 2x2 {len(same)}, 1x2 {len(one)}, 2x2 merged {len(two)}")
    # A rank's own state is refused on another layout.
    ds = st.IterableDataset(path, batch_size=3, equal_counts=None, rank=0, world_size=1)
    with pytest.raises(ValueError, match="merge_states"):
        ds.load_state_dict(states[0])
        list(ds)


def test_resume_with_pad_covers_the_epoch(path):
    states, before = [], []
    for rank in range(2):
        head, _, saved = run_pass(path, rank, 2, 2, stop=3, equal_counts="pad")
        before += head
        states.append(saved)
    after = run_pass(path, 0, 1, 2, state=st.merge_states(states), equal_counts="pad")[0]
    assert set(before + after) == set(range(N))
    assert len(before) + len(after) <= N + 2  # at most one repeat per rank and layout



def test_verify_hashes_strict_on_the_elastic_path(tmp_path):
    """A leaf shard list whose recorded hash was edited after the checks
    sidecar was written: the default check (the fresh sidecar) and False read
    it, "strict" walks the recorded hashes and refuses it, in the elastic
    iterator and in both torch datasets' iterator."""
    root = tmp_path / "ds"
    ds = sedpack_hpc.Dataset.create(root, metadata={}, dataset_structure={
        "saved_data_description": [{"name": "v", "dtype": "float32", "shape": [3]}],
        "examples_per_shard": 4, "compression": "LZ4", "hash_checksum_algorithms": ["sha256"]})
    with ds.filler() as f:
        for k in range(8):
            f.write_example(values={"v": np.full(3, k, np.float32)}, split="train")

    def elastic(verify):
        it = sedpack_hpc.Dataset(root).as_numpy_iterator_elastic(split="train", shuffle=False, verify_hashes=verify)
        return [int(e["v"][0]) for e in it]

    def torch_batches(verify):
        loader = st.IterableDataset(root, shuffle=False, batch_size=3, verify_hashes=verify, rank=0, world_size=1)
        return [b["v"][:, 0].int().tolist() for b in loader]

    assert elastic("strict") == elastic(True) == list(range(8))
    assert torch_batches("strict") == [[0, 1, 2], [3, 4, 5], [6, 7]]
    leaf = max(root.rglob("shards_list.json"), key=lambda p: len(p.parts))
    lists = json.loads(leaf.read_text())
    recorded = lists["shard_files"][1]["file_infos"][0]["hash_checksums"]
    recorded[0] = ("0" if recorded[0][0] != "0" else "1") + recorded[0][1:]
    leaf.write_text(json.dumps(lists))
    assert elastic(True) == elastic(False) == list(range(8))
    with pytest.raises(Exception, match="sha256 mismatch"):
        elastic("strict")
    with pytest.raises(Exception, match="sha256 mismatch"):
        torch_batches("strict")
    with pytest.raises(ValueError, match="strict"):
        elastic("loose")
    with pytest.raises(ValueError, match="strict"):
        st.IterableDataset(root, verify_hashes="loose")

def test_pickling(path):
    ds = sedpack_hpc.Dataset(path)
    again = pickle.loads(pickle.dumps(ds))
    assert str(again.path) == str(ds.path) and again.get("train", 4)["k"] == 4
    it_ds = st.IterableDataset(path, batch_size=5, seed=3, rank=1, world_size=2)
    copy = pickle.loads(pickle.dumps(it_ds))
    assert keys_of(copy) == keys_of(it_ds)
    m = pickle.loads(pickle.dumps(st.MapDataset(path)))
    assert len(m) == N and int(m[7]["k"]) == 7
    state = sedpack_hpc.Dataset(path).as_numpy_iterator_elastic(split="train").state_dict()
    assert pickle.loads(pickle.dumps(state)) == state


def test_map_dataset_with_distributed_sampler_under_spawn(path):
    from torch.utils.data.distributed import DistributedSampler
    m = st.MapDataset(path)
    assert len(m) == N and int(m[-1]["k"]) == N - 1
    with pytest.raises(IndexError):
        m[N]
    seen = []
    for rank in range(2):
        sampler = DistributedSampler(m, num_replicas=2, rank=rank, shuffle=True, seed=1)
        loader = DataLoader(m, batch_size=4, sampler=sampler, num_workers=2, multiprocessing_context="spawn")
        seen += keys_of(loader)
    assert set(seen) == set(range(N)) and len(seen) == 46  # DistributedSampler pads to 23 per rank


DDP_RANK = textwrap.dedent("""
    import os, sys
    import torch, torch.distributed as dist
    from torch.utils.data import DataLoader
    from sedpack_hpc import torch as st
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    ds = st.IterableDataset(sys.argv[1], batch_size=4, shards_per_block=4)
    loader = DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="fork")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps, keys = 0, []
    for batch in loader:
        opt.zero_grad()
        model(batch["v"]).sum().backward()  # an all-reduce per step: unequal counts hang here
        opt.step()
        steps += 1
        keys += batch["k"].tolist()
    t = torch.tensor([steps, -steps])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    gathered = [None, None]
    dist.all_gather_object(gathered, keys)
    print(f"rank {rank}: {steps} steps, {len(keys)} examples, len {len(ds)}", flush=True)
    assert t[0] == steps and -t[1] == steps, "step counts differ"
    assert steps == len(ds)
    allk = gathered[0] + gathered[1]
    assert set(allk) == set(range(45)) and len(allk) == 46, sorted(allk)
    dist.destroy_process_group()
""")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_two_ranks_two_workers(path, tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(DDP_RANK)
    port = free_port()
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                   LOCAL_RANK=str(rank), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([sys.executable, str(script), path], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=180)[0])
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        pytest.fail("the DDP ranks did not finish within 180 s (a hang on unequal step counts?)")
    for p, out in zip(procs, outputs):
        print(out)
        assert p.returncode == 0, out
    assert "rank 0: 6 steps, 23 examples" in outputs[0] and "rank 1: 6 steps, 23 examples" in outputs[1]
