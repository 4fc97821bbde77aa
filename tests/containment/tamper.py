#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Edits a sedpack dataset the way a hostile or careless producer could, for the
containment tests, then re-stamps the sha256 hash tree so that the edit is the
only thing wrong with the dataset (a check must then catch the edit itself,
not a hash mismatch next to it).

  tamper.py set FILE KEY.PATH JSON   set a value in a JSON file (list indices are numbers)
  tamper.py restamp DATASET          recompute every sha256 bottom-up (files are read
                                     through symbolic links, as a naive reader would)
"""
import hashlib
import json
import os
import sys


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def contained(rel):
    # Paths the containment rules refuse are left with their old hashes.
    return not rel.startswith("/") and ".." not in rel.replace("\\", "/").split("/")


def restamp_list(root, rel):
    path = os.path.join(root, rel)
    if not contained(rel) or not os.path.isfile(path):
        return None
    with open(path) as f:
        lst = json.load(f)
    for shard in lst.get("shard_files", []):
        for info in shard.get("file_infos", []):
            p = os.path.join(root, info["file_path"])
            if contained(info["file_path"]) and os.path.isfile(p):
                info["hash_checksums"] = [sha256(p)]
    for child in lst.get("children_shard_lists", []):
        f = child["shard_list_info_file"]
        h = restamp_list(root, f["file_path"])
        if h is not None:
            f["hash_checksums"] = [h]
    with open(path, "w") as f:
        json.dump(lst, f, indent=2)
    return sha256(path)


def restamp(root):
    info_path = os.path.join(root, "dataset_info.json")
    with open(info_path) as f:
        info = json.load(f)
    for entry in info["splits"].values():
        f = entry["shard_list_info_file"]
        h = restamp_list(root, f["file_path"])
        if h is not None:
            f["hash_checksums"] = [h]
    with open(info_path, "w") as f:
        json.dump(info, f, indent=2)


def set_value(path, key, value):
    with open(path) as f:
        doc = json.load(f)
    keys = [int(k) if k.isdigit() else k for k in key.split(".")]
    node = doc
    for k in keys[:-1]:
        node = node[k]
    node[keys[-1]] = json.loads(value)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


def main(argv):
    if len(argv) == 5 and argv[1] == "set":
        set_value(argv[2], argv[3], argv[4])
    elif len(argv) == 3 and argv[1] == "restamp":
        restamp(argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
