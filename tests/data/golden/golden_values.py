"""The golden fixtures' contents, computed from the formulas in README.md.

Standard library only. Shared by regenerate.py (which writes the fixtures
with sedpack and checks what sedpack reads back against these values) and
check_expected.py (which checks the committed expected files against them
without sedpack). Keeping one copy of the formulas means the two scripts
cannot drift apart.
"""

import struct

NUM_EXAMPLES = 24
# Every fixture writes its splits in this order, so dataset_info.json lists
# them (and sedpack reads them) in this order too.
SPLITS = ("train", "test", "holdout")
EXAMPLES_PER_SHARD = 4

# (name, dtype, shape, attribute custom_metadata), in declared order.
SCHEMA = (
    ("f16", "float16", (3,), {}),
    ("f32", "float32", (3, 4), {"unit": "volt", "scale": 0.25}),
    ("f64", "float64", (2,), {}),
    ("i8", "int8", (5,), {}),
    ("i16", "int16", (2, 3), {}),
    ("i32", "int32", (4,), {}),
    ("i64", "int64", (2,), {}),
    ("u8", "uint8", (16,), {}),
    ("u16", "uint16", (), {}),
    ("u32", "uint32", (3,), {}),
    ("u64", "uint64", (2,), {}),
    ("flag", "bool", (5,), {}),
    ("n", "int", (), {}),
    ("text", "str", (), {}),
    ("blob", "bytes", (), {}),
    ("fixed", "bytes", (8,), {}),
)

# fb_minimal has its own schema and two literal examples.
MINIMAL_SCHEMA = (
    ("x", "float32", (2,), {}),
    ("s", "str", (), {}),
    ("b", "bytes", (), {}),
)
MINIMAL_EXAMPLES = (
    {"x": [1.0, -2.0], "s": "hi", "b": b"\x01\x02\x03"},
    # An empty bytearray (not b""): it is stored as an empty vector.
    {"x": [0.5, 3.0], "s": "", "b": bytearray()},
)

# Dataset-level metadata passed to Metadata(...).
METADATA_LICENSE = "https://creativecommons.org/licenses/by/4.0/"
METADATA_VERSION = "1.2.3"
MINIMAL_METADATA_VERSION = "1.0.0"


def dataset_custom_metadata(fixture):
    return {
        "fixture": fixture,
        "generator": "regenerate.py",
        "nested": {"list": [1, 2.5, "x"], "none": None, "flag": True},
    }


SINGLE = "single filler"
MULTI = "write_multiprocessing"
CONTINUE = "two filler sessions (continue writing)"

ALL_IDS = list(range(NUM_EXAMPLES))


def _fixture(file_type, compression, hashes, write_mode=SINGLE,
             sessions=None, blob_first=False):
    return {
        "shard_file_type": file_type,
        "compression": compression,
        "hash_checksum_algorithms": tuple(hashes),
        "write_mode": write_mode,
        # One list of ids per filler session (or per worker for MULTI).
        "sessions": sessions or [ALL_IDS],
        "blob_first": blob_first,
    }


# Every fixture with the shared schema, in the README's order.
FIXTURES = {
    "fb_none": _fixture("fb", "", ("sha256", "md5", "xxh32", "xxh64",
                                   "xxh128", "sha3_256")),
    "fb_gzip": _fixture("fb", "GZIP", ("sha1", "xxh128")),
    "fb_zlib": _fixture("fb", "ZLIB", ("sha224",)),
    "fb_bz2": _fixture("fb", "BZ2", ("sha384", "xxh64")),
    "fb_lzma": _fixture("fb", "LZMA", ("sha512",)),
    "fb_lz4": _fixture("fb", "LZ4", ("sha3_224", "xxh32")),
    "fb_zstd": _fixture("fb", "ZSTD", ("sha3_384", "sha3_512")),
    "npz_none": _fixture("npz", "", ("md5", "sha256")),
    "npz_zip": _fixture("npz", "ZIP", (), blob_first=True),
    "fb_multiprocessing": _fixture(
        "fb", "LZ4", ("sha256", "xxh64"), MULTI,
        [list(range(0, 10)), list(range(10, 18)), list(range(18, 24))]),
    "fb_continue": _fixture(
        "fb", "ZSTD", ("sha256",), CONTINUE,
        [list(range(0, 14)), list(range(14, 24))]),
}
MINIMAL = "fb_minimal"
ALL_FIXTURES = list(FIXTURES) + [MINIMAL]


def schema(fixture):
    """The attribute list of a fixture, in declared order."""
    if fixture == MINIMAL:
        return list(MINIMAL_SCHEMA)
    attrs = list(SCHEMA)
    if FIXTURES[fixture]["blob_first"]:
        attrs = [a for a in attrs if a[0] == "blob"] + \
                [a for a in attrs if a[0] != "blob"]
    return attrs


def split_of(k):
    if k % 5 == 1:
        return "test"
    if k % 7 == 6:
        return "holdout"
    return "train"


def shard_custom_metadata(k, first_train_of_session):
    """The custom_metadata passed to write_example for example k."""
    split = split_of(k)
    if split == "test":
        return None
    if split == "holdout":
        return {"source": "holdout", "weight": 0.5}
    if first_train_of_session:
        return None
    if k < 12:
        return {"group": "A"}
    return {"group": "B", "level": 2}


def session_writes(ids):
    """(k, split, custom_metadata) for one filler session, in write order."""
    writes = []
    seen_train = False
    for k in ids:
        split = split_of(k)
        first = split == "train" and not seen_train
        if split == "train":
            seen_train = True
        writes.append((k, split, shard_custom_metadata(k, first)))
    return writes


def expected_shards(fixture):
    """The shards sedpack's filler makes, per split, in traversal order.

    Returns {split: [{"example_ids": [...], "custom_metadata": {...}}]}.
    Rules (sedpack's DatasetFillerContext.write_example): a new shard opens
    when the open one holds EXAMPLES_PER_SHARD examples, or when both the
    new and the open shard's metadata are non-empty and differ. Non-empty
    metadata is set on the open shard (so metadata passed after a None
    applies retroactively). Each session closes its partial shards. The
    sessions' subtrees are listed in session order, so traversal is session
    by session.
    """
    result = {}
    for ids in FIXTURES[fixture]["sessions"]:
        open_shards = {}
        closed = {}
        for k, split, md in session_writes(ids):
            cur = open_shards.setdefault(split, {"example_ids": [],
                                                 "custom_metadata": {}})
            changed = bool(md) and bool(cur["custom_metadata"]) and \
                md != cur["custom_metadata"]
            if len(cur["example_ids"]) >= EXAMPLES_PER_SHARD or changed:
                closed.setdefault(split, []).append(cur)
                cur = {"example_ids": [], "custom_metadata": {}}
                open_shards[split] = cur
            if md:
                cur["custom_metadata"] = dict(md)
            cur["example_ids"].append(k)
        for split, cur in open_shards.items():
            if cur["example_ids"]:
                closed.setdefault(split, []).append(cur)
        for split, shards in closed.items():
            result.setdefault(split, []).extend(shards)
    return {split: result[split] for split in SPLITS if split in result}


def _wrap(k, bits):
    return k % (1 << bits)


def _signed(v, bits):
    v %= 1 << bits
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def written_values(k):
    """Plain Python values of example k as passed to write_example.

    Arrays are nested lists in row-major order; shape () is a scalar. The
    `fixed` attribute is a list of ints (written as a uint8 array).
    """
    golden = 0x9E3779B97F4A7C15
    text = "" if k % 7 == 3 else \
        f"ex{k}:" + "\u00e9" * (k % 3) + ("\U0001F642" if k % 4 == 0 else "")
    return {
        "f16": [(3 * k + j) * 0.125 - 2.0 for j in range(3)],
        "f32": [[(12 * k + 4 * r + c) * 0.25 - 1.5 for c in range(4)]
                for r in range(3)],
        # -(k * 0.001), not -k * 0.001: k = 0 gives -0.0.
        "f64": [k / 3.0, -(k * 0.001)],
        "i8": [_wrap(7 * k + 31 * j, 8) - 128 for j in range(5)],
        "i16": [[_wrap(997 * k + 211 * (3 * r + c), 16) - 32768
                 for c in range(3)] for r in range(2)],
        "i32": [_signed(2654435761 * k + 40503 * j, 32) for j in range(4)],
        "i64": [_signed((k + 1) * golden + j, 64) for j in range(2)],
        "u8": [_wrap(16 * k + j, 8) for j in range(16)],
        "u16": _wrap(4099 * k, 16),
        "u32": [_wrap(2654435761 * k + j, 32) for j in range(3)],
        "u64": [_wrap((k + 1) * golden + j * 0xFFFFFFFF, 64)
                for j in range(2)],
        "flag": [(k + j) % 3 == 0 for j in range(5)],
        "n": -(k * 123456789012345) if k % 2 else k * 123456789012345,
        "text": text,
        "blob": bytes((13 * k + i) % 256 for i in range(k % 6)),
        "fixed": [(8 * k + 3 * j) % 256 for j in range(8)],
    }


_STRUCT = {
    "float16": "e", "float32": "f", "float64": "d",
    "int8": "b", "int16": "h", "int32": "i", "int64": "q",
    "uint8": "B", "uint16": "H", "uint32": "I", "uint64": "Q",
    "bool": "?",
}


def _flatten(value):
    if isinstance(value, list):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value]


def _reshape(flat, shape):
    if not shape:
        return flat[0]
    step = len(flat) // shape[0]
    return [_reshape(flat[i * step:(i + 1) * step], shape[1:])
            for i in range(shape[0])]


def encode(dtype, shape, value):
    """{"hex": ..., "value": ...} for one attribute, as in the jsonl files.

    Numeric values are little-endian, row-major, in the declared dtype; the
    readable value is the exact double a float16/float32 converts to.
    """
    if dtype == "bytes":
        return {"hex": bytes(value).hex()}
    if dtype == "str":
        return {"hex": value.encode("utf-8").hex(), "value": value}
    if dtype == "int":
        return {"hex": struct.pack("<q", value).hex(), "value": value}
    fmt = _STRUCT[dtype]
    flat = _flatten(value)
    raw = struct.pack("<%d%s" % (len(flat), fmt), *flat)
    # Round trip so the readable value is what the stored bits mean.
    back = list(struct.unpack("<%d%s" % (len(flat), fmt), raw))
    return {"hex": raw.hex(), "value": _reshape(back, tuple(shape))}


def read_back_bytes(file_type, value):
    """The bytes sedpack reads back for a `bytes` attribute written as value.

    The fb writer stores np.array(value).tobytes(). For b"" numpy makes a
    one-byte S1 array, so an empty `bytes` comes back as b"\\x00" (an empty
    bytearray becomes an empty uint8 array and stays empty). npz keeps the
    bytes as given. A fixed-shape `bytes` attribute is written as a uint8
    array (here a list of ints) and reads back as those bytes.
    """
    data = bytes(value)
    if file_type == "fb" and isinstance(value, bytes) and not data:
        return b"\x00"
    return data


def expected_values(fixture, k):
    """{attribute: {"hex", "value"}} that sedpack reads back for example k."""
    file_type = FIXTURES[fixture]["shard_file_type"]
    written = written_values(k)
    out = {}
    for name, dtype, shape, _ in schema(fixture):
        value = written[name]
        if dtype == "bytes":
            value = read_back_bytes(file_type, value)
        out[name] = encode(dtype, shape, value)
    return out


def minimal_expected_values():
    out = []
    for example in MINIMAL_EXAMPLES:
        out.append({name: encode(dtype, shape,
                                 read_back_bytes("fb", example[name])
                                 if dtype == "bytes" else example[name])
                    for name, dtype, shape, _ in MINIMAL_SCHEMA})
    return out


def quirk_text(split, k, name, written, read):
    return (f"{split} example id {k}: attribute '{name}' was written as "
            f"{written!r} but reads back as {read!r} (fb stores "
            f"np.array(b'') = one NUL byte)")


def expected_quirks(fixture):
    """The quirks_observed list: bytes values that do not read back as
    written, per split in read order."""
    file_type = FIXTURES[fixture]["shard_file_type"]
    quirks = []
    for split, shards in expected_shards(fixture).items():
        for shard in shards:
            for k in shard["example_ids"]:
                written = written_values(k)
                for name, dtype, _, _ in schema(fixture):
                    if dtype != "bytes":
                        continue
                    read = read_back_bytes(file_type, written[name])
                    if read != bytes(written[name]):
                        quirks.append(quirk_text(split, k, name,
                                                 bytes(written[name]), read))
    return quirks


def expected_records(fixture):
    """The expected_examples.jsonl objects, in read order."""
    records = []
    for split, shards in expected_shards(fixture).items():
        index = 0
        for shard_index, shard in enumerate(shards):
            for k in shard["example_ids"]:
                records.append({"split": split, "index": index, "id": k,
                                "shard": shard_index,
                                "values": expected_values(fixture, k)})
                index += 1
    return records
