# SPDX-License-Identifier: Apache-2.0
"""The framework adapters import their framework only when used."""
import subprocess
import sys

import pytest


def test_importing_the_module_imports_no_framework():
    code = ("import sys, sedpack_hpc, sedpack_hpc.torch\n"
            "assert hasattr(sedpack_hpc.Dataset, 'as_tfdataset')\n"
            "bad = [m for m in ('torch', 'tensorflow') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_as_tfdataset_needs_tensorflow(tmp_path):
    try:
        import tensorflow  # noqa: F401
        pytest.skip("tensorflow is installed: as_tfdataset is not expected to fail")
    except ImportError:
        pass
    import sedpack_hpc
    ds = sedpack_hpc.Dataset.create(tmp_path / "d", metadata={}, dataset_structure={
        "saved_data_description": [{"name": "k", "dtype": "int", "shape": []}], "examples_per_shard": 4})
    with pytest.raises(ImportError, match="tensorflow"):
        ds.as_tfdataset("train")
