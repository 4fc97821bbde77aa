# SPDX-License-Identifier: Apache-2.0
"""The package's surface: `__all__`, a docstring on every public class,
method and property, the reprs, and no import-time side effects (the
package's Dataset is a plain subclass, the reference's error class is
adopted only when asked: dropin.adopt_reference_errors)."""
import inspect
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import sedpack_hpc
from sedpack_hpc import Attribute, Dataset, DatasetStructure, Metadata
from sedpack_hpc import _sedpack_hpc as ext

# pybind11's generated signature lines: not a docstring by themselves.
SIGNATURE = re.compile(r"^(\d+\. )?[A-Za-z_][A-Za-z_0-9]*\(.*\)( -> .*)?$")
DOCUMENTED_DUNDERS = ("__init__",)


def doc_text(obj):
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    lines = [line.strip() for line in (inspect.getdoc(obj) or "").splitlines()]
    return " ".join(line for line in lines if line and line != "Overloaded function." and not SIGNATURE.match(line))


def own_members(cls):
    """(name, raw attribute) of cls's public members, inherited ones included,
    but not those every class or exception has."""
    skip = set().union(*(dir(base) for base in cls.__mro__ if base.__module__ == "builtins"))
    for name in dir(cls):
        if (name.startswith("_") and name not in DOCUMENTED_DUNDERS) or (name in skip and name not in DOCUMENTED_DUNDERS):
            continue
        raw = inspect.getattr_static(cls, name)
        if name == "__init__" and raw in (object.__init__, BaseException.__init__):
            continue  # no constructor of its own
        if name == "__init__" and getattr(raw, "__objclass__", None) is not None:
            continue  # a slot wrapper: pybind11's placeholder of a class made by the module only
        yield name, raw


def public_objects(module, names):
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            yield name, obj
            for member, raw in own_members(obj):
                yield f"{name}.{member}", raw
        elif callable(obj):
            yield name, obj


def undocumented(module, names):
    return [name for name, obj in public_objects(module, names) if not doc_text(obj)]


def test_all_lists_the_public_names():
    assert len(set(sedpack_hpc.__all__)) == len(sedpack_hpc.__all__)
    for name in sedpack_hpc.__all__:
        assert hasattr(sedpack_hpc, name), name
    # Every public name of the extension is public in the package too.
    assert set(ext.__all__) <= set(sedpack_hpc.__all__), set(ext.__all__) - set(sedpack_hpc.__all__)
    assert set(ext.__all__) == {n for n in vars(ext) if not n.startswith("_")}
    # `import *` gives exactly __all__.
    scope = {}
    exec("from sedpack_hpc import *", scope)  # noqa: S102
    assert {n for n in scope if n != "__builtins__"} == set(sedpack_hpc.__all__)


def test_every_public_member_has_a_docstring():
    assert undocumented(ext, ext.__all__) == []
    assert undocumented(sedpack_hpc, sedpack_hpc.__all__) == []
    assert doc_text(sedpack_hpc) and doc_text(ext) and doc_text(sedpack_hpc.dropin) and doc_text(sedpack_hpc.tf)


def test_the_docstring_check_sees_a_missing_one():
    class Probe:
        """Documented."""

        def documented(self):
            """Yes."""

        def bare(self):
            pass

        @property
        def bare_property(self):
            return 1

    probe = type("module", (), {"Probe": Probe, "bare_function": lambda: None})
    assert undocumented(probe, ["Probe", "bare_function"]) == ["Probe.bare", "Probe.bare_property", "bare_function"]
    # A pybind11 method whose docstring is its signature only counts as undocumented.
    assert not doc_text(type("P", (), {"__doc__": "get(self: Dataset, split: str, index: int) -> dict\n"}))


def test_signatures_name_what_they_take():
    assert "path: str | os.PathLike[str]" in ext.Dataset.__init__.__doc__
    assert "handle" not in ext.Dataset.create.__doc__.splitlines()[0]
    for name in ("as_numpy_iterator", "as_numpy_iterator_batched", "as_numpy_iterator_elastic", "filler", "check"):
        first = getattr(ext.Dataset, name).__doc__.splitlines()[0]
        assert ": object" not in first and ": handle" not in first, first
    assert list(inspect.signature(Dataset.create).parameters) == ["path", "metadata", "dataset_structure", "exist_ok"]


@pytest.fixture()
def ds(tmp_path):
    ds = Dataset.create(tmp_path / "ds", metadata=Metadata(description="api"), dataset_structure=DatasetStructure(
        saved_data_description=[Attribute(name="x", dtype="int32", shape=(2,)), Attribute(name="s", dtype="str", shape=())],
        compression="ZSTD", examples_per_shard=4))
    with ds.filler() as f:
        for k in range(10):
            f.write_example(values={"x": np.array([k, k], np.int32), "s": str(k)}, split="train")
        f.write_example(values={"x": np.array([0, 0], np.int32), "s": ""}, split="test")
    return Dataset(ds.path)


def test_dataset_repr(ds, tmp_path):
    assert repr(ds) == (f"<Dataset {str(ds.path)!r} (fb, ZSTD; x, s): "
                        f"train 10 examples in 3 shards, test 1 example in 1 shard>")
    empty = Dataset.create(tmp_path / "empty", metadata={}, dataset_structure={
        "compression": "", "saved_data_description": [{"name": "k", "dtype": "int", "shape": []}]})
    assert repr(empty) == f"<Dataset {str(empty.path)!r} (fb; k): no examples>"
    many = [{"name": f"a{i}", "dtype": "uint8", "shape": [1]} for i in range(10)]
    wide = Dataset.create(tmp_path / "wide", dataset_structure={"saved_data_description": many})
    assert repr(wide).endswith("(fb, GZIP; a0, a1, a2, a3, a4, a5, a6, a7, +2 more): no examples>")


def test_record_reprs(ds):
    assert repr(Attribute(name="x", dtype="uint8", shape=(2,))) == \
        "Attribute(name='x', dtype='uint8', shape=[2], custom_metadata={})"
    assert repr(Metadata(description="d")).startswith("Metadata(description='d', dataset_license=")
    assert repr(DatasetStructure(examples_per_shard=3)).startswith("DatasetStructure(saved_data_description=[], ")
    split = ds.dataset_info.splits["train"]
    assert re.fullmatch(r"ShardListInfo\(shard_list_info_file=FileInfo\(file_path=train/shards_list.json, "
                        r"hash_checksums=\('[0-9a-f]{64}',\)\), number_of_examples=10, number_of_shards=3\)", repr(split))
    info = repr(ds.dataset_info)
    assert info.startswith("DatasetInfo(metadata=Metadata(description='api'") and "splits={'train': ShardListInfo(" in info
    assert repr(ds.as_numpy_iterator(split="train", seed=7)) == "<NumpyIterator seed=7>"
    assert repr(ds.as_numpy_iterator_elastic(split="train")) == "<ElasticIterator epoch_size=10>"
    filler = ds.filler(job_id="j1")
    assert repr(filler) == f"<DatasetFiller of {str(ds.path)!r}, job 'j1': not writing>"
    with ds.filler() as f:
        f.write_example(values={"x": np.array([1, 1], np.int32), "s": "y"}, split="holdout")
        assert repr(f) == f"<DatasetFiller of {str(ds.path)!r}: 1 examples written>"


def test_the_package_dataset_is_a_plain_subclass(ds):
    assert issubclass(Dataset, ext.Dataset) and Dataset is not ext.Dataset
    assert type(Dataset.create) is type(ds.filler)  # a bound method (of the class): defined in Python
    assert type(ds) is Dataset and isinstance(ds, ext.Dataset)
    assert type(Dataset(ext.Dataset(ds.path))) is Dataset  # the extension's handle, adopted without a reread
    again = pickle.loads(pickle.dumps(ds))
    assert type(again) is Dataset and again.path == ds.path and again.dataset_info == ds.dataset_info
    with pytest.raises(AttributeError):
        ds.not_an_attribute = 1  # no instance __dict__, as the extension's class
    # The extension's class is not changed by importing the package.
    for name in ("as_tfdataset", "as_numpy_iterator_concurrent", "write_multiprocessing", "_dataset_info"):
        assert name in vars(Dataset) and not hasattr(ext.Dataset, name), name
    with pytest.raises(TypeError):
        Dataset(42)


def test_importing_the_package_changes_nothing_else():
    code = ("import sys\n"
            "finders = list(sys.meta_path)\n"
            "import sedpack_hpc, sedpack_hpc.torch\n"
            "assert sys.meta_path == finders, sys.meta_path\n"
            "assert sedpack_hpc.DatasetExistsError is sedpack_hpc._sedpack_hpc.DatasetExistsError\n"
            "assert 'sedpack' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
