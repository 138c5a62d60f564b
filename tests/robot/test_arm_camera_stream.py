"""TAROS's stereo pair end to end over real UDP on loopback: the robot server renders both eyes
from the arm's joints, sends them as stream 1 in one side-by-side JPEG with one capture stamp,
at the camera's own rate beside the driving camera; the operator station hands them to a
browser's slot as kind 0x03 frames and records them on their own topic."""

from __future__ import annotations

import asyncio
import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.hardware.sim import simulated_hardware, simulated_server
from freelook.link import derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.record import BackgroundRecorder, Recorder, read_messages
from freelook.robot import ServerOptions
from freelook.sim import Simulator
from freelook.sim.camera import LinkCamera
from freelook.web import BrowserSlot
from loopback import robot_and_station
from waiting import wait_until_async

TAROS = load_robot("taros")
STREAM_HEADER = struct.Struct("<BBBdI")


async def _run(path: Path) -> tuple[list[bytes], list[bytes], np.ndarray, np.ndarray, float]:
    world = load_world("eod")
    key = derive_key("arm camera stream")
    recorder = BackgroundRecorder(Recorder(path))
    server, robot = simulated_server(
        TAROS,
        world,
        ServerOptions(listen="udp://127.0.0.1:0", key=key, camera=True, camera_rate=5.0),
    )
    slot = BrowserSlot()

    def station_for(address: tuple[str, int] | None) -> OperatorStation:
        station = OperatorStation(TAROS, world, address, key=key, recorder=recorder)
        station.attach(slot)
        return station

    drive: list[bytes] = []
    arm: list[bytes] = []

    async def both_streams() -> bool:
        try:
            out = await asyncio.wait_for(slot.next(), 5.0)
        except TimeoutError:
            return False  # nothing for 5 s: the wait's own deadline says what is missing
        for payload in out:
            # stream 1 is the pair (stream 2, the thermal camera, is not looked at here)
            pair = payload[:2] == b"\x03\x01"
            (drive if payload[0] == 2 else arm if pair else []).append(payload)
        return len(arm) >= 8 and bool(drive)

    async with robot_and_station(server, station_for):
        await wait_until_async(
            both_streams,
            20.0,
            "8 stereo frames and a driving-camera frame at the browser's slot",
            show=lambda: f"{len(arm)} stereo, {len(drive)} driving",
        )
        # the eyes the robot's arm sees now (it holds its pose: nobody jogs it)
        sim_arm = robot.sim.arm
        assert sim_arm is not None
        link = sim_arm.model.link_index("stereo_bar")
        expected = LinkCamera(TAROS.cameras[0], world).render(sim_arm.link_in_world(link))
        now = server.runtime.now() + server.session.wire_offset
    recorder.close()
    last = arm[-1]
    image = np.asarray(Image.open(io.BytesIO(last[STREAM_HEADER.size :])).convert("RGB"))
    return drive, arm, image, expected, now


def test_both_eyes_travel_in_one_frame_with_one_stamp(tmp_path: Path) -> None:
    path = tmp_path / "arm.mcap"
    drive, arm, image, expected, now = asyncio.run(_run(path))
    assert len(arm) >= 8, "the stereo stream did not arrive"
    assert drive, "the driving camera stopped arriving beside it"
    headers = [STREAM_HEADER.unpack_from(p) for p in arm]
    assert {(kind, stream, layout) for kind, stream, layout, _, _ in headers} == {(3, 1, 1)}
    stamps = [stamp for *_, stamp, _ in headers]
    ids = [frame_id for *_, frame_id in headers]
    assert stamps == sorted(stamps)
    assert ids == sorted(ids)  # stream 1 numbers its own frames
    assert now - 30.0 < stamps[-1] <= now  # a capture stamp on the robot's wall clock
    # one JPEG, 2 × 320 wide: the left half is the left eye, the right half the right eye
    assert image.shape == (240, 640, 3)
    left, right = image[:, :320].astype(int), image[:, 320:].astype(int)
    assert np.abs(left - expected[:, :320]).mean() < 4.0  # JPEG's error only
    assert np.abs(right - expected[:, 320:]).mean() < 4.0
    assert np.abs(expected[:, :320].astype(int) - expected[:, 320:]).mean() > 1.0  # the eyes differ
    # recorded on the stream's own topic, every frame with its one stamp
    recorded = list(read_messages(path, ["/camera/arm_stereo/compressed"]))
    assert len(recorded) >= 8
    header = recorded[-1].message.header
    assert header.frame_id == "arm_stereo"
    stamp = header.stamp.sec + header.stamp.nanosec * 1e-9
    assert any(abs(stamp - s) < 1e-6 for s in stamps)


def test_the_simulated_hal_has_each_configured_camera_by_stream() -> None:
    """m2p2's mono arm camera; a pair on the pan-tilt unit; a camera on a link the URDF lacks
    is an error naming the camera's field; no cameras without ``camera``."""
    m2p2 = load_robot("m2p2")
    world = load_world("eod")
    sim = Simulator(m2p2, world)
    sim.run_for(0.02)
    cameras = simulated_hardware(sim).stream_cameras
    assert set(cameras) == {1}
    frame = cameras[1].capture()
    assert frame is not None
    assert frame.shape == (240, 320, 3)
    assert simulated_hardware(sim, camera=False).stream_cameras == {}

    arm_cam = TAROS.cameras[0]
    on_mast = arm_cam.model_copy(update={"mount": "pan_tilt", "name": "mast_pair"})
    mast = Simulator(TAROS.model_copy(update={"cameras": (on_mast,)}), world)
    pair = simulated_hardware(mast).stream_cameras[1].capture()
    assert pair is not None
    assert pair.shape == (240, 640, 3)
    assert not np.array_equal(pair[:, :320], pair[:, 320:])

    lost = arm_cam.model_copy(update={"mount": "no_such_link"})
    with pytest.raises(ConfigError, match=r"cameras\.0\.mount: no link 'no_such_link'"):
        simulated_hardware(Simulator(TAROS.model_copy(update={"cameras": (lost,)}), world))


def _red(frame: np.ndarray) -> int:
    r, g, b = (frame[..., i].astype(int) for i in range(3))
    return int(((r > 120) & (g < 60) & (b < 60)).sum())


def test_the_arm_camera_sees_the_object_where_the_arm_left_it() -> None:
    """TAROS 3.5 m short of the eod world's red box, arm out level (the pair 1.5 m from the
    box, looking 15° down): both eyes see the box; held (off the floor) it is not drawn; put
    down out of view it is gone from the view."""
    world = load_world("eod")
    sim = Simulator(TAROS, world, pose=(3.5, 2.0, 0.0))
    arm = sim.arm
    assert arm is not None
    arm.set_base_pose(3.5, 2.0, 0.0)
    arm.q[:] = arm.model.home()
    pair = simulated_hardware(sim).stream_cameras[1]
    frame = pair.capture()
    assert frame is not None
    assert _red(frame[:, :320]) > 100
    assert _red(frame[:, 320:]) > 100
    (box,) = arm.objects
    box.held = True
    frame = pair.capture()
    assert frame is not None
    assert _red(frame) == 0
    box.drop()
    box.centre[:2] = (3.5, 6.0)  # set down beside the robot, out of the camera's view
    frame = pair.capture()
    assert frame is not None
    assert _red(frame) == 0
