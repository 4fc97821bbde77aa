#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Independent tfrec encoder for the interoperability test.

Writes tiny sedpack datasets with tfrec shards using only the Python standard
library: protocol buffers are encoded by hand (varints, length-delimited
fields), CRC-32C is computed bit by bit, and compression uses Python's gzip and
zlib modules. Nothing here shares code with the C++ library, so the C++ reader
is checked against a second, separate reading of the format.

Usage: make_tfrec_dataset.py OUT_DIR
Creates OUT_DIR/<name>/ for the compressions "", GZIP and ZLIB (each a dataset
with dataset_info.json and a train split of two shards) and OUT_DIR/expected.json
with every value as the C++ reader must return it.
"""

import gzip
import hashlib
import json
import math
import os
import struct
import sys
import zlib

# ---- CRC-32C and TFRecord framing -------------------------------------------

def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(payload: bytes) -> bytes:
    length = struct.pack("<Q", len(payload))
    return (length + struct.pack("<I", masked_crc(length)) + payload +
            struct.pack("<I", masked_crc(payload)))

# ---- Protocol buffer wire format ---------------------------------------------

def varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # int64 as protobuf encodes it: two's complement, 10 bytes if negative.
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def field_bytes(number: int, value: bytes) -> bytes:
    return varint((number << 3) | 2) + varint(len(value)) + value


def int64_list(values, packed=True) -> bytes:
    if packed:
        return field_bytes(1, b"".join(varint(v) for v in values))
    return b"".join(field_varint(1, v) for v in values)


def float_list(values) -> bytes:
    return field_bytes(1, b"".join(struct.pack("<f", v) for v in values))


def bytes_list(values) -> bytes:
    return b"".join(field_bytes(1, v) for v in values)


def feature(kind: str, body: bytes) -> bytes:
    number = {"bytes_list": 1, "float_list": 2, "int64_list": 3}[kind]
    return field_bytes(number, body)


def half_tensor(shape, values, use_half_val=False) -> bytes:
    """tf.io.serialize_tensor of a float16 array (DT_HALF = 19)."""
    dims = b"".join(field_bytes(2, field_varint(1, d)) for d in shape)
    out = field_varint(1, 19) + field_bytes(2, dims)
    bits = [struct.unpack("<H", struct.pack("<e", v))[0] for v in values]
    if use_half_val:  # The alternative element encoding TensorFlow also parses.
        out += field_bytes(13, b"".join(varint(b) for b in bits))
    else:
        out += field_bytes(4, b"".join(struct.pack("<H", b) for b in bits))
    return out


def example(features) -> bytes:
    """features: list of (name, feature bytes); map entries in the given order."""
    entries = b"".join(
        field_bytes(1, field_bytes(1, name.encode("utf-8")) + field_bytes(2, feat))
        for name, feat in features)
    return field_bytes(1, entries)

# ---- The dataset ----------------------------------------------------------------

SCHEMA = [
    ("trace", "float16", [2, 3]),
    ("key", "uint8", [16]),
    ("i8", "int8", [4]),
    ("i32", "int32", [2, 2]),
    ("i64", "int64", [3]),
    ("n", "int", []),
    ("f32", "float32", [3]),
    ("f64", "float64", [2]),
    ("text", "str", []),
    ("blob", "bytes", []),
]
TEXTS = ["h\u00e9llo ", "", "\U0001F642 x"]
SHARDS = [3, 2]  # examples per shard


def values_of(k: int) -> dict:
    return {
        "trace": [k + 0.5 * j - 1.25 for j in range(6)],
        "key": [(k * 7 + j) % 256 for j in range(16)],
        "i8": [-128 + k, 127 - k, -k, k],
        "i32": [-2**31 + k, 2**31 - 1 - k, k * 1000, -k],
        "i64": [-2**63 + k, 2**63 - 1 - k, k],
        "n": k * k - 5,
        "f32": [k + 0.25, -1e30, 3.5e-40],
        "f64": [1.0 / 3.0 + k, -2.5],
        "text": TEXTS[k % 3] + str(k),
        "blob": bytes(range(k * 3)),
    }


def encode(k: int) -> bytes:
    v = values_of(k)
    feats = [
        # Element encodings vary per example, as other encoders may choose.
        ("trace", feature("bytes_list", bytes_list([half_tensor([2, 3], v["trace"], k == 4)]))),
        ("key", feature("int64_list", int64_list(v["key"], packed=(k % 2 == 0)))),
        ("i8", feature("int64_list", int64_list(v["i8"]))),
        ("i32", feature("int64_list", int64_list(v["i32"]))),
        ("i64", feature("int64_list", int64_list(v["i64"]))),
        ("n", feature("int64_list", int64_list([v["n"]]))),
        ("f32", feature("float_list", float_list(v["f32"]))),
        ("f64", feature("float_list", float_list(v["f64"]))),
        ("text", feature("bytes_list", bytes_list([v["text"].encode("utf-8")]))),
        ("blob", feature("bytes_list", bytes_list([v["blob"]]))),
    ]
    if k % 2 == 1:
        feats.reverse()  # Map entry order is not defined by the format.
    if k == 2:
        # A feature the schema does not name: TensorFlow's parser ignores it.
        feats.append(("extra", feature("int64_list", int64_list([1, 2, 3]))))
    return example(feats)


def expected_of(k: int) -> dict:
    """What the C++ reader returns, in comparable form (floats as bit patterns)."""
    v = values_of(k)
    f32 = lambda x: struct.unpack("<I", struct.pack("<f", x))[0]
    # float64 is stored as float32: the value read back is that float32, widened.
    f64 = lambda x: struct.unpack("<Q", struct.pack("<d", struct.unpack("<f", struct.pack("<f", x))[0]))[0]
    return {
        "trace": [struct.unpack("<H", struct.pack("<e", x))[0] for x in v["trace"]],
        "key": v["key"], "i8": v["i8"], "i32": v["i32"], "i64": v["i64"], "n": [v["n"]],
        "f32": [f32(x) for x in v["f32"]],
        "f64": [f64(x) for x in v["f64"]],
        "text": v["text"],
        "blob": v["blob"].hex(),
    }


def compress(data: bytes, compression: str) -> bytes:
    if compression == "GZIP":
        return gzip.compress(data, mtime=0)
    if compression == "ZLIB":
        return zlib.compress(data)
    return data


def write_json(path: str, obj) -> bytes:
    text = json.dumps(obj, indent=2).encode("utf-8")
    with open(path, "wb") as f:
        f.write(text)
    return text


def write_dataset(root: str, compression: str) -> None:
    os.makedirs(os.path.join(root, "train", "s"), exist_ok=True)
    shard_files = []
    k = 0
    for i, count in enumerate(SHARDS):
        records = b"".join(frame(encode(k + j)) for j in range(count))
        k += count
        rel = f"train/s/shard_{i}.tfrec"
        data = compress(records, compression)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(data)
        shard_files.append({
            "file_infos": [{"file_path": rel, "hash_checksums": [hashlib.sha256(data).hexdigest()]}],
            "number_of_examples": count,
        })
    shards_list = {
        "relative_path_self": "train/shards_list.json",
        "number_of_examples": k,
        "shard_files": shard_files,
    }
    list_bytes = write_json(os.path.join(root, "train", "shards_list.json"), shards_list)
    info = {
        "metadata": {"description": "tfrec written by an independent encoder",
                     "sedpack_version": "0.1.4"},
        "dataset_structure": {
            "saved_data_description": [
                {"name": n, "dtype": d, "shape": s} for n, d, s in SCHEMA],
            "compression": compression,
            "examples_per_shard": max(SHARDS),
            "shard_file_type": "tfrec",
            "hash_checksum_algorithms": ["sha256"],
        },
        "splits": {
            "train": {
                "shard_list_info_file": {
                    "file_path": "train/shards_list.json",
                    "hash_checksums": [hashlib.sha256(list_bytes).hexdigest()],
                },
                "number_of_examples": k,
                "number_of_shards": len(SHARDS),
            }
        },
    }
    write_json(os.path.join(root, "dataset_info.json"), info)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    datasets = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}
    for name, compression in datasets.items():
        write_dataset(os.path.join(out, name), compression)
    expected = {
        "datasets": sorted(datasets),
        "examples": [expected_of(k) for k in range(sum(SHARDS))],
    }
    write_json(os.path.join(out, "expected.json"), expected)
    return 0


if __name__ == "__main__":
    sys.exit(main())
