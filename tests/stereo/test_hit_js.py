"""The page's HIT (web/static/station-hit.js) against freelook.stereo: the same formulas and
the same block matching, run by Node on the same inputs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from freelook.stereo import HitError, analysed_shift, disparities, hit

NODE = shutil.which("node")
MODULE = Path(__file__).parents[2] / "src" / "freelook" / "web" / "static" / "station-hit.js"
SCRIPT = """
import { readFileSync } from "node:fs";
// as an ES module whatever the nearest package.json says
const source = readFileSync(process.argv[1], "utf8");
const { hit, disparities, analysedShift } = await import(
  "data:text/javascript," + encodeURIComponent(source)
);
const cases = JSON.parse(readFileSync(0, "utf8"));
const out = cases.hits.map((c) => hit(...c));
const pairs = cases.pairs.map(([w, h, left, right, maxD]) => {
  const found = disparities(Float32Array.from(left), Float32Array.from(right), w, h, maxD);
  return { found, shift: analysedShift(10.24, found, 100) };
});
process.stdout.write(JSON.stringify({ hits: out, pairs }));
"""


def _node(cases: dict[str, object]) -> dict[str, list[object]]:
    if NODE is None:
        pytest.skip("node is not installed")
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", SCRIPT, str(MODULE)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_page_computes_what_python_computes() -> None:
    rng = np.random.default_rng(19)
    hits = [
        [float(rng.uniform(200, 8000)), float(rng.uniform(1, 179)), float(rng.uniform(0.05, 0.08)),
         float(rng.uniform(0.3, 30)), float(rng.uniform(0.3, 30)), float(rng.uniform(16, 4000))]
        for _ in range(200)
    ]  # fmt: skip
    hits.append([2160, 94, 0.064, 3, 4, 1280])
    bad = [[2160, 180, 0.064, 3, 4, 1280], [2160, 94, -0.064, 3, 4, 1280], [0, 94, 0.064, 3, 4, 1]]
    pairs = []
    for seed, (far, near) in enumerate([(0, 6), (3, 9), (5, 12)]):
        r = np.random.default_rng(seed)
        right = r.integers(0, 256, size=(48, 96)).astype(np.float64)
        left = np.empty_like(right)
        for rows, d in ((slice(0, 24), far), (slice(24, 48), near)):
            left[rows, d:] = right[rows, : 96 - d]
            left[rows, :d] = r.integers(0, 256, size=(24, d))
        pairs.append((left, right))
    out = _node(
        {
            "hits": hits + bad,
            "pairs": [[96, 48, lf.ravel().tolist(), rt.ravel().tolist(), 16] for lf, rt in pairs],
        }
    )
    for args, got in zip(hits, out["hits"], strict=False):
        want = hit(*args).as_dict()
        assert isinstance(got, dict)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-12)
    for args, got in zip(bad, out["hits"][len(hits) :], strict=True):
        assert got is None
        with pytest.raises(HitError):
            hit(*args)
    for (left, right), got in zip(pairs, out["pairs"], strict=True):
        want = disparities(left, right, 16)
        assert want is not None
        assert isinstance(got, dict)
        assert got["found"]["far"] == pytest.approx(want.far)
        assert got["found"]["near"] == pytest.approx(want.near)
        assert got["found"]["blocks"] == want.blocks
        assert got["shift"] == pytest.approx(analysed_shift(10.24, want, 100))
