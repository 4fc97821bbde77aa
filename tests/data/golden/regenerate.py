#!/usr/bin/env python3
"""Regenerate the golden fixtures with the Python sedpack (see README.md).

Usage: regenerate.py OUTDIR

Writes the 12 fixtures under OUTDIR (which must not exist yet), each as
OUTDIR/<fixture>/dataset plus expected.json (and expected_examples.jsonl
for all but fb_minimal), and prints what it wrote.

Only sedpack's public API writes and reads the datasets: Dataset.create,
filler() / write_example, write_multiprocessing, check and
as_numpy_iterator. Everything recorded in expected.json about the files
(tree walk, sizes, hashes, decompression, npz members) is computed here from
the files themselves, not through sedpack.

The values come from golden_values.py (the README formulas, also used by
check_expected.py). Each fixture is then checked and read back in a fresh
Python process: check() with the dataset_info.json hashes computed here,
every example read back and compared with the formulas, every shard read
alone (shard_filter) and compared with the expected shard grouping and
custom_metadata, every recorded hash compared with a recomputed one. Any
difference stops the script with an error, so a completed run proves the
data it wrote.

Needs an importable sedpack (`pip install sedpack`, or the source tree on
PYTHONPATH) with its dependencies (numpy, xxhash, lz4, zstandard, ...).
"""

import argparse
import ast
import bz2
import gzip
import hashlib
import io
import json
import lzma
import subprocess
import sys
import zipfile
from pathlib import Path

# No __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_values as gv  # noqa: E402

import lz4.frame  # noqa: E402  (sedpack dependency)
import numpy as np  # noqa: E402
import xxhash  # noqa: E402  (sedpack dependency)
import zstandard  # noqa: E402  (sedpack dependency)

import sedpack  # noqa: E402
from sedpack.io import Attribute, Dataset, DatasetStructure, Metadata  # noqa: E402,E501


class GoldenError(Exception):
    pass


def require(what, got, want):
    if got != want:
        raise GoldenError(f"{what}: got {got!r}, expected {want!r}")


# --------------------------------------------------------------------------
# Writing


def numpy_values(fixture, k):
    """Example k as passed to write_example."""
    written = gv.written_values(k)
    values = {}
    for name, dtype, shape, _ in gv.schema(fixture):
        value = written[name]
        if dtype in ("str", "int"):
            values[name] = value
        elif dtype == "bytes":
            # Variable size: the bytes object; fixed shape: a uint8 array.
            values[name] = np.array(value, dtype=np.uint8) if shape else value
        else:
            values[name] = np.array(value, dtype=dtype).reshape(shape)
    return values


def write_session(filler, fixture, ids):
    for k, split, custom_metadata in gv.session_writes(ids):
        filler.write_example(values=numpy_values(fixture, k), split=split,
                             custom_metadata=custom_metadata)


def feed_worker(dataset_filler, fixture, ids):
    """write_multiprocessing's feed_writer: one worker's examples."""
    with dataset_filler as filler:
        write_session(filler, fixture, ids)
    return len(ids)


def dataset_arguments(fixture):
    if fixture == gv.MINIMAL:
        metadata = Metadata(description="minimal",
                            dataset_license=gv.METADATA_LICENSE,
                            dataset_version=gv.MINIMAL_METADATA_VERSION)
        structure = DatasetStructure(
            saved_data_description=[
                Attribute(name=n, dtype=d, shape=s, custom_metadata=m)
                for n, d, s, m in gv.schema(fixture)],
            compression="", examples_per_shard=gv.EXAMPLES_PER_SHARD,
            shard_file_type="fb", hash_checksum_algorithms=("sha256",))
        return metadata, structure
    spec = gv.FIXTURES[fixture]
    metadata = Metadata(description=f"sedpack golden fixture {fixture}",
                        dataset_license=gv.METADATA_LICENSE,
                        dataset_version=gv.METADATA_VERSION,
                        custom_metadata=gv.dataset_custom_metadata(fixture))
    structure = DatasetStructure(
        saved_data_description=[
            Attribute(name=n, dtype=d, shape=s, custom_metadata=m)
            for n, d, s, m in gv.schema(fixture)],
        compression=spec["compression"],
        examples_per_shard=gv.EXAMPLES_PER_SHARD,
        shard_file_type=spec["shard_file_type"],
        hash_checksum_algorithms=spec["hash_checksum_algorithms"])
    return metadata, structure


def write_fixture(fixture, dataset_path):
    metadata, structure = dataset_arguments(fixture)
    dataset = Dataset.create(dataset_path, metadata=metadata,
                             dataset_structure=structure)
    if fixture == gv.MINIMAL:
        with dataset.filler() as filler:
            for example in gv.MINIMAL_EXAMPLES:
                filler.write_example(
                    values={"x": np.array(example["x"], dtype=np.float32),
                            "s": example["s"], "b": example["b"]},
                    split="train")
        return
    spec = gv.FIXTURES[fixture]
    if spec["write_mode"] == gv.SINGLE:
        with dataset.filler() as filler:
            write_session(filler, fixture, spec["sessions"][0])
    elif spec["write_mode"] == gv.MULTI:
        # A real process pool cannot pickle the DatasetFiller (it holds a
        # process pool executor); the files are the same either way.
        dataset.write_multiprocessing(
            feed_writer=feed_worker,
            custom_arguments=[(fixture, ids) for ids in spec["sessions"]],
            single_process=True)
    elif spec["write_mode"] == gv.CONTINUE:
        for ids in spec["sessions"]:
            # Each session reopens the dataset, as a later run would.
            with Dataset(dataset_path).filler() as filler:
                write_session(filler, fixture, ids)
    else:
        raise GoldenError(f"unknown write mode {spec['write_mode']}")


# --------------------------------------------------------------------------
# Describing and verifying (runs in a fresh process per fixture)


def hash_hex(algorithm, data):
    if algorithm.startswith("xxh"):
        return {"xxh32": xxhash.xxh32, "xxh64": xxhash.xxh64,
                "xxh128": xxhash.xxh128}[algorithm](data).hexdigest()
    return hashlib.new(algorithm, data).hexdigest()


def hashes(data, algorithms):
    return [hash_hex(a, data) for a in algorithms]


def decompress(compression, data):
    if compression == "":
        return data
    if compression in ("GZIP", "ZLIB"):  # both are gzip files
        return gzip.decompress(data)
    if compression == "BZ2":
        return bz2.decompress(data)
    if compression == "LZMA":
        return lzma.decompress(data)
    if compression == "LZ4":
        return lz4.frame.decompress(data)
    if compression == "ZSTD":
        with zstandard.ZstdDecompressor().stream_reader(
                io.BytesIO(data)) as reader:
            return reader.read()
    raise GoldenError(f"unknown compression {compression!r}")


def npy_header(member):
    """(descr, shape) from a .npy file's header (format versions 1-3)."""
    require("npy magic", member[:6], b"\x93NUMPY")
    major = member[6]
    if major == 1:
        length, start = int.from_bytes(member[8:10], "little"), 10
    else:
        length, start = int.from_bytes(member[8:12], "little"), 12
    header = ast.literal_eval(member[start:start + length].decode("latin1"))
    require("npy fortran_order", header["fortran_order"], False)
    return header["descr"], list(header["shape"])


def npz_members(data):
    members = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            member = archive.read(info)
            descr, shape = npy_header(member)
            members.append({"name": info.filename,
                            "compress_type": info.compress_type,
                            "descr": descr, "shape": shape,
                            "npy_size": len(member),
                            "npy_sha256": hashlib.sha256(member).hexdigest()})
    return members


def walk_split(dataset_path, split_entry, algorithms, file_type, compression):
    """The split's shards and shards_list.json files, depth first, in
    sedpack's traversal order (a list's shards, then its children)."""
    shards, lists = [], []

    def visit(entry, depth):
        rel = entry["shard_list_info_file"]["file_path"]
        data = (dataset_path / rel).read_bytes()
        content = json.loads(data)
        recorded = entry["shard_list_info_file"].get("hash_checksums", [])
        actual = hashes(data, algorithms)
        require(f"{rel} hash checksums", list(recorded), actual)
        require(f"{rel} relative_path_self", content["relative_path_self"],
                rel)
        lists.append({
            "path": rel,
            "depth": depth,
            "recorded_hash_checksums": list(recorded),
            "actual_hash_checksums": actual,
            "number_of_examples": content["number_of_examples"],
            "recorded_number_of_examples": entry["number_of_examples"],
            "recorded_number_of_shards": entry["number_of_shards"],
            "direct_shard_files": len(content.get("shard_files", [])),
            "children": len(content.get("children_shard_lists", [])),
        })
        for shard in content.get("shard_files", []):
            require("files per shard", len(shard["file_infos"]), 1)
            file_info = shard["file_infos"][0]
            path = file_info["file_path"]
            data = (dataset_path / path).read_bytes()
            recorded = list(file_info.get("hash_checksums", []))
            require(f"{path} hash checksums", recorded,
                    hashes(data, algorithms))
            described = {
                "file_path": path,
                "number_of_examples": shard["number_of_examples"],
                "custom_metadata": shard.get("custom_metadata", {}),
                "hash_checksums": recorded,
                "file_size": len(data),
            }
            if file_type == "fb":
                raw = decompress(compression, data)
                described["decompressed_size"] = len(raw)
                described["decompressed_sha256"] = \
                    hashlib.sha256(raw).hexdigest()
            else:
                described["npz_members"] = npz_members(data)
            shards.append(described)
        for child in content.get("children_shard_lists", []):
            visit(child, depth + 1)

    visit(split_entry, 0)
    # Counts recorded by parents must add up.
    for entry in lists:
        require(f"{entry['path']} number_of_examples",
                entry["number_of_examples"],
                entry["recorded_number_of_examples"])
    require("split number_of_shards", split_entry["number_of_shards"],
            len(shards))
    require("split number_of_examples", split_entry["number_of_examples"],
            sum(s["number_of_examples"] for s in shards))
    return shards, lists


def encode_read_back(dtype, shape, value):
    """The jsonl {"hex", "value"} of one value as sedpack returned it."""
    if dtype == "bytes":
        require("bytes attribute type", type(value), bytes)
        return {"hex": value.hex()}
    if dtype == "str":
        require("str attribute type", type(value), str)
        return {"hex": value.encode("utf-8").hex(), "value": value}
    if dtype == "int":
        require("int attribute type", type(value), int)
        return {"hex": value.to_bytes(8, "little", signed=True).hex(),
                "value": value}
    array = np.asarray(value)
    require("dtype", array.dtype, np.dtype(dtype))
    require("shape", array.shape, tuple(shape))
    little = array.astype(array.dtype.newbyteorder("<"))
    return {"hex": little.tobytes(order="C").hex(), "value": array.tolist()}


def encode_example(fixture, example):
    attrs = gv.schema(fixture)
    require("attribute names", sorted(example), sorted(a[0] for a in attrs))
    return {name: encode_read_back(dtype, shape, example[name])
            for name, dtype, shape, _ in attrs}


def compare_example(where, got, want):
    for name in want:
        if got[name] != want[name]:
            raise GoldenError(f"{where}: attribute {name} reads back as "
                              f"{got[name]!r}, formulas give {want[name]!r}")


def read_split(dataset, split, **kwargs):
    return list(dataset.as_numpy_iterator(split=split, shuffle=0,
                                          repeat=False, **kwargs))


def checked_dataset(dataset_path, algorithms):
    """Open the dataset and check() it against dataset_info.json hashes
    computed here. Returns (dataset, those hashes)."""
    info_checksums = hashes((dataset_path / "dataset_info.json").read_bytes(),
                            algorithms)
    dataset = Dataset(dataset_path)
    dataset.check(show_progressbar=False,
                  hash_checksums_values=tuple(info_checksums))
    if info_checksums:
        # check() must really compare them: a wrong value has to fail.
        wrong = tuple(("0" * len(h)) for h in info_checksums)
        try:
            dataset.check(show_progressbar=False, hash_checksums_values=wrong)
        except ValueError:
            pass
        else:
            raise GoldenError("check() accepted wrong dataset_info hashes")
    return dataset, info_checksums


def describe_minimal(root):
    dataset_path = root / "dataset"
    info = json.loads((dataset_path / "dataset_info.json").read_text())
    dataset, info_checksums = checked_dataset(dataset_path, ("sha256",))
    shards, _ = walk_split(dataset_path, info["splits"]["train"],
                           ("sha256",), "fb", "")
    require("fb_minimal splits", list(info["splits"]), ["train"])
    require("fb_minimal shards", len(shards), 1)
    got = [encode_example(gv.MINIMAL, e) for e in read_split(dataset, "train")]
    want = gv.minimal_expected_values()
    require("fb_minimal number of examples", len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        compare_example(f"fb_minimal example {i}", g, w)
    shard_bytes = (dataset_path / shards[0]["file_path"]).read_bytes()
    expected = {
        "fixture": gv.MINIMAL,
        "sedpack_version": info["metadata"]["sedpack_version"],
        "dataset_info_checksums": info_checksums,
        "shard_file": shards[0]["file_path"],
        "shard_size": len(shard_bytes),
        "shard_hex": shard_bytes.hex(),
        "shard_sha256": hashlib.sha256(shard_bytes).hexdigest(),
        "examples": got,
    }
    return expected, None


def describe(fixture, root):
    """Check and read back one fixture; return (expected.json object,
    expected_examples.jsonl records)."""
    if fixture == gv.MINIMAL:
        return describe_minimal(root)
    spec = gv.FIXTURES[fixture]
    dataset_path = root / "dataset"
    info = json.loads((dataset_path / "dataset_info.json").read_text())
    structure = info["dataset_structure"]
    for key in ("shard_file_type", "compression"):
        require(f"{fixture} {key}", structure[key], spec[key])
    algorithms = tuple(structure["hash_checksum_algorithms"])
    require(f"{fixture} hash algorithms", algorithms,
            spec["hash_checksum_algorithms"])
    dataset, info_checksums = checked_dataset(dataset_path, algorithms)

    want_shards = gv.expected_shards(fixture)
    require(f"{fixture} splits", list(info["splits"]), list(want_shards))
    want_records = iter(gv.expected_records(fixture))
    records, splits, quirks = [], {}, []
    for split, split_entry in info["splits"].items():
        shards, lists = walk_split(dataset_path, split_entry, algorithms,
                                   spec["shard_file_type"],
                                   spec["compression"])
        examples = read_split(dataset, split)
        # Which examples each shard holds, reading that shard alone.
        shard_of_position = []
        for index, shard in enumerate(shards):
            alone = read_split(
                dataset, split,
                shard_filter=lambda shard_info, p=shard["file_path"]:
                str(shard_info.file_infos[0].file_path) == p)
            require(f"{shard['file_path']} examples read", len(alone),
                    shard["number_of_examples"])
            start = len(shard_of_position)
            for offset, example in enumerate(alone):
                require(f"{shard['file_path']} example {offset} equals the "
                        "whole-split read", encode_example(fixture, example),
                        encode_example(fixture, examples[start + offset]))
            shard_of_position.extend([index] * len(alone))
        require(f"{fixture} {split} examples", len(examples),
                len(shard_of_position))
        ids = []
        for index, example in enumerate(examples):
            want = next(want_records)
            got = encode_example(fixture, example)
            compare_example(f"{fixture} {split} index {index} (id "
                            f"{want['id']})", got, want["values"])
            require(f"{fixture} {split} index {index} split/index/shard",
                    (want["split"], want["index"], want["shard"]),
                    (split, index, shard_of_position[index]))
            ids.append(want["id"])
            records.append({"split": split, "index": index, "id": want["id"],
                            "shard": shard_of_position[index],
                            "values": got})
            # Bytes that do not read back as written.
            written = gv.written_values(want["id"])
            for name, dtype, _, _ in gv.schema(fixture):
                if dtype == "bytes" and example[name] != bytes(written[name]):
                    quirks.append(gv.quirk_text(split, want["id"], name,
                                                bytes(written[name]),
                                                example[name]))
        position = 0
        for index, shard in enumerate(shards):
            count = shard["number_of_examples"]
            shard["example_ids"] = ids[position:position + count]
            position += count
            want = want_shards[split][index] if \
                index < len(want_shards[split]) else None
            require(f"{shard['file_path']} grouping",
                    {"example_ids": shard["example_ids"],
                     "custom_metadata": shard["custom_metadata"]}, want)
        require(f"{fixture} {split} shard count", len(shards),
                len(want_shards[split]))
        splits[split] = {
            "number_of_examples": split_entry["number_of_examples"],
            "number_of_shards": split_entry["number_of_shards"],
            "example_ids_in_read_order": ids,
            "shards": shards,
            "shards_list_files": lists,
        }
    require(f"{fixture} quirks", quirks, gv.expected_quirks(fixture))

    expected = {
        "fixture": fixture,
        "sedpack_version": info["metadata"]["sedpack_version"],
        "shard_file_type": structure["shard_file_type"],
        "compression": structure["compression"],
        "examples_per_shard": structure["examples_per_shard"],
        "hash_checksum_algorithms": list(algorithms),
        "dataset_info_checksums": info_checksums,
        "attributes": [{"name": a["name"], "dtype": a["dtype"],
                        "shape": list(a["shape"])}
                       for a in structure["saved_data_description"]],
        "write_mode": spec["write_mode"],
        "splits": splits,
    }
    if spec["write_mode"] == gv.MULTI:
        expected["workers_example_ids"] = spec["sessions"]
    elif spec["write_mode"] == gv.CONTINUE:
        expected["sessions_example_ids"] = spec["sessions"]
    expected["quirks_observed"] = quirks
    return expected, records


def describe_main(fixture, root):
    expected, records = describe(fixture, root)
    (root / "expected.json").write_text(json.dumps(expected, indent=2) + "\n",
                                        encoding="utf-8")
    if records is not None:
        with open(root / "expected_examples.jsonl", "w",
                  encoding="utf-8") as out:
            for record in records:
                out.write(json.dumps(record, separators=(",", ":"),
                                     ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------
# Driver


def cross_check(outdir):
    """The single-filler fb fixtures group the same examples the same way,
    so shard i of a split decompresses to the same bytes in all of them,
    and those bytes are the fb_none shard file."""
    reference = json.loads((outdir / "fb_none" / "expected.json").read_text())
    for fixture, spec in gv.FIXTURES.items():
        if spec["shard_file_type"] != "fb" or spec["write_mode"] != gv.SINGLE:
            continue
        exp = json.loads((outdir / fixture / "expected.json").read_text())
        for split, ref in reference["splits"].items():
            require(f"{fixture} {split} decompressed shards == fb_none",
                    [s["decompressed_sha256"]
                     for s in exp["splits"][split]["shards"]],
                    [hashlib.sha256((outdir / "fb_none" / "dataset" /
                                     s["file_path"]).read_bytes()).hexdigest()
                     for s in ref["shards"]])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--describe", metavar="FIXTURE",
                        help=argparse.SUPPRESS)  # internal: fresh process
    args = parser.parse_args(argv[1:])
    if args.describe:
        describe_main(args.describe, args.outdir)
        return 0

    outdir = args.outdir
    if outdir.exists():
        print(f"{outdir} exists; not overwriting it", file=sys.stderr)
        return 2
    outdir.mkdir(parents=True)
    print(f"sedpack {sedpack.__version__} from {Path(sedpack.__file__).parent}")
    for fixture in gv.ALL_FIXTURES:
        root = outdir / fixture
        write_fixture(fixture, root / "dataset")
        # A fresh process checks and reads back what this one wrote.
        subprocess.run([sys.executable, str(Path(__file__).resolve()),
                        "--describe", fixture, str(root)], check=True)
        recorded = json.loads((root / "expected.json").read_text())
        require(f"{fixture} recorded sedpack_version",
                recorded["sedpack_version"], sedpack.__version__)
        files = sorted(p.relative_to(root) for p in root.rglob("*")
                       if p.is_file())
        examples = "" if fixture == gv.MINIMAL else \
            ", expected_examples.jsonl"
        print(f"wrote {root}: dataset/ ({len(files) - 1 - bool(examples)} "
              f"files), expected.json{examples}; checked and read back")
    cross_check(outdir)
    print(f"all {len(gv.ALL_FIXTURES)} fixtures written to {outdir} and "
          f"verified")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except GoldenError as error:
        print(f"regenerate.py: {error}", file=sys.stderr)
        sys.exit(1)
    except subprocess.CalledProcessError as error:
        print(f"regenerate.py: checking {error.cmd[-1]} failed",
              file=sys.stderr)
        sys.exit(1)
