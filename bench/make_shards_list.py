#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write one flat shards_list.json with N shard entries, laid out exactly as the
reference writes one (pydantic model_dump_json(indent=2, exclude_defaults=True)):
the list a reference Filler leaves for a whole split. Shard paths follow the
reference's PathGenerator (three 10-hex folders, 1,000 files per leaf, a 32-hex
stem), one SHA-256 per file. For bench/lists_bench.cc:

  make_shards_list.py N OUT [--custom-metadata]

--custom-metadata gives every shard {"group": "A"} (the reference drops an
empty custom_metadata). 1,000,000 entries make about 290 MB.
"""
import argparse
import hashlib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--custom-metadata", action="store_true")
    args = ap.parse_args()

    def hexid(i, width):
        return hashlib.sha256(str(i).encode()).hexdigest()[:width]

    leaf = "train/%s/%s/%s" % (hexid(-1, 10), hexid(-2, 10), hexid(-3, 10))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write('{\n  "relative_path_self": "%s/shards_list.json",\n' % leaf)
        f.write('  "number_of_examples": %d,\n  "shard_files": [\n' % args.n)
        for i in range(args.n):
            if i % 1000 == 0 and i:
                leaf = "train/%s/%s/%s" % (hexid(-1, 10), hexid(-2, 10), hexid(i, 10))
            custom = ""
            if args.custom_metadata:
                custom = ',\n      "custom_metadata": {\n        "group": "A"\n      }'
            f.write(
                '    {\n'
                '      "file_infos": [\n'
                '        {\n'
                '          "file_path": "%s/%s.fb",\n'
                '          "hash_checksums": [\n'
                '            "%s"\n'
                '          ]\n'
                '        }\n'
                '      ],\n'
                '      "number_of_examples": 1%s\n'
                '    }%s\n' % (leaf, hexid(i, 32), hashlib.sha256(b"s%d" % i).hexdigest(), custom,
                              "," if i + 1 < args.n else ""))
        f.write('  ]\n}')


if __name__ == "__main__":
    main()
