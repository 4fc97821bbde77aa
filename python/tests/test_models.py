# SPDX-License-Identifier: Apache-2.0
"""Dataset.create with the reference's own model classes.

The reference (sedpack.io.metadata) defines Metadata, DatasetStructure and
Attribute as pydantic models; sedpack_hpc never imports it. The reference is
not installed in CI, so the stand-ins below behave as its pydantic models do
(the same fields and defaults, tuple shapes and hash_checksum_algorithms,
model_dump(mode=...), model_fields_set, extra fields such as custom_metadata);
`test_the_real_reference_models` uses the reference itself when it is
importable and is skipped otherwise.
"""
import collections
import dataclasses

import numpy as np
import pytest

import sedpack_hpc
from sedpack_hpc import Attribute, Dataset, DatasetStructure

OUR_SEDPACK_VERSION = sedpack_hpc.Metadata().sedpack_version


class PydanticLike:
    """The parts of pydantic.BaseModel the reference's callers see."""
    FIELDS = {}  # name -> default factory

    def __init__(self, **kwargs):
        unknown = set(kwargs) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"unknown fields {unknown}")
        for name, default in self.FIELDS.items():
            setattr(self, name, kwargs[name] if name in kwargs else default())
        self.model_fields_set = set(kwargs)

    def model_dump(self, mode="python"):
        out = {}
        for name in self.FIELDS:
            v = getattr(self, name)
            if isinstance(v, list):
                v = [x.model_dump(mode=mode) if isinstance(x, PydanticLike) else x for x in v]
            if mode == "json" and isinstance(v, tuple):
                v = list(v)
            out[name] = v
        return out


class RefMetadata(PydanticLike):
    # A newer reference fills in its own version (here one newer than any).
    FIELDS = {"description": str, "dataset_license": lambda: "https://creativecommons.org/licenses/by/4.0/",
              "dataset_version": lambda: "1.0.0", "download_from": str, "custom_metadata": dict,
              "sedpack_version": lambda: "9.9.9"}


class RefAttribute(PydanticLike):
    FIELDS = {"name": str, "dtype": str, "shape": tuple, "custom_metadata": dict}


class RefDatasetStructure(PydanticLike):
    FIELDS = {"saved_data_description": list, "compression": lambda: "GZIP", "examples_per_shard": lambda: 256,
              "shard_file_type": lambda: "fb", "hash_checksum_algorithms": lambda: ("sha256",)}


class OldStyleModel:
    """A model_dump() without the `mode` keyword."""

    def __init__(self, **fields):
        self._fields = fields

    def model_dump(self):
        return dict(self._fields)


@dataclasses.dataclass
class AttributeRecord:
    name: str
    dtype: str
    shape: tuple
    note: str = "not a field of the model: not read"


AttributeTuple = collections.namedtuple("AttributeTuple", "name dtype shape")


def ref_structure(**kw):
    kw.setdefault("saved_data_description", [
        RefAttribute(name="trace", dtype="float16", shape=(2, 3), custom_metadata={"unit": "mV"}),
        RefAttribute(name="key", dtype="uint8", shape=(4,)),
        RefAttribute(name="note", dtype="str", shape=()),
    ])
    return RefDatasetStructure(**kw)


def values(k):
    return {"trace": np.full((2, 3), k, np.float16), "key": np.arange(4, dtype=np.uint8) + k, "note": f"#{k}"}


def write_and_read(ds, n=5):
    with ds.filler() as f:
        for k in range(n):
            f.write_example(values=values(k), split="train")
    got = list(Dataset(ds.path).as_numpy_iterator(split="train", shuffle=0, repeat=False))
    assert [g["note"] for g in got] == [f"#{k}" for k in range(n)]
    for k, g in enumerate(got):
        np.testing.assert_array_equal(g["trace"], values(k)["trace"])
        np.testing.assert_array_equal(g["key"], values(k)["key"])


def test_reference_shaped_models(tmp_path):
    ds = Dataset.create(tmp_path / "ds",
                        metadata=RefMetadata(description="from the reference", custom_metadata={"rig": [1, 2]}),
                        dataset_structure=ref_structure(compression="ZSTD", examples_per_shard=2,
                                                        hash_checksum_algorithms=("sha256", "xxh64")))
    write_and_read(ds)
    info = Dataset(tmp_path / "ds").dataset_info
    assert info.metadata.description == "from the reference"
    assert info.metadata.custom_metadata == {"rig": [1, 2]}
    assert info.metadata.dataset_license == "https://creativecommons.org/licenses/by/4.0/"
    # The reference's own version number, filled in by it, is not what we write.
    assert info.metadata.sedpack_version == OUR_SEDPACK_VERSION
    s = info.dataset_structure
    assert (s.compression, s.examples_per_shard, s.shard_file_type, s.hash_checksum_algorithms) == (
        "ZSTD", 2, "fb", ("sha256", "xxh64"))
    assert [(a.name, a.dtype, a.shape) for a in s.saved_data_description] == [
        ("trace", "float16", (2, 3)), ("key", "uint8", (4,)), ("note", "str", ())]
    assert s.attribute_by_name("trace").custom_metadata == {"unit": "mV"}
    assert ds.dataset_info.splits["train"].number_of_shards == 3


def test_reference_defaults_and_an_explicit_sedpack_version(tmp_path):
    ds = Dataset.create(tmp_path / "ds", metadata=RefMetadata(sedpack_version="0.1.2"),
                        dataset_structure=ref_structure())
    s = ds.dataset_structure
    assert (s.compression, s.examples_per_shard, s.hash_checksum_algorithms) == ("GZIP", 256, ("sha256",))
    assert ds.metadata.sedpack_version == "0.1.2"  # set by the caller: kept


def test_models_in_other_shapes(tmp_path):
    # model_dump() without `mode`, dataclasses and namedtuples (fields read
    # as attributes), numpy dims, and our classes holding the reference's.
    structure = OldStyleModel(
        saved_data_description=[
            AttributeRecord(name="trace", dtype="float16", shape=(np.int64(2), np.int32(3))),
            AttributeTuple("key", "uint8", np.array([4])),
            {"name": "note", "dtype": "str", "shape": ()},
        ],
        compression="LZ4", examples_per_shard=np.int64(3))
    ds = Dataset.create(tmp_path / "a", metadata=OldStyleModel(description="old"), dataset_structure=structure)
    write_and_read(ds)
    assert ds.dataset_structure.saved_data_description[0].shape == (2, 3)
    assert ds.dataset_structure.examples_per_shard == 3

    ours = DatasetStructure(saved_data_description=[RefAttribute(name="trace", dtype="float16", shape=(2, 3)),
                                                    Attribute(**RefAttribute(name="key", dtype="uint8",
                                                                             shape=(4,)).model_dump()),
                                                    {"name": "note", "dtype": "str", "shape": ()}])
    write_and_read(Dataset.create(tmp_path / "b", metadata=None, dataset_structure=ours))
    mixed = {"saved_data_description": ref_structure().saved_data_description, "compression": "BZ2"}
    write_and_read(Dataset.create(tmp_path / "c", metadata={"description": "dict"}, dataset_structure=mixed))


def test_model_errors_name_the_field(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        Dataset.create(tmp_path / "a", dataset_structure=ref_structure(
            saved_data_description=[RefAttribute(name="x", dtype="uint8", shape=(0,))]))
    with pytest.raises(ValueError, match="SNAPPY"):
        Dataset.create(tmp_path / "b", dataset_structure=ref_structure(compression="SNAPPY"))
    # A field we do not know (a newer model?) is refused by name, as in a dict.
    with pytest.raises(ValueError, match="shard_compression_level"):
        Dataset.create(tmp_path / "c", dataset_structure=OldStyleModel(shard_compression_level=3))
    with pytest.raises(TypeError, match="DatasetStructure"):
        Dataset.create(tmp_path / "d", dataset_structure=object())
    with pytest.raises(ValueError):
        Dataset.create(tmp_path / "e", metadata=5)
    assert not any((tmp_path / d).exists() for d in "abcde")


def test_the_real_reference_models(tmp_path):
    ref = pytest.importorskip("sedpack.io.metadata", reason="the reference sedpack is not importable")
    structure = ref.DatasetStructure(
        saved_data_description=[ref.Attribute(name="trace", dtype="float16", shape=(2, 3),
                                              custom_metadata={"unit": "mV"}),
                                ref.Attribute(name="key", dtype="uint8", shape=(4,)),
                                ref.Attribute(name="note", dtype="str", shape=())],
        compression="ZSTD", examples_per_shard=2, hash_checksum_algorithms=("sha256", "xxh64"))
    metadata = ref.Metadata(description="the reference's classes", custom_metadata={"rig": 7})
    ds = Dataset.create(tmp_path / "ds", metadata=metadata, dataset_structure=structure)
    write_and_read(ds)
    info = Dataset(tmp_path / "ds").dataset_info
    want = structure.model_dump(mode="json")
    got = info.dataset_structure.model_dump()
    assert got == want
    m = info.metadata.model_dump()
    assert m.pop("sedpack_version") == OUR_SEDPACK_VERSION
    want = metadata.model_dump(mode="json")
    want.pop("sedpack_version")
    assert m == want
