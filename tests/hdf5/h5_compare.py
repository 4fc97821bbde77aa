# SPDX-License-Identifier: Apache-2.0
"""Compare two HDF5 files written by `sedpack export-hdf5` with h5py: the same
groups and datasets, each with the same dtype, shape and values (str and bytes
element by element), and the same attributes everywhere. Chunk layout and
compressed bytes may differ. Exit 0 if equal, 1 with the differences listed,
77 if h5py is missing. Usage: h5_compare.py A.h5 B.h5"""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"h5_compare.py: {e}", file=sys.stderr)
    sys.exit(77)


def same_value(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype == object:
            return all(same_value(x, y) for x, y in zip(a.ravel(), b.ravel()))
        # Bitwise: NaN payloads and -0.0 must survive too.
        return a.tobytes() == b.tobytes()
    return type(a) is type(b) and a == b


def objects(f):
    found = {}
    f.visititems(lambda name, obj: found.__setitem__(name, obj))
    return found


def compare_attrs(where, a, b, diffs):
    if sorted(a.attrs) != sorted(b.attrs):
        diffs.append(f"{where}: attributes {sorted(a.attrs)} vs {sorted(b.attrs)}")
        return
    for k in a.attrs:
        if not same_value(a.attrs[k], b.attrs[k]):
            diffs.append(f"{where}: attribute {k} differs")


def main():
    path_a, path_b = sys.argv[1], sys.argv[2]
    diffs = []
    datasets = 0
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        compare_attrs("/", fa, fb, diffs)
        oa, ob = objects(fa), objects(fb)
        if sorted(oa) != sorted(ob):
            diffs.append(f"objects {sorted(oa)} vs {sorted(ob)}")
        for name in sorted(set(oa) & set(ob)):
            a, b = oa[name], ob[name]
            compare_attrs(name, a, b, diffs)
            if not isinstance(a, h5py.Dataset):
                continue
            datasets += 1
            if a.dtype != b.dtype or a.shape != b.shape:
                diffs.append(f"{name}: {a.dtype} {a.shape} vs {b.dtype} {b.shape}")
            elif not same_value(a[()], b[()]):
                diffs.append(f"{name}: values differ")
    for d in diffs:
        print(f"{path_a} vs {path_b}: {d}", file=sys.stderr)
    if not diffs:
        print(f"equal: {datasets} datasets")
    return 1 if diffs or datasets == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
