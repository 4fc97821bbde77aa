#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The report page as a person sees it: rendered by headless Chromium to a
PNG, which must not be blank, with every plot in the page and no reference to
anything outside it. Exit 77 (skipped) when Chromium is not installed.

Usage: report_browser_test.py SEDPACK CONFIG [PNG_COPY]
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    sedpack, config = sys.argv[1], sys.argv[2]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium is not installed")
        return 77
    with tempfile.TemporaryDirectory() as t:
        ds, page, png = os.path.join(t, "ds"), os.path.join(t, "report.html"), os.path.join(t, "out.png")
        subprocess.run([sedpack, "generate", config, ds], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sedpack, "report", ds, "-o", page, "-s", "train",
                        "--snr", "hw(sbox(plaintext[0]^key[0]))"], check=True, stdout=subprocess.DEVNULL)
        html = open(page, encoding="utf-8").read()
        for bad in ("<script", "http:", "https:", "://", "src=", "href=", "url(", "@import", "<link", "<img"):
            assert bad not in html.lower(), f"the page has {bad!r}"
        ids = set(re.findall(r'<svg id="([^"]+)"', html))
        want = {"shards-examples-train", "shards-bytes-train", "profile-train-trace1", "hist-train-key",
                "hist-train-plaintext", "hist-train-ciphertext", "snr-train-0"}
        assert want <= ids, f"plots missing: {sorted(want - ids)}"
        assert "peak " in html, "the SNR peak is not marked"
        # A profile of its own, so that a failing run leaves no lock behind.
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={os.path.join(t, 'profile')}", f"--screenshot={png}",
                        "--window-size=1200,3000", "file://" + page],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        width, height, bpp, rows = png_pixels(png)
        assert (width, height) == (1200, 3000), (width, height)
        ink = sum(1 for row in rows for x in range(0, width * bpp, bpp) if min(row[x:x + 3]) < 200)
        # Text, frames, curves and bars: several percent of the page; a blank or
        # error page has next to none.
        share = ink / (width * height)
        print(f"{len(ids)} plots; {ink} of {width * height} pixels drawn ({share:.1%})")
        assert share > 0.02, "the rendered page is (nearly) blank"
        # The plot area of the first trace profile is drawn: the band's and the
        # mean's colours appear.
        colours = {bytes(row[x:x + 3]) for row in rows[::4] for x in range(0, width * bpp, bpp * 4)}
        assert any(c[2] > 150 and c[0] < 120 for c in colours), "no blue curve or band in the picture"
        if len(sys.argv) > 3:
            shutil.copy(png, sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
