"""Seed 000's manoeuvres: straight camera segments (Fig. 6), a constant orbit (Fig. 7)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.kinematics import (
    DriveState,
    fig6_segments,
    fig7_object,
    fig7_segments,
    integrate_drive,
    integrate_holonomic,
    simulate_free_look,
)

FOI = {"L1": 0.11, "L2": -0.019, "d": 0.35}


def _max_deviation_from_chord(points: np.ndarray) -> float:
    p0, p1 = points[0], points[-1]
    u = (p1 - p0) / np.linalg.norm(p1 - p0)
    rel = points - p0
    return float(np.max(np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])))


def test_fig6_segments_are_straight_within_1mm_per_metre() -> None:
    trace = simulate_free_look(fig6_segments(), DriveState(0, 0, 0, math.pi / 2), **FOI)
    expected_dirs = [(-1, 0), (0, 1), (1, 0), (0, 1), (-1, 0)]  # world frame: camera faces north
    for index, direction in enumerate(expected_dirs):
        pts = trace.camera[trace.segment == index, :2]
        chord = pts[-1] - pts[0]
        assert np.linalg.norm(chord) == pytest.approx(1.0, abs=2e-3)
        assert np.dot(chord / np.linalg.norm(chord), direction) > 0.99999
        assert _max_deviation_from_chord(pts) < 1e-3
        # the camera never turned
        assert np.allclose(trace.camera[trace.segment == index, 2], math.pi / 2, atol=1e-9)
    # while the chassis did turn (that is what FLC hides)
    assert np.ptp(trace.chassis[:, 2]) > 0.5


def test_fig7_orbit_radius_constant_within_1mm() -> None:
    start = DriveState(0, 0, 0, 0)
    trace = simulate_free_look(fig7_segments(), start, **FOI)
    ox, oy = fig7_object(start, FOI["L1"], FOI["L2"])
    orbit = trace.camera[trace.segment == 1]
    radius = np.hypot(orbit[:, 0] - ox, orbit[:, 1] - oy)
    assert np.ptp(radius) < 1e-3
    assert radius.mean() == pytest.approx(1.0, abs=2e-3)
    # the object stays centred: the camera looks at it throughout the orbit
    bearing = np.arctan2(oy - orbit[:, 1], ox - orbit[:, 0])
    off = np.angle(np.exp(1j * (bearing - orbit[:, 2])))
    assert np.max(np.abs(off)) < 2e-3
    # and the orbit is a half circle
    swept = np.angle(np.exp(1j * (orbit[-1, 2] - orbit[0, 2])))
    assert abs(abs(swept) - math.pi) < 0.01


def test_exact_arc_integration_matches_fine_euler() -> None:
    state = DriveState(0.3, -0.2, 0.7, 0.1)
    exact = integrate_drive(state, 0.4, 0.9, 0.2, 0.5, 2.0)
    euler = state
    for _ in range(200_000):
        euler = integrate_drive(euler, 0.4, 0.9, 0.2, 0.5, 1e-5)
    assert (exact.x, exact.y, exact.theta, exact.pan) == pytest.approx(
        (euler.x, euler.y, euler.theta, euler.pan), abs=1e-6
    )


def test_holonomic_base_moves_sideways() -> None:
    end = integrate_holonomic(DriveState(0, 0, math.pi / 2, 0), 0.0, 0.5, 0.0, 0.0, 2.0)
    assert (end.x, end.y, end.theta) == pytest.approx((-1.0, 0.0, math.pi / 2), abs=1e-12)
    turning = integrate_holonomic(DriveState(0, 0, 0, 0), 1.0, 0.0, 1.0, 0.0, math.pi)
    assert (turning.x, turning.y) == pytest.approx((0.0, 2.0), abs=1e-12)


@pytest.mark.parametrize("figure", ["fig6", "fig7"])
def test_plot_command_writes_png(tmp_path: Path, figure: str) -> None:
    out = tmp_path / f"{figure}.png"
    result = CliRunner().invoke(app, ["plot", figure, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
