# SPDX-License-Identifier: Apache-2.0
"""Writing with sedpack_hpc: round trips for every dtype, shard type and
codec; conversions of numpy input; errors."""
import json

import numpy as np
import pytest

import sedpack_hpc
from sedpack_hpc import Attribute, Dataset, DatasetStructure, Metadata

NUMERIC = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64"]
# The reference's tfrec writer cannot store these (sedpack/shard/shard.h).
NOT_IN_TFREC = {"bool", "int16", "uint16", "uint32", "uint64"}
CODECS = {
    "fb": ["", "GZIP", "ZLIB", "BZ2", "LZMA", "LZ4", "ZSTD"],
    "npz": ["", "ZIP"],
    "tfrec": ["", "GZIP", "ZLIB"],
}
CASES = [(t, c) for t, cs in CODECS.items() for c in cs]


def random_value(rng, dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("float"):
        # Exact in float16 (and so in the float32 tfrec stores float64 in).
        return (rng.integers(-512, 512, size=shape) / 8).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def schema_for(shard_file_type):
    attrs = []
    for dt in NUMERIC:
        if shard_file_type == "tfrec" and dt in NOT_IN_TFREC:
            continue
        attrs.append({"name": f"a_{dt}", "dtype": dt, "shape": [2, 3]})
        attrs.append({"name": f"s_{dt}", "dtype": dt, "shape": []})
    attrs += [
        {"name": "n", "dtype": "int", "shape": []},
        {"name": "text", "dtype": "str", "shape": []},
        {"name": "blob", "dtype": "bytes", "shape": []},
        {"name": "fixed", "dtype": "bytes", "shape": [4]},
    ]
    return attrs


def make_examples(attrs, count, seed):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        values = {}
        for a in attrs:
            if a["dtype"] == "int":
                values[a["name"]] = int(rng.integers(-2**62, 2**62)) * (-1) ** k
            elif a["dtype"] == "str":
                values[a["name"]] = f"ex{k}:" + "é" * (k % 3)
            elif a["name"] == "blob":
                values[a["name"]] = bytes(rng.integers(1, 256, size=k % 5, dtype=np.uint8))
            elif a["name"] == "fixed":
                values[a["name"]] = rng.integers(0, 256, size=4, dtype=np.uint8)
            else:
                values[a["name"]] = random_value(rng, a["dtype"], tuple(a["shape"]))
        out.append(values)
    return out


def assert_same(got, want, attrs, shard_file_type="fb"):
    for a in attrs:
        g, w = got[a["name"]], want[a["name"]]
        if a["dtype"] == "str" and shard_file_type == "tfrec":
            # As the reference's TensorFlow reader gives them.
            assert g == w.encode() and type(g) is bytes, a["name"]
        elif a["name"] == "fixed":
            assert g == bytes(w)
        elif a["dtype"] in ("int", "str", "bytes"):
            assert g == w and type(g) is type(w), a["name"]
        else:
            g = np.asarray(g)
            assert g.dtype == np.dtype(a["dtype"]), a["name"]
            assert g.shape == tuple(a["shape"]), a["name"]
            np.testing.assert_array_equal(g, w, err_msg=a["name"])


@pytest.mark.parametrize("shard_file_type,compression", CASES)
def test_round_trip(tmp_path, shard_file_type, compression):
    attrs = schema_for(shard_file_type)
    structure = {"saved_data_description": attrs, "compression": compression,
                 "examples_per_shard": 3, "shard_file_type": shard_file_type,
                 "hash_checksum_algorithms": ["sha256", "xxh64"]}
    ds = Dataset.create(tmp_path / "ds", metadata={"description": "round trip"}, dataset_structure=structure)
    examples = make_examples(attrs, 10, seed=len(attrs))
    splits = ["train" if k % 4 else "test" for k in range(10)]
    with ds.filler() as f:
        for k, (values, split) in enumerate(zip(examples, splits)):
            f.write_example(values=values, split=split,
                            custom_metadata={"part": k // 5} if split == "train" else None)
    for reopened in (ds, Dataset(tmp_path / "ds")):
        reopened.check(hash_checksums_values=reopened.current_metadata_checksums())
        for split in ("train", "test"):
            want = [e for e, s in zip(examples, splits) if s == split]
            got = list(reopened.as_numpy_iterator(split=split, shuffle=0, repeat=False))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert_same(g, w, attrs, shard_file_type)
    assert ds.dataset_info.splits["train"].number_of_examples == splits.count("train")
    metas = []
    list(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False,
                              shard_filter=lambda s: metas.append(s.custom_metadata) or True))
    assert {json.dumps(m) for m in metas} == {'{"part": 0}', '{"part": 1}'}


def small_dataset(tmp_path, name="ds", **structure):
    s = {"saved_data_description": [
        Attribute(name="x", dtype="uint8", shape=(3,)),
        Attribute(name="f", dtype="float32", shape=(2, 2)),
        Attribute(name="n", dtype="int", shape=()),
        Attribute(name="s", dtype="str", shape=()),
    ], "examples_per_shard": 4}
    s.update(structure)
    return Dataset.create(tmp_path / name, metadata=Metadata(description="small"),
                          dataset_structure=DatasetStructure(**s))


def good_values(k=0):
    return {"x": np.array([1, 2, 3], np.uint8), "f": np.eye(2, dtype=np.float32) * k, "n": k, "s": f"s{k}"}


def test_models_have_the_reference_defaults():
    m = Metadata()
    assert (m.description, m.dataset_license, m.dataset_version, m.download_from, m.custom_metadata) == (
        "", "https://creativecommons.org/licenses/by/4.0/", "1.0.0", "", {})
    s = DatasetStructure()
    assert (s.saved_data_description, s.compression, s.examples_per_shard, s.shard_file_type,
            s.hash_checksum_algorithms) == ([], "GZIP", 256, "fb", ("sha256",))
    a = Attribute(name="a", dtype="bytes", shape=())
    assert a.custom_metadata == {} and a.has_variable_size()
    with pytest.raises(ValueError):
        Attribute(name="a", dtype="uint8", shape=(0,))
    with pytest.raises(ValueError):
        DatasetStructure(compression="SNAPPY")
    with pytest.raises(ValueError):
        Metadata(no_such_field=1)


def test_conversions_that_are_exact(tmp_path):
    ds = small_dataset(tmp_path)
    with ds.filler() as f:
        f.write_example(values={"x": [1, 2, 3], "f": [[0, 1], [2, 3]], "n": np.int16(7), "s": "a"}, split="train")
        f.write_example(values={"x": np.array([[1], [2], [3]], np.int64)[:, 0],  # strided int64
                                "f": np.array([[0, 2], [1, 3]], np.float64).T,  # Fortran order, float64
                                "n": 2**62, "s": np.str_("b")}, split="train")
        f.write_example(values={"x": np.array([1, 2, 3], ">u2"), "f": np.zeros((2, 2), ">f4"), "n": True,
                                "s": ""}, split="train")
    got = list(ds.as_numpy_iterator(split="train", shuffle=0, repeat=False))
    assert [g["x"].tolist() for g in got] == [[1, 2, 3]] * 3
    assert got[0]["f"].tolist() == [[0, 1], [2, 3]] and got[1]["f"].tolist() == [[0, 1], [2, 3]]
    assert [g["n"] for g in got] == [7, 2**62, 1]
    assert [g["s"] for g in got] == ["a", "b", ""]


@pytest.mark.parametrize("values,attribute", [
    ({"x": [1, 2, 300]}, "x"),           # out of uint8
    ({"x": [1, 2, -1]}, "x"),
    ({"x": [1.5, 2, 3]}, "x"),           # not an integer
    ({"f": [[0.1, 0], [0, 0]]}, "f"),    # float64 0.1 is not a float32
    ({"x": [1, 2]}, "x"),                # wrong shape
    ({"x": ["a", "b", "c"]}, "x"),       # not numeric
    ({"n": 2**63}, "n"),                 # does not fit int64
    ({"n": 1.0}, "n"),
    ({"s": b"bytes"}, "s"),
    ({"x": None}, "x"),
])
def test_conversions_that_are_not_exact(tmp_path, values, attribute):
    ds = small_dataset(tmp_path)
    with ds.filler() as f:
        v = good_values()
        v.update(values)
        with pytest.raises(ValueError, match=f'"{attribute}"'):
            f.write_example(values=v, split="train")
        f.write_example(values=good_values(), split="train")  # the filler is still usable
    assert ds.dataset_info.splits["train"].number_of_examples == 1


def test_missing_and_unknown_attributes(tmp_path):
    ds = small_dataset(tmp_path)
    with ds.filler() as f:
        v = good_values()
        del v["n"]
        with pytest.raises(ValueError, match='"n"'):
            f.write_example(values=v, split="train")
        v = good_values()
        v["typo"] = 1
        with pytest.raises(ValueError, match='"typo"'):
            f.write_example(values=v, split="train")
        with pytest.raises(ValueError, match="split"):
            f.write_example(values=good_values(), split="validation")


def test_exception_in_the_with_block_publishes_nothing(tmp_path):
    ds = small_dataset(tmp_path)
    with pytest.raises(RuntimeError):
        with ds.filler() as f:
            for k in range(9):
                f.write_example(values=good_values(k), split="train")
            raise RuntimeError("stop")
    assert Dataset(tmp_path / "ds").dataset_info.splits == {}


def test_create_errors(tmp_path):
    small_dataset(tmp_path)
    with pytest.raises(sedpack_hpc.DatasetExistsError):
        small_dataset(tmp_path)
    with pytest.raises(FileExistsError):
        small_dataset(tmp_path)
    with pytest.raises(ValueError, match="ZIP"):
        small_dataset(tmp_path, name="other", compression="ZIP")


def test_append_in_a_second_session(tmp_path):
    ds = small_dataset(tmp_path)
    with ds.filler() as f:
        for k in range(5):
            f.write_example(values=good_values(k), split="train")
    ds = Dataset(tmp_path / "ds")
    with ds.filler() as f:
        for k in range(5, 8):
            f.write_example(values=good_values(k), split="train")
    got = [e["n"] for e in Dataset(tmp_path / "ds").as_numpy_iterator(split="train", shuffle=0, repeat=False)]
    assert got == list(range(8))


def test_verify_hashes_strict_checks_the_recorded_hash(tmp_path):
    """The default check uses the checks sidecar the filler wrote; "strict" the
    recorded hash: a shard rewritten together with its sidecar record passes
    the first and fails the second. Anything but True, False or "strict" is refused."""
    ds = small_dataset(tmp_path)
    with ds.filler() as f:
        for k in range(4):
            f.write_example(values=good_values(k), split="train")
    root = tmp_path / "ds"
    assert (root / ".sedpack-hpc" / "checks.bin").exists()

    def read(**kw):
        return [e["n"] for e in Dataset(root).as_numpy_iterator(split="train", shuffle=0, repeat=False, **kw)]

    assert read() == read(verify_hashes="strict") == read(verify_hashes=False) == list(range(4))
    assert Dataset(root).get("train", 2)["n"] == 2
    # A flipped byte: caught by the default check (the sidecar) and by strict.
    shard = next(p for p in (root / "train").rglob("*.fb"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    for kw in ({}, {"verify_hashes": "strict"}):
        with pytest.raises(Exception, match="mismatch|does not match"):
            read(**kw)
    with pytest.raises(ValueError):
        read(verify_hashes="loose")
