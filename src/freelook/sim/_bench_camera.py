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


@benchmark("sim.arm_stereo_640x240")
def arm_stereo() -> Case:
    """TAROS's stereo pair near the gripper: both 320 × 240 eyes rendered from the arm's
    forward kinematics into one side-by-side frame and encoded as the robot sends it (stream 1).
    Baseline: one driving-camera frame (640 × 480) rendered and encoded, in the same run."""
    import time

    from freelook.config import load_robot
    from freelook.link import encode_jpeg
    from freelook.maps import load_world
    from freelook.sim import Simulator
    from freelook.sim.camera import LinkCamera

    robot, world = load_robot("taros"), load_world("eod")
    config = next(c for c in robot.cameras if c.name == "arm_stereo")
    arm = Simulator(robot, world).arm
    assert arm is not None
    arm.set_base_pose(3.0, 2.0, 0.0)
    arm.q[:] = arm.model.home()  # the arm out level: the pair looks along the room
    link = arm.model.link_index(config.mount)
    camera = LinkCamera(config, world)
    driving = _camera(640, 480)
    times = {"render": 0.0, "encode": 0.0, "calls": 0.0}

    def stereo() -> object:
        t0 = time.perf_counter()
        frame = camera.render(arm.link_in_world(link))
        t1 = time.perf_counter()
        jpeg = encode_jpeg(frame, config.jpeg_quality)
        times["render"] += t1 - t0
        times["encode"] += time.perf_counter() - t1
        times["calls"] += 1
        return jpeg

    def extra() -> dict[str, float]:
        n = max(times["calls"], 1.0)
        return {"render_ms": 1e3 * times["render"] / n, "encode_ms": 1e3 * times["encode"] / n}

    return Case(
        run=stereo,
        baseline=lambda: encode_jpeg(driving.render(3.0, 3.0, 0.5), 80),
        target_s=1 / (4 * config.rate_hz),  # a quarter of the pair's frame period at most
        unit="frame",
        extra=extra,
        interleave=True,
    )
