"""HIT (TAROS eqs. 1–4) by hand, against its identities, and from the command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import freelook.stereo
from freelook.cli import app
from freelook.stereo import HitError, analysed_shift, disparities, hit, hit_from_view

HAND = ["--resolution", "2160", "--fov", "94", "--ipd", "0.064", "--screen-distance", "3",
        "--screen-width", "4", "--camera-width", "1280"]  # fmt: skip


def test_the_face_is_locked() -> None:
    assert sorted(freelook.stereo.__all__) == [
        "Disparities", "Hit", "HitError", "analysed_shift", "disparities", "hit", "hit_from_view",
    ]  # fmt: skip


def test_the_hand_calculation() -> None:
    # d′ = 2160 / (4 tan 47°) = 2160 / 4.2894 = 503.56; p_max = 0.064·503.56 / (2·3) = 5.371;
    # w′_s = 4·503.56 / 3 = 671.41; p′_max = 5.371·1280 / 671.41 = 0.064·1280 / (2·4) = 10.24
    h = hit(2160, 94, 0.064, 3, 4, 1280)
    assert h.projection_distance == pytest.approx(503.6, abs=0.05)
    assert h.max_parallax == pytest.approx(5.37, abs=0.005)
    assert h.screen_width == pytest.approx(671.4, abs=0.05)
    assert h.camera_shift == pytest.approx(10.24, abs=1e-9)


def test_the_command_prints_the_hand_calculation() -> None:
    out = CliRunner().invoke(app, ["hit", *HAND, "--json"])
    assert out.exit_code == 0, out.output
    values = json.loads(out.output)
    assert values["projection_distance"] == pytest.approx(503.6, abs=0.05)
    assert values["camera_shift"] == pytest.approx(10.24, abs=1e-9)
    text = CliRunner().invoke(app, ["hit", *HAND])
    assert text.exit_code == 0
    assert "503.56" in text.output
    assert "10.24" in text.output


@pytest.mark.parametrize(
    ("flag", "value", "match"),
    [
        ("--fov", "180", "fov must be < 180"),
        ("--fov", "0", "fov must be a finite number > 0"),
        ("--ipd", "nan", "ipd must be a finite number > 0"),
        ("--screen-width", "inf", "screen width must be a finite number > 0"),
        ("--resolution", "-2160", "resolution must be a finite number > 0"),
        ("--camera-width", "0", "camera width"),
    ],
)
def test_bad_input_is_refused_with_exit_2(flag: str, value: str, match: str) -> None:
    args = list(HAND)
    args[args.index(flag) + 1] = value
    out = CliRunner().invoke(app, ["hit", *args])
    assert out.exit_code == 2
    assert match in out.output


def test_bad_input_raises() -> None:
    with pytest.raises(HitError, match="fov must be < 180"):
        hit(2160, 200, 0.064, 3, 4, 1280)
    with pytest.raises(HitError, match="ipd must be a number"):
        hit(2160, 90, "x", 3, 4, 1280)  # type: ignore[arg-type]
    with pytest.raises(HitError, match="projection x scale"):
        hit_from_view(1080, -1.0, 0.064, 3, 4, 1280)


finite = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False)


@given(
    X=st.floats(200, 8000), fov=st.floats(1.0, 179.0), ipd=st.floats(0.04, 0.08),
    d_s=finite, w_s=finite, X_c=st.floats(16, 8000),
)  # fmt: skip
def test_the_camera_shift_depends_on_ipd_camera_and_screen_width_only(
    X: float, fov: float, ipd: float, d_s: float, w_s: float, X_c: float
) -> None:
    h = hit(X, fov, ipd, d_s, w_s, X_c)
    assert h.camera_shift == pytest.approx(ipd * X_c / (2 * w_s), rel=1e-9)
    # the parallax limit, measured on the displayed screen, is half the IPD
    assert h.max_parallax / h.screen_width * w_s == pytest.approx(ipd / 2, rel=1e-9)


@given(eye=st.integers(100, 4000), fov=st.floats(10.0, 170.0))
def test_a_view_gives_what_its_field_of_view_gives(eye: int, fov: float) -> None:
    scale = 1.0 / math.tan(math.radians(fov) / 2)
    a = hit_from_view(eye, scale, 0.063, 2.5, 3.0, 640)
    b = hit(2 * eye, fov, 0.063, 2.5, 3.0, 640)
    assert a.projection_distance == pytest.approx(b.projection_distance, rel=1e-9)
    assert a.max_parallax == pytest.approx(b.max_parallax, rel=1e-9)


def _textured_pair(far: int, near: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Left and right eyes of a random-dot scene: the top half at disparity ``far``, the bottom
    half at ``near`` (left column − right column)."""
    rng = np.random.default_rng(seed)
    h, w = 64, 160
    right = rng.integers(0, 256, size=(h, w)).astype(np.float64)
    left = np.empty_like(right)
    for rows, d in ((slice(0, h // 2), far), (slice(h // 2, h), near)):
        left[rows, d:] = right[rows, : w - d]
        left[rows, :d] = rng.integers(0, 256, size=(h // 2, d))
    return left, right


@given(far=st.integers(0, 6), extra=st.integers(2, 10), seed=st.integers(0, 2**16))
def test_block_matching_finds_the_far_and_near_disparities(far: int, extra: int, seed: int) -> None:
    left, right = _textured_pair(far, far + extra, seed)
    found = disparities(left, right, max_disparity=20)
    assert found is not None
    assert found.far == pytest.approx(far, abs=0.5)
    assert found.near == pytest.approx(far + extra, abs=0.5)
    # the largest shift that keeps the farthest features at infinity, not beyond
    shift = analysed_shift(10.24, found, limit=100.0)
    assert shift == pytest.approx(10.24 + found.far / 2)
    assert 2 * shift - found.far <= 2 * 10.24 + 1e-9


def test_analysis_of_flat_or_bad_images() -> None:
    flat = np.full((48, 96), 128.0)
    assert disparities(flat, flat, 8) is None
    assert analysed_shift(10.0, None, limit=50.0) == 10.0
    assert analysed_shift(10.0, None, limit=4.0) == 4.0
    with pytest.raises(HitError, match="differ in size"):
        disparities(flat, flat[:, :90], 8)
    with pytest.raises(HitError, match="non-finite"):
        disparities(np.full((48, 96), np.nan), flat, 8)
