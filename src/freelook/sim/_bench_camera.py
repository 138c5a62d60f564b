"""Benchmarks of the first-person camera."""

from __future__ import annotations

from freelook.bench import Case, benchmark


def _camera(width: int, height: int):  # type: ignore[no-untyped-def]
    from freelook.config import CameraConfig, load_robot
    from freelook.maps import load_world
    from freelook.sim.camera import Camera

    robot = load_robot("pioneer3dx")
    assert robot.pan_tilt is not None
    return Camera(CameraConfig(width=width, height=height), robot.pan_tilt, load_world("lab"))


def _numpy_floor_fill(width: int, height: int):  # type: ignore[no-untyped-def]
    """Baseline: only the floor/ceiling pass written in plain numpy (no walls, no objects)."""
    import numpy as np

    v = np.arange(height)[:, None] + 0.5
    u = np.arange(width)[None, :] + 0.5
    focal = (width / 2) / np.tan(np.radians(30))

    def fill() -> object:
        below = np.maximum(v - height / 2, 1e-3)
        dist = focal * 0.35 / below / np.cos(np.arctan((width / 2 - u) / focal))
        grid = ((dist % 1.0) < 0.02).astype(np.uint8)
        return np.repeat(grid[..., None] * 80 + 100, 3, axis=2)

    return fill


@benchmark("sim.camera_640x480")
def camera_640() -> Case:
    camera = _camera(640, 480)
    return Case(
        run=lambda: camera.render(3.0, 3.0, 0.5),
        baseline=_numpy_floor_fill(640, 480),
        target_s=1 / 60,
        unit="frame",
    )


@benchmark("sim.camera_320x240")
def camera_320() -> Case:
    camera = _camera(320, 240)
    return Case(
        run=lambda: camera.render(3.0, 3.0, 0.5),
        baseline=_numpy_floor_fill(320, 240),
        target_s=1 / 200,
        unit="frame",
    )


@benchmark("sim.jpeg_640x480")
def jpeg_640() -> Case:
    from freelook.link import encode_jpeg

    frame = _camera(640, 480).render(3.0, 3.0, 0.5)
    return Case(run=lambda: encode_jpeg(frame, 80), unit="frame")
