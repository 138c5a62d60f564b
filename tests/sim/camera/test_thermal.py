"""The simulated thermal camera: objects in false colour by their temperature, the room at
ambient, through the simulated HAL as TAROS's stream 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from freelook.config import CameraConfig, load_robot
from freelook.errors import WorldError
from freelook.hardware.sim import simulated_hardware
from freelook.maps import load_world
from freelook.sim import Simulator
from freelook.sim.camera import Camera, ThermalCamera
from freelook.sim.camera._thermal import AMBIENT, T_MAX, T_MIN, false_colour, palette

TAROS = load_robot("taros")


def _thermal(world_name: str = "eod") -> tuple[Camera, ThermalCamera]:
    world = load_world(world_name)
    assert TAROS.pan_tilt is not None
    camera = Camera(CameraConfig(width=160, height=120, fov_deg=50.0), TAROS.pan_tilt, world)
    return camera, ThermalCamera(camera, world)


def test_the_warm_object_reads_its_temperature_and_the_room_ambient() -> None:
    world = load_world("eod")
    warm = next(o for o in world.objects if o.name == "suspicious object")
    assert warm.temperature == 45.0
    camera, thermal = _thermal()
    pose = (5.8, 2.0, 0.0)  # 1.2 m before the object, looking at it
    frame = thermal.render(*pose, 0.0, -0.25)
    assert frame.shape == (120, 160, 3)
    uv = camera.project(warm.x, warm.y, 0.1, *pose, 0.0, -0.25)
    assert uv is not None
    u, v = round(uv[0]), round(uv[1])
    assert thermal.temperature_at(frame, u, v) == pytest.approx(45.0, abs=1.0)
    assert thermal.temperature_at(frame, 80, 2) == pytest.approx(AMBIENT, abs=2.5)  # the wall
    # the same scene in visible light is not false colour: the object is red there
    visible = Camera(camera.config, camera.pan_tilt, world).render(*pose, 0.0, -0.25)
    assert visible[v, u, 0] > 150 > visible[v, u, 1]
    assert not np.array_equal(visible, frame)


def test_an_object_without_a_temperature_is_at_ambient(tmp_path: Path) -> None:
    text = (Path(__file__).parents[3] / "src/freelook/maps/builtin/eod.toml").read_text()
    path = tmp_path / "cold.toml"
    path.write_text(text.replace("temperature = 45.0", ""))
    world = load_world(path)
    assert TAROS.pan_tilt is not None
    camera = Camera(CameraConfig(width=160, height=120, fov_deg=50.0), TAROS.pan_tilt, world)
    thermal = ThermalCamera(camera, world)
    pose = (5.8, 2.0, 0.0)
    uv = camera.project(7.0, 2.0, 0.1, *pose, 0.0, -0.25)
    assert uv is not None
    frame = thermal.render(*pose, 0.0, -0.25)
    assert thermal.temperature_at(frame, round(uv[0]), round(uv[1])) == pytest.approx(
        AMBIENT, abs=1.0
    )


@pytest.mark.parametrize("bad", ["nan", "inf", "-300.0"])
def test_a_bad_temperature_is_refused(tmp_path: Path, bad: str) -> None:
    text = (Path(__file__).parents[3] / "src/freelook/maps/builtin/eod.toml").read_text()
    path = tmp_path / "bad.toml"
    path.write_text(text.replace("temperature = 45.0", f"temperature = {bad}"))
    with pytest.raises(WorldError, match="temperature"):
        load_world(path)


@given(st.floats(T_MIN, T_MAX), st.floats(0.45, 1.0))
def test_shading_does_not_change_the_temperature_read(temperature: float, shade: float) -> None:
    code = (temperature - T_MIN) / (T_MAX - T_MIN) * 255.0
    pixel = np.array([[[int(code * shade), int(255 * shade), 0]]], dtype=np.uint8)
    out = false_colour(pixel)
    index = int(np.abs(palette().astype(int) - out[0, 0].astype(int)).sum(axis=1).argmin())
    assert T_MIN + (T_MAX - T_MIN) * index / 255 == pytest.approx(temperature, abs=1.2)


def test_taros_sends_the_thermal_camera_as_stream_2() -> None:
    sim = Simulator(TAROS, load_world("eod"))
    sim.run_for(0.02)
    cameras = simulated_hardware(sim).stream_cameras
    assert set(cameras) == {1, 2}
    frame = cameras[2].capture()
    assert frame is not None
    assert frame.shape == (120, 160, 3)
    # every pixel is a palette colour
    colours = {tuple(c) for c in palette().tolist()}
    assert all(tuple(p) in colours for p in frame.reshape(-1, 3)[::97].tolist())
