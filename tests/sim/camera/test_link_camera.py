"""Cameras fixed to an arm link: a stereo pair's eyes see a known object at the disparity the
pinhole model gives (f·b/d), where projecting its point with each eye's pose puts it; the eyes
follow the arm's forward kinematics; both eyes come from one joint state in one frame."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import StreamCameraConfig, load_robot
from freelook.maps import World, WorldObject, load_world
from freelook.sim import Simulator
from freelook.sim.camera import MAX_TILT, LinkCamera, mount_transform


def room(objects: tuple[WorldObject, ...] = ()) -> World:
    res = 0.05
    grid = np.zeros((400, 400), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    return World("room", grid, res, (0.0, 0.0), objects, wall_height=2.0)


def red_columns(image: np.ndarray) -> float:
    """Mean column of the red pixels (the target pole)."""
    r, g, b = (image[..., i].astype(int) for i in range(3))
    cols = np.nonzero((r > 120) & (g < 60) & (b < 60))[1]
    assert cols.size, "the target is not in view"
    return float(cols.mean())


def pose(x: float, y: float, z: float, yaw: float = 0.0) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = [[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0], [0, 0, 1]]
    out[:3, 3] = (x, y, z)
    return out


def stereo(baseline: float, width: int = 320) -> StreamCameraConfig:
    return StreamCameraConfig(
        name="pair",
        stream=1,
        mount="wrist",
        width=width,
        height=240,
        fov_deg=75.0,
        stereo_baseline=baseline,
    )


@pytest.mark.parametrize("distance", [0.8, 1.5, 3.0])
@pytest.mark.parametrize("baseline", [0.065, 0.12])
def test_the_eyes_see_a_pole_at_the_pinhole_disparity(distance: float, baseline: float) -> None:
    pole = WorldObject("pole", "cylinder", 5.0 + distance, 10.0, 2.0, (230, 20, 20), radius=0.02)
    camera = LinkCamera(stereo(baseline), room((pole,)))
    link = pose(5.0, 10.0, 0.8)
    frame = camera.render(link)
    assert frame.shape == (240, 640, 3)
    left, right = red_columns(frame[:, :320]), red_columns(frame[:, 320:])
    # projecting the pole's point with each eye's pose puts it where the eye drew it
    point = (pole.x, pole.y, 0.8)
    pl, pr = camera.project(point, link, 0), camera.project(point, link, 1)
    assert pl is not None
    assert pr is not None
    assert left == pytest.approx(pl[0], abs=0.75)
    assert right == pytest.approx(pr[0], abs=0.75)
    # the left eye sees the pole further right: disparity f·b/d
    assert left - right == pytest.approx(camera.focal * baseline / distance, abs=1.0)
    assert pl[0] - pr[0] == pytest.approx(camera.focal * baseline / distance, rel=1e-9)


def test_a_mono_camera_is_one_image_of_its_width() -> None:
    config = StreamCameraConfig(name="arm", stream=1, mount="forearm", width=160, height=120)
    camera = LinkCamera(config, room())
    assert camera.render(pose(5.0, 10.0, 0.5)).shape == (120, 160, 3)
    assert len(camera.eyes(pose(5.0, 10.0, 0.5))) == 1


@settings(max_examples=200, deadline=None)
@given(
    st.floats(-math.pi, math.pi),
    st.floats(-55.0, 55.0),
    st.floats(-math.pi, math.pi),
    st.floats(0.01, 0.5),
)
def test_eyes_sit_on_the_camera_left_axis_and_look_along_its_x(
    link_yaw: float, pitch_deg: float, roll: float, baseline: float
) -> None:
    """Heading is the optical axis's azimuth, tilt its elevation (positive pitch looks down,
    as in URDF), the eyes ``baseline`` apart; roll changes neither heading nor tilt."""
    config = stereo(baseline).model_copy(update={"rpy_deg": (math.degrees(roll), pitch_deg, 0.0)})
    camera = LinkCamera(config, room())
    link = pose(5.0, 10.0, 1.0, link_yaw)
    (lx, ly, lz, lh, lt), (rx, ry, rz, rh, _) = camera.eyes(link)
    assert lh == pytest.approx(rh)
    assert math.remainder(lh - link_yaw, 2 * math.pi) == pytest.approx(0.0, abs=1e-9)
    assert lt == pytest.approx(-math.radians(pitch_deg), abs=1e-9)
    assert math.dist((lx, ly, lz), (rx, ry, rz)) == pytest.approx(baseline)
    # the left eye is on the left of the optical axis (positive cross product, z up, unrolled)
    if abs(roll) < 1.0:
        side = math.cos(lh) * (ly - ry) - math.sin(lh) * (lx - rx)
        assert side > 0


def test_steep_views_are_held_within_the_renderer_tilt() -> None:
    config = stereo(0.065).model_copy(update={"rpy_deg": (0.0, 89.0, 0.0)})
    ((*_, tilt), _) = LinkCamera(config, room()).eyes(pose(5.0, 10.0, 1.0))
    assert tilt == pytest.approx(-MAX_TILT)


def test_mount_transform_is_urdfs_rpy() -> None:
    t = mount_transform((0.1, 0.2, 0.3), (0.0, 0.0, 90.0))
    assert t[:3, 0] == pytest.approx([0.0, 1.0, 0.0], abs=1e-12)  # yawed left
    assert t[:3, 3] == pytest.approx([0.1, 0.2, 0.3])
    down = mount_transform((0.0, 0.0, 0.0), (0.0, 30.0, 0.0))
    assert down[2, 0] == pytest.approx(-0.5)  # positive pitch looks down


def test_taros_pair_sits_between_its_urdf_camera_housings_and_follows_the_wrist() -> None:
    """The eyes' midpoint is where the URDF's two camera housings' midpoint is (another path
    through the forward kinematics); pitching the wrist tilts the view by as much."""
    taros = load_robot("taros")
    world = load_world("eod")
    sim = Simulator(taros, world)
    arm = sim.arm
    assert arm is not None
    arm.set_base_pose(2.0, 3.0, 0.7)
    config = taros.cameras[0]
    camera = LinkCamera(config.model_copy(update={"rpy_deg": (0.0, 0.0, 0.0)}), world)
    model = arm.model
    bar = model.link_index("stereo_bar")
    arm.q[:] = model.home()  # the arm stretched out level: the view is not held at ±60°
    eyes = camera.eyes(arm.link_in_world(bar))
    middle = np.mean([e[:3] for e in eyes], axis=0)
    housings = [
        arm.link_in_world(model.link_index(n))[:3, 3] for n in ("camera_left", "camera_right")
    ]
    assert middle == pytest.approx(np.mean(housings, axis=0), abs=1e-9)
    left_to_right = np.subtract(eyes[1][:3], eyes[0][:3])
    housing_axis = housings[1] - housings[0]
    assert np.cross(left_to_right, housing_axis) == pytest.approx(np.zeros(3), abs=1e-9)
    assert np.dot(left_to_right, housing_axis) > 0  # the left eye on the left housing's side
    wrist = model.joint_names.index("wrist_pitch")
    before = eyes[0][4]
    arm.q[wrist] += 0.2  # about the −y axis: the tool rises
    after = camera.eyes(arm.link_in_world(bar))[0][4]
    assert after - before == pytest.approx(0.2, abs=1e-9)
