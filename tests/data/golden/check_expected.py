#!/usr/bin/env python3
"""Check that the golden folder is self-consistent. Standard library only.

Every value in every expected_examples.jsonl is recomputed from the
formulas (golden_values.py, the same code regenerate.py uses) and compared.
expected.json is checked against the same formulas (schema, shard grouping,
shard metadata, read order, quirks), and against the files on disk where
the standard library can tell (dataset_info.json, shard sizes, hashlib
hashes, stdlib decompression, fb_minimal's shard bytes).

Usage: check_expected.py [GOLDEN_DIR]   (defaults to this script's folder)
Exit status 0 when everything matches, 1 otherwise.
"""

import bz2
import gzip
import hashlib
import json
import lzma
import sys
from pathlib import Path

# No __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_values as gv  # noqa: E402

DECOMPRESS = {"": lambda b: b, "GZIP": gzip.decompress,
              "ZLIB": gzip.decompress, "BZ2": bz2.decompress,
              "LZMA": lzma.decompress}


class Checker:
    def __init__(self):
        self.errors = []
        self.checks = 0

    def eq(self, what, got, want):
        self.checks += 1
        if got != want:
            self.errors.append(f"{what}: got {got!r}, expected {want!r}")
            return False
        return True


def hashlib_digest(algorithm, data):
    """Hex digest, or None for algorithms hashlib does not have (xxh*)."""
    if algorithm.startswith("xxh"):
        return None
    return hashlib.new(algorithm, data).hexdigest()


def check_hashes(c, what, algorithms, recorded, data):
    c.eq(f"{what}: number of hash checksums", len(recorded), len(algorithms))
    for algorithm, value in zip(algorithms, recorded):
        digest = hashlib_digest(algorithm, data)
        if digest is not None:
            c.eq(f"{what}: {algorithm}", value, digest)


def check_dataset_info(c, fixture, root):
    info_path = root / "dataset" / "dataset_info.json"
    if not c.eq(f"{fixture}: dataset_info.json exists", info_path.is_file(),
                True):
        return None
    info = json.loads(info_path.read_text(encoding="utf-8"))
    structure = info["dataset_structure"]
    c.eq(f"{fixture}: dataset_info attributes",
         [(a["name"], a["dtype"], tuple(a["shape"]), a["custom_metadata"])
          for a in structure["saved_data_description"]],
         gv.schema(fixture))
    c.eq(f"{fixture}: examples_per_shard", structure["examples_per_shard"],
         gv.EXAMPLES_PER_SHARD)
    if fixture == gv.MINIMAL:
        c.eq(f"{fixture}: structure", (structure["shard_file_type"],
                                       structure["compression"],
                                       structure["hash_checksum_algorithms"]),
             ("fb", "", ["sha256"]))
    else:
        spec = gv.FIXTURES[fixture]
        c.eq(f"{fixture}: structure", (structure["shard_file_type"],
                                       structure["compression"],
                                       structure["hash_checksum_algorithms"]),
             (spec["shard_file_type"], spec["compression"],
              list(spec["hash_checksum_algorithms"])))
        c.eq(f"{fixture}: metadata custom_metadata fixture",
             info["metadata"]["custom_metadata"].get("fixture"), fixture)
    return info


def check_examples(c, fixture, root, info):
    path = root / "expected_examples.jsonl"
    if not c.eq(f"{fixture}: expected_examples.jsonl exists", path.is_file(),
                True):
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    got = [json.loads(line) for line in lines]
    want = gv.expected_records(fixture)
    c.eq(f"{fixture}: number of jsonl lines", len(got), len(want))
    for line_no, (g, w) in enumerate(zip(got, want), start=1):
        where = f"{fixture}/expected_examples.jsonl line {line_no}"
        for key in ("split", "index", "id", "shard"):
            c.eq(f"{where} {key}", g.get(key), w[key])
        c.eq(f"{where} attribute order", list(g.get("values", {})),
             list(w["values"]))
        for name, value in w["values"].items():
            c.eq(f"{where} (id {w['id']}) {name}",
                 g.get("values", {}).get(name), value)
    # Read order follows the split order of dataset_info.json.
    split_order = []
    for g in got:
        if not split_order or split_order[-1] != g.get("split"):
            split_order.append(g.get("split"))
    c.eq(f"{fixture}: jsonl split order", split_order, list(info["splits"]))


def check_shard_file(c, fixture, root, spec, shard):
    where = f"{fixture}: shard {shard['file_path']}"
    path = root / "dataset" / shard["file_path"]
    if not c.eq(f"{where} exists", path.is_file(), True):
        return
    data = path.read_bytes()
    c.eq(f"{where} file_size", len(data), shard["file_size"])
    check_hashes(c, where, spec["hash_checksum_algorithms"],
                 shard["hash_checksums"], data)
    if spec["shard_file_type"] == "fb" and spec["compression"] in DECOMPRESS:
        raw = DECOMPRESS[spec["compression"]](data)
        c.eq(f"{where} decompressed_size", len(raw),
             shard["decompressed_size"])
        c.eq(f"{where} decompressed_sha256", hashlib.sha256(raw).hexdigest(),
             shard["decompressed_sha256"])


def check_expected_json(c, fixture, root, info):
    path = root / "expected.json"
    if not c.eq(f"{fixture}: expected.json exists", path.is_file(), True):
        return
    exp = json.loads(path.read_text(encoding="utf-8"))
    spec = gv.FIXTURES[fixture]
    c.eq(f"{fixture}: fixture", exp["fixture"], fixture)
    c.eq(f"{fixture}: sedpack_version", exp["sedpack_version"],
         info["metadata"]["sedpack_version"])
    for key in ("shard_file_type", "compression", "write_mode"):
        c.eq(f"{fixture}: {key}", exp[key], spec[key])
    c.eq(f"{fixture}: examples_per_shard", exp["examples_per_shard"],
         gv.EXAMPLES_PER_SHARD)
    c.eq(f"{fixture}: hash_checksum_algorithms",
         exp["hash_checksum_algorithms"],
         list(spec["hash_checksum_algorithms"]))
    c.eq(f"{fixture}: attributes", exp["attributes"],
         [{"name": n, "dtype": d, "shape": list(s)}
          for n, d, s, _ in gv.schema(fixture)])
    info_bytes = (root / "dataset" / "dataset_info.json").read_bytes()
    check_hashes(c, f"{fixture}: dataset_info_checksums",
                 spec["hash_checksum_algorithms"],
                 exp["dataset_info_checksums"], info_bytes)
    sessions_key = {gv.MULTI: "workers_example_ids",
                    gv.CONTINUE: "sessions_example_ids"}.get(spec["write_mode"])
    if sessions_key:
        c.eq(f"{fixture}: {sessions_key}", exp.get(sessions_key),
             spec["sessions"])
    c.eq(f"{fixture}: quirks_observed", exp["quirks_observed"],
         gv.expected_quirks(fixture))

    shards_by_split = gv.expected_shards(fixture)
    c.eq(f"{fixture}: splits", list(exp["splits"]), list(shards_by_split))
    c.eq(f"{fixture}: dataset_info splits", list(info["splits"]),
         list(shards_by_split))
    for split, want_shards in shards_by_split.items():
        got = exp["splits"].get(split)
        if got is None:
            continue
        where = f"{fixture}: split {split}"
        recorded = info["splits"].get(split, {})
        ids = [k for s in want_shards for k in s["example_ids"]]
        c.eq(f"{where} number_of_examples", got["number_of_examples"],
             len(ids))
        c.eq(f"{where} number_of_shards", got["number_of_shards"],
             len(want_shards))
        c.eq(f"{where} dataset_info counts",
             (recorded.get("number_of_examples"),
              recorded.get("number_of_shards")),
             (len(ids), len(want_shards)))
        c.eq(f"{where} example_ids_in_read_order",
             got["example_ids_in_read_order"], ids)
        c.eq(f"{where} shard count", len(got["shards"]), len(want_shards))
        for i, (g, w) in enumerate(zip(got["shards"], want_shards)):
            c.eq(f"{where} shard {i} example_ids", g["example_ids"],
                 w["example_ids"])
            c.eq(f"{where} shard {i} number_of_examples",
                 g["number_of_examples"], len(w["example_ids"]))
            c.eq(f"{where} shard {i} custom_metadata", g["custom_metadata"],
                 w["custom_metadata"])
            check_shard_file(c, fixture, root, spec, g)
        lists = got["shards_list_files"]
        c.eq(f"{where} first shards_list", lists[0]["path"] if lists else None,
             recorded.get("shard_list_info_file", {}).get("file_path"))
        for entry in lists:
            lwhere = f"{fixture}: {entry['path']}"
            lpath = root / "dataset" / entry["path"]
            if not c.eq(f"{lwhere} exists", lpath.is_file(), True):
                continue
            data = lpath.read_bytes()
            c.eq(f"{lwhere} recorded == actual hashes",
                 entry["recorded_hash_checksums"],
                 entry["actual_hash_checksums"])
            check_hashes(c, lwhere, spec["hash_checksum_algorithms"],
                         entry["actual_hash_checksums"], data)
            content = json.loads(data)
            c.eq(f"{lwhere} number_of_examples", entry["number_of_examples"],
                 content["number_of_examples"])
            c.eq(f"{lwhere} children", entry["children"],
                 len(content.get("children_shard_lists", [])))
            c.eq(f"{lwhere} direct_shard_files", entry["direct_shard_files"],
                 len(content.get("shard_files", [])))


def check_minimal(c, root, info):
    path = root / "expected.json"
    if not c.eq("fb_minimal: expected.json exists", path.is_file(), True):
        return
    exp = json.loads(path.read_text(encoding="utf-8"))
    c.eq("fb_minimal: fixture", exp["fixture"], gv.MINIMAL)
    c.eq("fb_minimal: sedpack_version", exp["sedpack_version"],
         info["metadata"]["sedpack_version"])
    c.eq("fb_minimal: examples", exp["examples"], gv.minimal_expected_values())
    raw = bytes.fromhex(exp["shard_hex"])
    c.eq("fb_minimal: shard_size", len(raw), exp["shard_size"])
    c.eq("fb_minimal: shard_sha256", hashlib.sha256(raw).hexdigest(),
         exp["shard_sha256"])
    shard = root / "dataset" / exp["shard_file"]
    if c.eq("fb_minimal: shard file exists", shard.is_file(), True):
        c.eq("fb_minimal: shard file bytes == shard_hex",
             shard.read_bytes().hex(), exp["shard_hex"])
    info_bytes = (root / "dataset" / "dataset_info.json").read_bytes()
    check_hashes(c, "fb_minimal: dataset_info_checksums", ["sha256"],
                 exp["dataset_info_checksums"], info_bytes)


def main(argv):
    golden = Path(argv[1]) if len(argv) > 1 else \
        Path(__file__).resolve().parent
    c = Checker()
    for fixture in gv.ALL_FIXTURES:
        root = golden / fixture
        if not c.eq(f"{fixture}: folder exists", root.is_dir(), True):
            continue
        info = check_dataset_info(c, fixture, root)
        if info is None:
            continue
        if fixture == gv.MINIMAL:
            check_minimal(c, root, info)
        else:
            check_examples(c, fixture, root, info)
            check_expected_json(c, fixture, root, info)
    for error in c.errors[:50]:
        print("MISMATCH", error)
    if len(c.errors) > 50:
        print(f"... and {len(c.errors) - 50} more")
    print(f"{golden}: {len(gv.ALL_FIXTURES)} fixtures, {c.checks} checks, "
          f"{len(c.errors)} mismatches")
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
