# SPDX-License-Identifier: Apache-2.0
"""sedpack_hpc: the sedpack-hpc C++ reader and writer, with the names of the
reference's `sedpack.io` (Dataset, Metadata, DatasetStructure, Attribute).

Everything is implemented in the C++ extension `_sedpack_hpc`; this file only
re-exports it.
"""
from ._sedpack_hpc import *  # noqa: F401,F403
from ._sedpack_hpc import __version__  # noqa: F401
