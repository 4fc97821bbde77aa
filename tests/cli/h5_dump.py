# SPDX-License-Identifier: Apache-2.0
"""Print an HDF5 file written by `sedpack export-hdf5` as `sedpack cat` prints a
split: one JSON object per example (attribute names in the file's order), so
that a test can compare the two. Usage: h5_dump.py FILE GROUP
Floats are printed as float(value) of their stored type; the test parses
both sides and compares them after casting cat's numbers to the HDF5 dtype."""
import base64
import json
import sys

import h5py
import numpy as np


def main():
    path, group = sys.argv[1], sys.argv[2]
    with h5py.File(path, "r") as f:
        g = f[group]
        names = json.loads(f.attrs["sedpack_dataset_info"])["dataset_structure"]["saved_data_description"]
        names = [a["name"] for a in names]
        rows = g[names[0]].shape[0]
        out = {"attrs": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in g.attrs.items()},
               "dtypes": {n: str(g[n].dtype) for n in names},
               "chunks": {n: list(g[n].chunks or []) for n in names},
               "root": {k: v for k, v in f.attrs.items()},
               "examples": []}
        cols = {n: g[n][()] for n in names}
        for i in range(rows):
            ex = {}
            for n in names:
                v = cols[n][i]
                if isinstance(v, bytes):
                    ex[n] = v.decode("utf-8")
                elif isinstance(v, str):
                    ex[n] = v
                elif g[n].dtype.kind == "O":  # variable-length uint8: bytes
                    ex[n] = base64.b64encode(np.asarray(v, dtype=np.uint8).tobytes()).decode()
                else:
                    ex[n] = np.asarray(v).tolist()
            out["examples"].append(ex)
    json.dump(out, sys.stdout)


main()
