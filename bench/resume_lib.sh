# Sourced by the resume benches (resume_bench.sh, resume_mpi.sh): how much of a
# stopped job is on disk and whether a resumed result equals an uninterrupted
# one. PYTHON_MODULE_DIR must name the build's python/ folder.
#   shards DIR    the shard files under DIR (the job journal's folder left out)
#   content DIR   one hash of every split's examples, value for value and in
#                 order, read through the Python module's as_numpy_iterator
shards() { find "$1" -path "$1/.sedpack-hpc" -prune -o -type f ! -name '*.json' ! -name 'update_*' -print 2> /dev/null | wc -l; }
content() {
  PYTHONPATH="$PYTHON_MODULE_DIR" /usr/bin/python3 - "$1" <<'PY'
import hashlib, sys
import sedpack_hpc
ds, h = sedpack_hpc.Dataset(sys.argv[1]), hashlib.sha256()
for split in ("train", "test", "holdout"):
    try:
        for ex in ds.as_numpy_iterator(split=split, shuffle=0, repeat=False):
            for name in sorted(ex):
                h.update(name.encode() + ex[name].tobytes())
    except Exception:  # a split the dataset does not have
        h.update(("no " + split).encode())
print(h.hexdigest()[:16])
PY
}
