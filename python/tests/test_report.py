# SPDX-License-Identifier: Apache-2.0
"""Dataset.report: the numbers of `sedpack report` as numpy arrays."""
import numpy as np
import pytest

import sedpack_hpc


def _dataset(tmp_path):
    n, samples, leak = 120, 32, 9
    structure = {
        "saved_data_description": [
            {"name": "trace", "dtype": "float32", "shape": [samples]},
            {"name": "plaintext", "dtype": "uint8", "shape": [16]},
        ],
        "compression": "LZ4",
        "examples_per_shard": 16,
    }
    ds = sedpack_hpc.Dataset.create(tmp_path / "ds", dataset_structure=structure)
    rng = np.random.default_rng(1)
    traces, pts = [], []
    with ds.filler(concurrency=1) as f:
        for _ in range(n):
            pt = rng.integers(0, 256, 16, dtype=np.uint8)
            t = rng.integers(0, 8, samples).astype(np.float32)
            t[leak] += 3 * bin(int(pt[0])).count("1")
            f.write_example({"trace": t, "plaintext": pt}, split="train")
            traces.append(t)
            pts.append(pt)
    return ds, np.array(traces, dtype=np.float64), np.array(pts), leak


def test_report_matches_numpy(tmp_path):
    ds, traces, pts, leak = _dataset(tmp_path)
    r = ds.report(snr=["hw(plaintext[0])"], threads=2)
    train = r["splits"]["train"]
    assert train["examples"] == len(traces)
    prof = train["profiles"]["trace"]
    np.testing.assert_allclose(prof["mean"], traces.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(prof["std"], traces.std(axis=0), rtol=1e-9)
    np.testing.assert_array_equal(prof["max"], traces.max(axis=0))
    hist = train["histograms"]["plaintext"]
    counts = np.bincount(pts.ravel(), minlength=256)
    np.testing.assert_array_equal(hist["counts"], counts[hist["first"]:hist["first"] + len(hist["counts"])])
    (snr,) = train["snr"]
    labels = np.array([bin(int(p)).count("1") for p in pts[:, 0]])
    used = [c for c in np.unique(labels) if (labels == c).sum() >= 2]
    means = np.array([traces[labels == c].mean(axis=0) for c in used])
    variances = np.array([traces[labels == c].var(axis=0) for c in used])
    np.testing.assert_allclose(snr["snr"], means.var(axis=0) / variances.mean(axis=0), rtol=1e-8)
    assert snr["peak_sample"] == leak
    assert train["stats"]["plaintext"]["max"] == int(pts.max())


def test_report_errors(tmp_path):
    ds, *_ = _dataset(tmp_path)
    with pytest.raises(ValueError, match='unknown attribute "nope"'):
        ds.report(snr=["hw(nope[0])"])
    with pytest.raises(ValueError, match="not an integer dtype"):
        ds.report(snr=["trace[0]"])
