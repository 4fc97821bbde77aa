# SPDX-License-Identifier: Apache-2.0
"""Every golden dataset written by the reference reads value for value as its
expected_examples.jsonl says (tests/data/golden/README.md)."""
import json
import shutil

import numpy as np
import pytest

import sedpack_hpc
from conftest import GOLDEN_DIR

FIXTURES = sorted(p.name for p in GOLDEN_DIR.iterdir()
                  if (p / "dataset" / "dataset_info.json").is_file())


def expected_records(fixture):
    with open(GOLDEN_DIR / fixture / "expected_examples.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def expected_json(fixture):
    return json.loads((GOLDEN_DIR / fixture / "expected.json").read_text(encoding="utf-8"))


def value_hex(value):
    if isinstance(value, str):
        return value.encode("utf-8").hex()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, int):
        return value.to_bytes(8, "little", signed=True).hex()
    return np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<")).tobytes().hex()


def assert_value(fixture_type, attr, value, expected):
    name, dtype, shape = attr["name"], attr["dtype"], tuple(attr["shape"])
    if dtype == "str":
        assert type(value) is str, name
    elif dtype == "bytes":
        assert type(value) is bytes, name
    elif dtype == "int":
        assert type(value) is int, name
    else:
        # fb gives a 0-d array for a scalar, npz a numpy scalar (as the reference).
        if fixture_type == "npz" and shape == ():
            assert isinstance(value, np.generic), name
        else:
            assert isinstance(value, np.ndarray), name
            assert not value.flags.writeable, name
        assert value.dtype == np.dtype(dtype), name
        assert value.shape == shape, name
    assert value_hex(value) == expected["hex"], name
    if "value" in expected and dtype not in ("str", "int"):
        assert np.asarray(value).tolist() == expected["value"], name
    elif "value" in expected:
        assert value == expected["value"], name


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if f != "fb_minimal"])
def test_reads_expected_values(fixture):
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / fixture / "dataset")
    exp = expected_json(fixture)
    attrs = exp["attributes"]
    assert [a.name for a in ds.dataset_structure.saved_data_description] == [a["name"] for a in attrs]
    records = expected_records(fixture)
    assert len(records) == 24
    splits = list(ds.dataset_info.splits)
    assert splits == list(exp["splits"])
    seen = 0
    for split in splits:
        got = list(ds.as_numpy_iterator(split=split, shuffle=0, repeat=False))
        want = [r for r in records if r["split"] == split]
        assert len(got) == len(want) == exp["splits"][split]["number_of_examples"]
        for example, record in zip(got, want):
            assert list(example) == [a["name"] for a in attrs]
            for attr in attrs:
                assert_value(exp["shard_file_type"], attr, example[attr["name"]],
                             record["values"][attr["name"]])
            seen += 1
    assert seen == 24


@pytest.mark.parametrize("fixture", FIXTURES)
def test_check_with_recorded_checksums(fixture):
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / fixture / "dataset")
    exp = expected_json(fixture)
    assert list(ds.current_metadata_checksums()) == exp["dataset_info_checksums"]
    ds.check(hash_checksums_values=tuple(exp["dataset_info_checksums"]))
    if exp["dataset_info_checksums"]:
        wrong = ("0" * len(exp["dataset_info_checksums"][0]),) + tuple(exp["dataset_info_checksums"][1:])
        with pytest.raises(ValueError):
            ds.check(hash_checksums_values=wrong)


@pytest.mark.parametrize("fixture", ["fb_none", "npz_none", "fb_continue"])
def test_shard_filter_reads_each_shard_alone(fixture):
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / fixture / "dataset")
    exp = expected_json(fixture)
    by_id = {r["id"]: r for r in expected_records(fixture)}
    for split, s in exp["splits"].items():
        for shard in s["shards"]:
            seen_meta = []

            def only_this(info, path=shard["file_path"]):
                keep = str(info.file_infos[0].file_path) == path
                if keep:
                    seen_meta.append(info.custom_metadata)
                return keep

            got = list(ds.as_numpy_iterator(split=split, shuffle=0, repeat=False, shard_filter=only_this))
            assert seen_meta == [shard["custom_metadata"]]
            assert [e["text"] for e in got] == [
                bytes.fromhex(by_id[k]["values"]["text"]["hex"]).decode() for k in shard["example_ids"]]


def test_fb_minimal():
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / "fb_minimal" / "dataset")
    exp = expected_json("fb_minimal")
    got = list(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False))
    assert len(got) == len(exp["examples"]) == 2
    for example, want in zip(got, exp["examples"]):
        assert value_hex(example["x"]) == want["x"]["hex"]
        assert example["s"] == want["s"]["value"]
        assert example["b"] == bytes.fromhex(want["b"]["hex"])


def test_dataset_info_fields():
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / "fb_zstd" / "dataset")
    md = ds.dataset_info.metadata
    assert md.description == "sedpack golden fixture fb_zstd"
    assert md.dataset_version == "1.2.3"
    assert md.custom_metadata["nested"] == {"list": [1, 2.5, "x"], "none": None, "flag": True}
    st = ds.dataset_structure
    assert st.compression == "ZSTD"
    assert st.shard_file_type == "fb"
    assert st.examples_per_shard == 4
    assert st.hash_checksum_algorithms == ("sha3_384", "sha3_512")
    assert st.attribute_by_name("f32").custom_metadata == {"unit": "volt", "scale": 0.25}
    assert st.attribute_by_name("f32").shape == (3, 4)
    train = ds.dataset_info.splits["train"]
    assert train.number_of_examples == 17
    assert json.loads(ds.dataset_info.model_dump_json(indent=2)) == json.loads(
        (GOLDEN_DIR / "fb_zstd" / "dataset" / "dataset_info.json").read_text())


@pytest.mark.parametrize("fixture", ["fb_lz4", "npz_zip"])
def test_get_equals_sequential(fixture, tmp_path):
    # A copy: get() may not write into the repository (it builds its index in memory).
    root = tmp_path / fixture
    shutil.copytree(GOLDEN_DIR / fixture / "dataset", root)
    ds = sedpack_hpc.Dataset(root)
    for split in ds.dataset_info.splits:
        seq = list(ds.as_numpy_iterator(split=split, shuffle=0, repeat=False))
        for i in reversed(range(len(seq))):
            got = ds.get(split, i)
            assert value_hex(got["u8"]) == value_hex(seq[i]["u8"])
            assert got["text"] == seq[i]["text"] and got["blob"] == seq[i]["blob"]
        with pytest.raises(ValueError):
            ds.get(split, len(seq))


def test_views_share_the_decoded_shard():
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / "fb_gzip" / "dataset")
    it = ds.as_numpy_iterator(split="train", shuffle=0, repeat=False)
    a, b = next(it), next(it)  # the first shard holds 4 examples
    assert a["f32"].base is not None and a["f32"].base is b["f32"].base
    assert a["u8"].base is a["f32"].base
    del it, b
    assert a["u8"].tolist() == list(range(16))  # still alive after the iterator is gone
    with pytest.raises(ValueError):
        a["u8"][0] = 1


def test_batched(tmp_path):
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / "fb_bz2" / "dataset")
    seq = list(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False))
    batches = list(ds.as_numpy_iterator_batched(split="train", batch_size=5, shuffle=0, repeat=False))
    assert [len(b["n"]) for b in batches] == [5, 5, 5, 2]
    assert batches[0]["f32"].shape == (5, 3, 4)
    assert batches[0]["u16"].shape == (5,)
    np.testing.assert_array_equal(np.concatenate([b["i64"] for b in batches]), np.stack([e["i64"] for e in seq]))
    assert sum((b["text"] for b in batches), []) == [e["text"] for e in seq]
    assert sum((b["blob"] for b in batches), []) == [e["blob"] for e in seq]
    assert sum((b["n"] for b in batches), []) == [e["n"] for e in seq]


def test_shards_limit_type_limit_and_process_record():
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / "fb_none" / "dataset")
    exp = expected_json("fb_none")["splits"]["train"]["shards"]
    got = list(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False, shards=2))
    assert len(got) == exp[0]["number_of_examples"] + exp[1]["number_of_examples"]
    metas = [json.dumps(s["custom_metadata"], sort_keys=True) for s in exp]
    kept = []
    for i, m in enumerate(metas):
        if metas[:i].count(m) < 1:
            kept.append(i)
    got = list(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False, custom_metadata_type_limit=1))
    assert len(got) == sum(exp[i]["number_of_examples"] for i in kept)
    ns = list(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False, process_record=lambda e: e["n"]))
    assert ns == [e["n"] for e in ds.as_numpy_iterator(split="train", shuffle=0, repeat=False)]


def test_repeat_cycles():
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / "fb_none" / "dataset")
    it = ds.as_numpy_iterator(split="test", shuffle=0)  # repeat=True is the default
    got = [next(it)["n"] for _ in range(12)]
    assert got[:5] == got[5:10] and got[10:] == got[:2]


def test_shard_filter_exception_propagates():
    ds = sedpack_hpc.Dataset(GOLDEN_DIR / "fb_none" / "dataset")

    def bad(info):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        ds.as_numpy_iterator(split="train", shard_filter=bad, repeat=False)


def test_corrupted_shard_raises(tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(GOLDEN_DIR / "fb_none" / "dataset", root)
    shard = expected_json("fb_none")["splits"]["test"]["shards"][0]["file_path"]
    with open(root / shard, "ab") as f:
        f.write(b"\0")
    ds = sedpack_hpc.Dataset(root)
    with pytest.raises(sedpack_hpc.CorruptionError, match="mismatch"):
        list(ds.as_numpy_iterator(split="test", shuffle=0, repeat=False))
    with pytest.raises(ValueError):
        ds.check()


def test_open_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        sedpack_hpc.Dataset(tmp_path / "nothing")
