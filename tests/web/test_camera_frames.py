"""Camera streams toward the browser: kind 0x03 frames with stream and layout, one latest frame
per stream in a browser's slot, the cameras listed in ``hello``, each stream recorded on its own
topic, and a frame of a stream the config does not list dropped and counted."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

from mcap.reader import make_reader

from freelook.config import load_robot
from freelook.link import FrameLayout, VideoFrame
from freelook.operator import OperatorStation
from freelook.record import BackgroundRecorder, Recorder
from freelook.web import BrowserSlot, encode_frame

TAROS = load_robot("taros")


def test_stream_zero_keeps_kind_2_and_other_streams_use_kind_3() -> None:
    assert encode_frame(1.5, 7, b"J") == struct.pack("<BdI", 2, 1.5, 7) + b"J"
    frame = encode_frame(1.5, 2**32 + 7, b"JPEG", 1, FrameLayout.SIDE_BY_SIDE)
    assert frame == struct.pack("<BBBdI", 3, 1, 1, 1.5, 7) + b"JPEG"
    assert struct.calcsize("<BBBdI") == 15  # the page reads the JPEG from byte 15


def test_a_slot_keeps_the_newest_frame_of_each_stream() -> None:
    async def run() -> list[bytes]:
        slot = BrowserSlot()
        slot.offer_frame(b"drive-1")
        slot.offer_frame(b"arm-1", 1)
        slot.offer_frame(b"drive-2")
        slot.offer_state(b"state")
        return await slot.next()

    assert asyncio.run(run()) == [b"state", b"drive-2", b"arm-1"]


def test_hello_lists_the_robots_cameras() -> None:
    station = OperatorStation(TAROS, None, ("127.0.0.1", 9), key=bytes(32))
    camera, thermal = station.hello()["cameras"]
    assert (thermal["stream"], thermal["kind"], thermal["layout"]) == (2, "thermal", 0)
    assert camera == {
        "stream": 1,
        "name": "arm_stereo",
        "layout": 1,
        "width": 640,
        "height": 240,
        "fov_deg": 75.0,
        "kind": "visible",
        "stereo_baseline": 0.065,
        "mount": "stereo_bar",
    }
    thesis = OperatorStation(TAROS, None, ("127.0.0.1", 9), wire="thesis")
    assert thesis.hello()["cameras"] == []  # the thesis profile carries no video
    pioneer = OperatorStation(load_robot("pioneer3dx"), None, ("127.0.0.1", 9), key=bytes(32))
    assert pioneer.hello()["cameras"] == []


def test_frames_reach_browsers_and_each_stream_its_own_topic(tmp_path: Path) -> None:
    path = tmp_path / "streams.mcap"

    async def run() -> tuple[list[bytes], int]:
        recorder = BackgroundRecorder(Recorder(path))
        station = OperatorStation(TAROS, None, ("127.0.0.1", 9), key=bytes(32), recorder=recorder)
        slot = BrowserSlot()
        station.attach(slot)
        station._on_frame(VideoFrame(1, 10.0, 640, 480, b"\xff\xd8drive"))
        station._on_frame(VideoFrame(4, 10.5, 640, 240, b"\xff\xd8arm", 1, 1))
        station._on_frame(VideoFrame(5, 10.6, 8, 8, b"\xff\xd8ghost", 6, 0))  # not in config
        out = await slot.next()
        recorder.close()
        return out, station.unknown_stream_frames

    out, unknown = asyncio.run(run())
    assert [p[0] for p in out] == [2, 3]
    assert out[1][:3] == bytes([3, 1, 1])
    assert unknown == 1
    with path.open("rb") as f:
        topics = {
            channel.topic: message.data
            for _, channel, message in make_reader(f).iter_messages()
            if "compressed" in channel.topic
        }
    assert set(topics) == {"/camera/image/compressed", "/camera/arm_stereo/compressed"}
