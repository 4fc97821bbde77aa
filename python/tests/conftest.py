# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures for the sedpack_hpc tests (run by the ctest `python_pytest`)."""
import os
import pathlib
import sys

import pytest

GOLDEN_DIR = pathlib.Path(
    os.environ.get("SEDPACK_GOLDEN_DIR",
                   pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "golden"))
sys.path.insert(0, str(GOLDEN_DIR))  # golden_values.py: the fixtures' formulas


@pytest.fixture(scope="session")
def golden_dir():
    return GOLDEN_DIR
