#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write a dataset of shards lists only, for the index build benches: the
dataset_info.json of SOURCE (a dataset: its schema), its train split a tree of
64 subtrees of 64 leaf lists of SHARDS/4096 shard entries each (16 examples per
shard, no hashes recorded: no checks sidecar is due, and the shard files are
never read by an index build, so none are written). Shards are named as
sedpack and the reference name them, 32 random hex digits (NAMES=uuid in the
environment, the default), or by their number in the leaf (NAMES=counter:
paths that share all but their last few bytes, the best case of a journal that
codes each path against the one before it).

  [NAMES=uuid|counter] make_list_tree.py SOURCE OUT SHARDS
"""
import json
import os
import random
import sys


def main():
    src, out, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
    branches = leaves = 64
    per_leaf = max(1, total // (branches * leaves))
    with open(os.path.join(src, "dataset_info.json")) as f:
        info = json.load(f)
    info["dataset_structure"]["hash_checksum_algorithms"] = []

    def ref(rel, examples, shards):
        return {"shard_list_info_file": {"file_path": rel, "hash_checksums": []},
                "number_of_examples": examples, "number_of_shards": shards}

    def write(rel, text):
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    names = os.environ.get("NAMES", "uuid")
    if names not in ("uuid", "counter"):
        sys.exit("NAMES must be uuid or counter, not %r" % names)
    rng = random.Random(20261204)  # the same tree every run
    name = (lambda i: "%032x" % rng.getrandbits(128)) if names == "uuid" else (lambda i: "%08d" % i)
    entry = ('    {\n      "file_infos": [\n        {\n          "file_path": "%s/%s.fb",\n'
             '          "hash_checksums": []\n        }\n      ],\n      "number_of_examples": 16\n    }')
    tops = []
    for b in range(branches):
        subs = []
        for leaf in range(leaves):
            d = "train/b%02d/l%02d" % (b, leaf)
            write(d + "/shards_list.json",
                  '{\n  "relative_path_self": "%s/shards_list.json",\n  "number_of_examples": %d,\n'
                  '  "shard_files": [\n%s\n  ]\n}' % (d, 16 * per_leaf,
                                                      ",\n".join(entry % (d, name(i)) for i in range(per_leaf))))
            subs.append(ref(d + "/shards_list.json", 16 * per_leaf, per_leaf))
        d = "train/b%02d" % b
        write(d + "/shards_list.json", json.dumps({"relative_path_self": d + "/shards_list.json",
                                                   "number_of_examples": 16 * per_leaf * leaves,
                                                   "children_shard_lists": subs}, indent=2))
        tops.append(ref(d + "/shards_list.json", 16 * per_leaf * leaves, per_leaf * leaves))
    n = per_leaf * leaves * branches
    write("train/shards_list.json", json.dumps({"relative_path_self": "train/shards_list.json",
                                                "number_of_examples": 16 * n, "children_shard_lists": tops},
                                               indent=2))
    info["splits"] = {"train": ref("train/shards_list.json", 16 * n, n)}
    write("dataset_info.json", json.dumps(info, indent=2))


if __name__ == "__main__":
    main()
