#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Test helper, independent of the C++ code under test: writes TRS files and
ChipWhisperer projects with `struct`, and parses TRS files on its own.

  trs_tool.py write OUT.trs SEED CODING TRACES SAMPLES [--v2] [--titles] [--header-traces N]
  trs_tool.py cw DIR                      a ChipWhisperer project (2 segments + 1 disabled)
  trs_tool.py compare OUT.trs SPEC...     OUT.trs must hold the traces of the SPEC files in order
                                          (SPEC: a .trs written above, or cw:DIR for a project)
"""
import json
import os
import struct
import sys

CODING = {1: ("b", 1), 2: ("h", 2), 4: ("i", 4), 0x14: ("f", 4)}
PTYPE = {1: ("B", 1), 2: ("h", 2), 4: ("i", 4), 0x14: ("f", 4), 8: ("q", 8), 0x18: ("d", 8), 0x20: ("s", 1),
         0x31: ("?", 1)}


def pattern(seed, row, col):
    x = (seed * 0x9E3779B97F4A7C15 + row * 0xBF58476D1CE4E5B9 + col * 0x94D049BB133111EB) & (2**64 - 1)
    x ^= x >> 29
    x = (x * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    x ^= x >> 32
    return x


def tlv(tag, value):
    if len(value) < 0x80:
        return bytes([tag, len(value)]) + value
    return bytes([tag, 0x84]) + struct.pack("<I", len(value)) + value


def sample(seed, coding, t, s):
    p = pattern(seed, t, s)
    if coding == 0x14:
        return float(((p % 2**32) % 100000)) / 64.0
    bits = {1: 8, 2: 16, 4: 32}[coding]
    v = p % (1 << bits)
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def write(out, seed, coding, traces, samples, v2, titles, header_traces):
    h = tlv(0x41, struct.pack("<I", traces if header_traces is None else header_traces))
    h += tlv(0x42, struct.pack("<I", samples)) + tlv(0x43, bytes([coding]))
    data = 32 if v2 else 0
    if data:
        h += tlv(0x44, struct.pack("<H", data))
    if titles:
        h += tlv(0x45, bytes([16]))
    h += tlv(0x47, b"d" * 200)  # long-length form
    h += tlv(0x4C, struct.pack("<f", 0.25))
    if v2:
        h += tlv(0x4F, bytes([2]))
        h += tlv(0x76, struct.pack("<H", 1) + struct.pack("<H", 3) + b"LAB" + bytes([0x20]) + struct.pack("<H", 2) + b"x1")
        d = struct.pack("<H", 2)
        for name, off in (("INPUT", 0), ("KEY", 16)):
            d += struct.pack("<H", len(name)) + name.encode() + bytes([1]) + struct.pack("<HH", 16, off)
        h += tlv(0x77, d)
    h += bytes([0x5F, 0])
    fmt, _ = CODING[coding]
    with open(out, "wb") as f:
        f.write(h)
        for t in range(traces):
            if titles:
                f.write(("t%d" % t).encode().ljust(16, b"\0"))
            f.write(bytes((pattern(seed + 7, t, i) & 0xFF) for i in range(data)))
            f.write(struct.pack("<%d%s" % (samples, fmt), *[sample(seed, coding, t, s) for s in range(samples)]))


def npy(path, descr, shape, payload):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ", ".join(str(x) for x in shape) + ("," if len(shape) == 1 else ""))
    d = d.ljust(64 * ((10 + len(d) + 1 + 63) // 64) - 10 - 1) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + payload)


CW_SEGMENTS = [(0, 30, 27, True), (1, 20, 20, False), (2, 13, 13, True)]  # seg, rows, numTraces, enabled
CW_POINTS = 24


def cw_trace(seg, r, c):
    return (pattern(seg, r, c) % 1024) / 1024.0 - 0.5


def cw_byte(seg, what, r, c):
    return pattern(seg * 31 + len(what), r, c) & 0xFF


def cw(root):
    traces_dir = os.path.join(root, "proj_data", "traces")
    os.makedirs(traces_dir, exist_ok=True)
    lines = ["[Trace Management]"]
    for seg, rows, num, enabled in CW_SEGMENTS:
        prefix = "2024.02.0%d-09.00.00_" % (seg + 1)
        with open(os.path.join(traces_dir, "config_%s.cfg" % prefix), "w") as f:
            f.write("[Trace Config]\nnumTraces = %d\nprefix = %s\n" % (num, prefix))
        npy(os.path.join(traces_dir, prefix + "traces.npy"), "<f8", (rows, CW_POINTS),
            b"".join(struct.pack("<d", cw_trace(seg, r, c)) for r in range(rows) for c in range(CW_POINTS)))
        for what in ("textin", "textout", "keylist"):
            npy(os.path.join(traces_dir, prefix + what + ".npy"), "|u1", (rows, 16),
                bytes(cw_byte(seg, what, r, c) for r in range(rows) for c in range(16)))
        npy(os.path.join(traces_dir, prefix + "knownkey.npy"), "|O", (1,), b"\x80\x04\x95\x00.")
        lines.append("tracefile%d = proj_data\\traces\\config_%s.cfg" % (seg, prefix))
        lines.append("enabled%d = %s" % (seg, "True" if enabled else "False"))
    with open(os.path.join(root, "proj.cwp"), "w") as f:
        f.write("[ChipWhisperer]\n" + "\n".join(lines) + "\n")


def parse(path):
    """Header dict and a list of traces (title, {param: values}, samples)."""
    b = open(path, "rb").read()
    pos, hdr = 0, {}
    while True:
        tag, n = b[pos], b[pos + 1]
        pos += 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(b[pos:pos + k], "little")
            pos += k
        hdr[tag] = b[pos:pos + n]
        pos += n
        if tag == 0x5F:
            break
    nt = int.from_bytes(hdr[0x41], "little")
    ns = int.from_bytes(hdr[0x42], "little")
    coding = hdr[0x43][0]
    ld = int.from_bytes(hdr.get(0x44, b"\0"), "little")
    ts = int.from_bytes(hdr.get(0x45, b"\0"), "little")
    defs = []
    if 0x77 in hdr:
        d = hdr[0x77]
        count, q = struct.unpack_from("<H", d, 0)[0], 2
        for _ in range(count):
            ln = struct.unpack_from("<H", d, q)[0]
            name = d[q + 2:q + 2 + ln].decode()
            q += 2 + ln
            typ, cnt, off = d[q], *struct.unpack_from("<HH", d, q + 1)
            q += 5
            defs.append((name, typ, cnt, off))
    fmt, size = CODING[coding]
    rec = ts + ld + ns * size
    assert len(b) - pos == nt * rec, "file size %d != %d records of %d" % (len(b) - pos, nt, rec)
    traces = []
    for t in range(nt):
        r = b[pos + t * rec: pos + (t + 1) * rec]
        title = r[:ts].rstrip(b"\0").decode()
        data = r[ts:ts + ld]
        params = {}
        for name, typ, cnt, off in defs:
            pf, psz = PTYPE[typ]
            params[name] = list(struct.unpack_from("<%d%s" % (cnt, pf), data, off))
        samples = list(struct.unpack_from("<%d%s" % (ns, fmt), r, ts + ld))
        traces.append((title, params, samples))
    return hdr, traces


def compare(out, specs):
    hdr, got = parse(out)
    assert hdr.get(0x4F, b"\0")[0] == 2, "not TRS v2"
    want = []
    for spec in specs:
        if spec.startswith("cw:"):
            for seg, rows, num, enabled in CW_SEGMENTS:
                if not enabled:
                    continue
                for r in range(num):
                    params = {w: [cw_byte(seg, w, r, c) for c in range(16)] for w in ("textin", "textout", "keylist")}
                    want.append(("", params, [cw_trace(seg, r, c) for c in range(CW_POINTS)]))
        else:
            _, traces = parse(spec)
            want.extend(traces)
    assert len(got) == len(want), "%d traces, want %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        assert g[0] == w[0], "trace %d title %r != %r" % (i, g[0], w[0])
        for k, v in w[1].items():
            assert g[1].get(k) == v, "trace %d parameter %s: %r != %r" % (i, k, g[1].get(k), v)
        assert g[2] == w[2], "trace %d samples differ" % i
    print("compare: %d traces equal" % len(got))


def main(argv):
    if argv[1] == "write":
        args = argv[2:]
        ht = None
        if "--header-traces" in args:
            i = args.index("--header-traces")
            ht = int(args[i + 1])
        write(args[0], int(args[1]), int(args[2], 0), int(args[3]), int(args[4]), "--v2" in args, "--titles" in args,
              ht)
    elif argv[1] == "cw":
        cw(argv[2])
    elif argv[1] == "compare":
        compare(argv[2], argv[3:])
    elif argv[1] == "json":
        print(json.dumps({"traces": len(parse(argv[2])[1])}))


if __name__ == "__main__":
    main(sys.argv)
