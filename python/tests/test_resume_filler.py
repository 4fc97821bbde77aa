# SPDX-License-Identifier: Apache-2.0
"""Resumable fillers: a script killed (SIGKILL) in the middle of a
`ds.filler(job_id=...)` block, run again, keeps the shards the first run
finished and ends with the dataset of an uninterrupted run, value for value
and in order; whether the rerun skips the kept examples itself
(`skip_kept=True`, reading `resumed_examples`) or writes them again (ignored)."""
import os
import signal
import subprocess
import sys

import pytest

import sedpack_hpc
from sedpack_hpc import Dataset

SCRIPT = r'''
import glob, os, signal, sys, time
import numpy as np
from sedpack_hpc import Attribute, Dataset, DatasetStructure, Metadata
path, kill_after, skip = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "skip"
# exist_ok: the rerun opens the dataset the first run created.
ds = Dataset.create(path, metadata=Metadata(description="resume"),
                    dataset_structure=DatasetStructure(
                        saved_data_description=[Attribute(name="x", dtype="float32", shape=(64,)),
                                                Attribute(name="i", dtype="int64", shape=())],
                        compression="LZ4", examples_per_shard=8), exist_ok=True)
with ds.filler(concurrency=2, job_id="fill1", job_parameters={"seed": 3}, skip_kept=skip) as f:
    print("kept", f.resumed_examples["train"], f.resumed_examples["test"], f.resumed_shards, flush=True)
    journal = lambda: sum(os.path.getsize(p) for p in glob.glob(os.path.join(path, ".sedpack-hpc/jobs/*.journal")))
    for split, n in (("train", 96), ("test", 40)):
        start = f.resumed_examples[split] if skip else 0
        for i in range(start, n):
            rng = np.random.default_rng(i + (1000 if split == "test" else 0))
            f.write_example(values={"x": rng.standard_normal(64).astype(np.float32), "i": i}, split=split)
            if split == "train" and i + 1 == kill_after:
                # The workers write shards behind write_example and may finish
                # them out of order; on a loaded machine none may be finished
                # yet. The kill comes once the 7 full shards handed over are on
                # disk (renamed from their temporary names) and the journal has
                # stopped growing for 0.2 s (each shard's record follows its
                # rename), so that the rerun has 7 shards to keep.
                def finished():
                    return sum(1 for p in glob.glob(os.path.join(path, "train", "**", "*.fb"), recursive=True)
                               if not os.path.basename(p).startswith("update_"))
                deadline = time.monotonic() + 60
                while finished() < kill_after // 8 and time.monotonic() < deadline:
                    time.sleep(0.01)
                size, still = journal(), time.monotonic()
                while time.monotonic() - still < 0.2 and time.monotonic() < deadline:
                    time.sleep(0.02)
                    if journal() != size:
                        size, still = journal(), time.monotonic()
                os.kill(os.getpid(), signal.SIGKILL)
print("done", f.examples_written, flush=True)
'''


def run_script(tmp_path, path, kill_after, mode):
    script = tmp_path / "fill.py"
    script.write_text(SCRIPT)
    env = dict(os.environ)
    return subprocess.run([sys.executable, str(script), str(path), str(kill_after), mode], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


def contents(path):
    ds = Dataset(str(path))
    out = {}
    for split in ("train", "test"):
        out[split] = [(e["x"].tobytes(), int(e["i"]))
                      for e in ds.as_numpy_iterator(split=split, shuffle=0, repeat=False)]
    return out


@pytest.mark.parametrize("mode", ["skip", "ignore"])
def test_killed_filler_resumes_to_the_uninterrupted_dataset(tmp_path, mode):
    reference = tmp_path / "reference"
    done = run_script(tmp_path, reference, 0, mode)
    assert done.returncode == 0, done.stderr
    assert "kept 0 0 0" in done.stdout
    want = contents(reference)
    assert len(want["train"]) == 96 and len(want["test"]) == 40

    path = tmp_path / "resumed"
    killed = run_script(tmp_path, path, 60, mode)  # past 7 full shards of 8, mid-train
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert "done" not in killed.stdout
    rerun = run_script(tmp_path, path, 0, mode)
    assert rerun.returncode == 0, rerun.stderr
    kept = rerun.stdout.split("\n")[0].split()
    assert kept[0] == "kept" and 0 < int(kept[1]) < 96 and int(kept[1]) % 8 == 0 and kept[2] == "0", rerun.stdout
    written = int(rerun.stdout.split("done")[1])
    assert written == 96 + 40 - int(kept[1])
    assert contents(path) == want
    Dataset(str(path)).check()
    assert not list((path / ".sedpack-hpc" / "jobs").glob("*.journal"))


def test_changed_job_parameters_are_refused(tmp_path):
    path = tmp_path / "ds"
    killed = run_script(tmp_path, path, 30, "skip")
    assert killed.returncode == -signal.SIGKILL
    ds = Dataset(str(path))
    with pytest.raises(Exception, match="seed"):
        with ds.filler(job_id="fill1", job_parameters={"seed": 4}):
            pass
    with ds.filler(job_id="fill1", job_parameters={"seed": 4}, restart=True) as f:
        assert f.resumed_examples == {"train": 0, "test": 0, "holdout": 0}


def test_resume_arguments_need_a_job_id(tmp_path):
    ds = Dataset.create(str(tmp_path / "ds"), dataset_structure=sedpack_hpc.DatasetStructure(
        saved_data_description=[sedpack_hpc.Attribute(name="i", dtype="int64", shape=())]))
    with pytest.raises(ValueError, match="job_id"):
        ds.filler(restart=True)
    with pytest.raises(ValueError, match="relative_path_from_split"):
        ds.filler(job_id="j", relative_path_from_split="sub")


def test_create_exist_ok_opens_the_same_structure_and_refuses_another(tmp_path):
    path = str(tmp_path / "ds")

    def structure(length, compression="LZ4"):
        return sedpack_hpc.DatasetStructure(
            saved_data_description=[sedpack_hpc.Attribute(name="x", dtype="float32", shape=(length,))],
            compression=compression, examples_per_shard=8)

    first = Dataset.create(path, dataset_structure=structure(16))
    with first.filler() as f:
        f.write_example(values={"x": [1.0] * 16}, split="train")
    # Without exist_ok, as the reference: the dataset is there.
    with pytest.raises(sedpack_hpc.DatasetExistsError):
        Dataset.create(path, dataset_structure=structure(16))
    again = Dataset.create(path, dataset_structure=structure(16), exist_ok=True)
    assert [list(e["x"]) for e in again.as_numpy_iterator(split="train", shuffle=0, repeat=False)] == [[1.0] * 16]
    with pytest.raises(ValueError, match=r"saved_data_description\[0\]: the dataset has x float32\[16\], this call x float32\[17\]"):
        Dataset.create(path, dataset_structure=structure(17), exist_ok=True)
    with pytest.raises(ValueError, match="compression: the dataset has LZ4, this call ZSTD"):
        Dataset.create(path, dataset_structure=structure(16, "ZSTD"), exist_ok=True)
    # A new path is created as without it.
    fresh = Dataset.create(str(tmp_path / "new"), dataset_structure=structure(4), exist_ok=True)
    assert tuple(fresh.dataset_structure.saved_data_description[0].shape) == (4,)


@pytest.mark.parametrize("env, expected", [
    ({"SLURM_ARRAY_JOB_ID": "41", "SLURM_ARRAY_TASK_ID": "3", "SLURM_JOB_ID": "44"}, "slurm-41-3"),
    ({"SLURM_JOB_ID": "44"}, "slurm-44"),
    ({}, "None"),
])
def test_slurm_job_id_is_the_array_task_across_requeues(env, expected):
    # A requeued array task gets a new SLURM_JOB_ID but keeps its array job
    # and task ids: the job id must come from those (a fresh interpreter, as
    # SLURM starts one per task).
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    out = subprocess.run([sys.executable, "-c", "import sedpack_hpc; print(sedpack_hpc.slurm_job_id())"],
                         env={**clean, **env}, capture_output=True, text=True, check=True).stdout.strip()
    assert out == expected
