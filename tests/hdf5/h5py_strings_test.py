# SPDX-License-Identifier: Apache-2.0
"""A capture written by h5py, the way real capture files store their metadata
(serial numbers and dates as strings, keys as opaque blobs, payloads as vlen
uint8) beside float traces, goes through `sedpack inspect-hdf5 --mapping` and
`import-hdf5`; every value `sedpack cat` prints must equal what h5py reads.
Then the dataset goes through export-hdf5 -> inspect-hdf5 --mapping ->
import-hdf5 and must come back unchanged (structure and every value).

Usage: h5py_strings_test.py SEDPACK WORKDIR [MPIEXEC]. With MPIEXEC the import
also runs on 2 ranks and must give the same examples. Exits 77 (ctest SKIP)
when h5py is not installed."""
import base64
import json
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"SKIP: h5py is not installed ({e}); apt-get install python3-h5py", file=sys.stderr)
    sys.exit(77)

ROWS = 37


def run(*args, stdout=None):
    r = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    if stdout:
        with open(stdout, "w") as f:
            f.write(r.stdout)
    return r


def write_capture(path):
    rng = np.random.default_rng(20261202)
    with h5py.File(path, "w") as f:
        f.attrs["device"] = "scope-7"  # root attributes are not rows: not imported
        g = f.create_group("profiling")
        g["trace"] = rng.normal(size=(ROWS, 50)).astype(np.float32)
        serial = [f"SN-{i:04d}-\u00c4\u00df\u20ac" if i % 6 else "" for i in range(ROWS)]
        g.create_dataset("serial", data=serial, dtype=h5py.string_dtype("utf-8"))
        operator = [["alice", "bob", "carol x"][i % 3] for i in range(ROWS)]
        g.create_dataset("operator", data=operator, dtype=h5py.string_dtype("ascii"))
        # Fixed-length 'S16' (NUL-padded): the date, shorter than 16 bytes.
        g["date"] = np.array([f"2026-12-02T13:{i:02d}".encode() for i in range(ROWS)], dtype="S16")
        g["key"] = np.frombuffer(rng.integers(0, 256, ROWS * 16, dtype=np.uint8).tobytes(), dtype="V16")
        payload = g.create_dataset("payload", (ROWS,), dtype=h5py.vlen_dtype(np.uint8))
        for i in range(ROWS):
            payload[i] = np.array([(i * 7 + j) % 256 if j % 3 else 0 for j in range(i % 11)], dtype=np.uint8)
        g["plaintext"] = rng.integers(0, 256, (ROWS, 16), dtype=np.uint8)
        rec = np.zeros(ROWS, dtype=[("id", "<i4"), ("label", "S8")])
        rec["id"] = np.arange(ROWS) * -3
        rec["label"] = [f"lab{i}".encode() for i in range(ROWS)]
        g["record"] = rec
        # A compound with a variable-length string member, as h5py writes log records.
        log = np.zeros(ROWS, dtype=[("n", "<u2"), ("note", h5py.string_dtype("utf-8"))])
        log["n"] = np.arange(ROWS)
        log["note"] = [f"note {i} \u2713" * (i % 4) for i in range(ROWS)]
        g["log"] = log
        # Numbers of every width, several dimensions.
        g["f16"] = rng.normal(size=(ROWS, 4)).astype(np.float16)
        g["f64"] = rng.normal(size=(ROWS, 2, 3))
        g["i8"] = rng.integers(-128, 128, (ROWS, 3), dtype=np.int8)
        g["i64"] = rng.integers(-(2 ** 63), 2 ** 63 - 1, ROWS, dtype=np.int64)
        g["u16"] = rng.integers(0, 2 ** 16, (ROWS, 2, 2), dtype=np.uint16)
        g["u64"] = rng.integers(0, 2 ** 64 - 1, ROWS, dtype=np.uint64)
        # numpy bools: h5py writes an enum {FALSE, TRUE}.
        g["ok"] = np.arange(ROWS) % 3 == 0
        g["bits"] = rng.integers(0, 2, (ROWS, 3)).astype(bool)


# What inspect-hdf5 --mapping must propose for each dataset (dtype, shape).
PROPOSED = {
    "trace": ("float32", [50]), "serial": ("str", []), "operator": ("str", []), "date": ("str", []),
    "key": ("bytes", [16]), "payload": ("bytes", []), "plaintext": ("uint8", [16]),
    "id": ("int32", [1]), "label": ("str", []), "f16": ("float16", [4]), "f64": ("float64", [2, 3]),
    "i8": ("int8", [3]), "i64": ("int64", [1]), "u16": ("uint16", [2, 2]), "u64": ("uint64", [1]),
    "ok": ("bool", [1]), "bits": ("bool", [3]), "n": ("uint16", [1]), "note": ("str", []),
}


def h5py_values(path):
    """Each attribute's values as h5py reads them, in sedpack's terms."""
    with h5py.File(path, "r") as f:
        g = f["profiling"]
        v = {
            "serial": list(g["serial"].asstr()[()]),
            "operator": list(g["operator"].asstr()[()]),
            # numpy strips an 'S' string's trailing NULs.
            "date": [b.decode() for b in g["date"][()]],
            "key": [k.tobytes() for k in g["key"][()]],
            "payload": [p.tobytes() for p in g["payload"][()]],
            "id": [[int(x)] for x in g["record"]["id"]],
            "label": [b.decode() for b in g["record"]["label"]],
            "n": [[int(x)] for x in g["log"]["n"]],
            "note": [b.decode() for b in g["log"]["note"]],
        }
        numbers = ("trace", "plaintext", "f16", "f64", "i8", "u16", "bits", "i64", "u64", "ok")
        for name in numbers:
            v[name] = list(g[name][()]) if g[name].ndim > 1 else [[x] for x in g[name][()]]
        return v, {n: g[n].dtype for n in numbers}


def cat(sedpack, ds):
    r = run(sedpack, "cat", ds, "--split", "train")
    return [json.loads(line) for line in r.stdout.splitlines()]


def compare(examples, want, dtypes, dtype_of):
    checked = 0
    if len(examples) != ROWS:
        sys.exit(f"FAIL: {len(examples)} examples imported, the file has {ROWS} rows")
    for name, values in want.items():
        for i, expected in enumerate(values):
            got = examples[i][name]
            if dtype_of[name] == "bytes":
                got = base64.b64decode(got)
            elif dtype_of[name] != "str":
                # cat prints exact numbers; cast them to the file's type and compare bit for bit.
                dt = dtypes.get(name, np.int32 if name == "id" else np.uint16)
                got = np.array(got, dtype=dt)
                expected = np.array(expected, dtype=dt)
                if got.shape != expected.shape or got.tobytes() != expected.tobytes():
                    sys.exit(f"FAIL: {name} row {i}: sedpack {got!r}, h5py {expected!r}")
                checked += 1
                continue
            if got != expected:
                sys.exit(f"FAIL: {name} row {i}: sedpack {got!r}, h5py {expected!r}")
            checked += 1
    return checked


def check_invalid_utf8(sedpack, work):
    """An 'S' string that is not UTF-8 stops a str import (exit 2, dataset and row
    named, nothing left behind); mapped as bytes it imports as it is."""
    bad = os.path.join(work, "bad.h5")
    with h5py.File(bad, "w") as f:
        f["serial"] = np.array([b"ok", b"caf\xe9", b"x"], dtype="S8")
    mapping = os.path.join(work, "bad.json")
    run(sedpack, "inspect-hdf5", bad, "--mapping", stdout=mapping)
    out = os.path.join(work, "bad_ds")
    # All or nothing (--no-journal): nothing is left behind.
    r = subprocess.run([sedpack, "import-hdf5", "-c", mapping, bad, "-o", out, "-q", "--no-journal"],
                       capture_output=True, text=True)
    if r.returncode != 2 or "/serial: row 1: the value is not valid UTF-8" not in r.stderr or \
            '"dtype": "bytes"' not in r.stderr or os.path.exists(out):
        sys.exit(f"FAIL: invalid UTF-8 as str: exit {r.returncode}, {r.stderr!r}")
    with open(mapping) as f:
        m = json.load(f)
    m["dataset_structure"]["saved_data_description"][0]["dtype"] = "bytes"
    with open(mapping, "w") as f:
        json.dump(m, f)
    run(sedpack, "import-hdf5", "-c", mapping, bad, "-o", out, "-q")
    got = [base64.b64decode(e["serial"]) for e in cat(sedpack, out)]
    if got != [b"ok", b"caf\xe9", b"x"]:
        sys.exit(f"FAIL: invalid UTF-8 as bytes: {got!r}")
    print("invalid UTF-8: refused as str (exit 2, row named), imported as bytes")


def main():
    sedpack, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    h5 = os.path.join(work, "capture.h5")
    write_capture(h5)

    mapping_path = os.path.join(work, "mapping.json")
    r = run(sedpack, "inspect-hdf5", h5, "--mapping", stdout=mapping_path)
    if r.stderr.strip():
        sys.exit(f"FAIL: inspect-hdf5 --mapping left things out:\n{r.stderr}")
    with open(mapping_path) as f:
        mapping = json.load(f)
    desc = mapping["dataset_structure"]["saved_data_description"]
    proposed = {a["name"]: (a["dtype"], a["shape"]) for a in desc}
    if proposed != PROPOSED:
        sys.exit(f"FAIL: proposed attributes {proposed}, expected {PROPOSED}")
    dtype_of = {n: d for n, (d, _) in proposed.items()}

    ds = os.path.join(work, "ds")
    run(sedpack, "import-hdf5", "-c", mapping_path, h5, "-o", ds, "-q")
    examples = cat(sedpack, ds)
    want, dtypes = h5py_values(h5)
    checked = compare(examples, want, dtypes, dtype_of)
    print(f"h5py file: {len(want)} attributes x {ROWS} rows, {checked} values equal to h5py's")
    if len(sys.argv) > 3:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        ranks = os.path.join(work, "ds2")
        r = subprocess.run([sys.argv[3], "-n", "2", "--oversubscribe", sedpack, "import-hdf5", "-c", mapping_path,
                            h5, "-o", ranks, "-q"], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"FAIL: import-hdf5 on 2 ranks exited {r.returncode}\n{r.stdout}\n{r.stderr}")
        if cat(sedpack, ranks) != examples:
            sys.exit("FAIL: import-hdf5 on 2 ranks gave other examples than on 1")
        print("import-hdf5 on 2 ranks: the same examples")

    check_invalid_utf8(sedpack, work)

    # export-hdf5 -> inspect-hdf5 --mapping -> import-hdf5 gives the dataset back.
    exported = os.path.join(work, "export.h5")
    run(sedpack, "export-hdf5", ds, "-o", exported)
    mapping2 = os.path.join(work, "mapping2.json")
    r = run(sedpack, "inspect-hdf5", exported, "--mapping", stdout=mapping2)
    if r.stderr.strip():
        sys.exit(f"FAIL: inspect-hdf5 --mapping of the export left things out:\n{r.stderr}")
    with open(mapping2) as f:
        desc2 = json.load(f)["dataset_structure"]["saved_data_description"]
    with open(os.path.join(ds, "dataset_info.json")) as f:
        desc1 = json.load(f)["dataset_structure"]["saved_data_description"]
    if desc2 != desc1:
        sys.exit(f"FAIL: the export's mapping proposes {desc2}, the dataset has {desc1}")
    back = os.path.join(work, "back")
    run(sedpack, "import-hdf5", "-c", mapping2, exported, "-o", back, "-q")
    again = cat(sedpack, back)
    if again != examples:
        sys.exit("FAIL: export-hdf5 -> import-hdf5 changed the examples")
    print(f"export -> inspect --mapping -> import: {len(again)} examples x {len(desc1)} attributes unchanged")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
