# SPDX-License-Identifier: Apache-2.0
"""sedpack_hpc: the sedpack-hpc C++ reader and writer, with the names of the
reference's `sedpack.io` (Dataset, Metadata, DatasetStructure, Attribute).

Everything is implemented in the C++ extension `_sedpack_hpc`; this file
re-exports it and adds `Dataset.as_tfdataset` (tf.py, TensorFlow imported
when called) and the reference's other Dataset names (dropin.py). The torch
datasets are in `sedpack_hpc.torch`.
"""
from ._sedpack_hpc import *  # noqa: F401,F403
from ._sedpack_hpc import __version__  # noqa: F401
from ._sedpack_hpc import Dataset as _Dataset
from .tf import as_tfdataset as _as_tfdataset
from . import dropin as _dropin

_Dataset.as_tfdataset = _as_tfdataset
_dropin.install()
