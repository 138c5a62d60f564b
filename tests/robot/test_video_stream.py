"""The driving camera as VP8 end to end over real UDP on loopback: the robot encodes the
simulated camera, the operator station passes the chunks to a page's slot as kind 4 frames (a
keyframe first, frame ids one by one), its feedback reaches the robot, a page's keyframe
request brings a keyframe, and a page without a decoder gets the same video as JPEG."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import av
import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import VideoCodec, decode_jpeg, derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.record import BackgroundRecorder, Recorder
from freelook.robot import ServerOptions
from freelook.video import write_clip
from freelook.web import BrowserSlot

PIONEER = load_robot("pioneer3dx")
VIDEO = struct.Struct("<BBBBBdIHH")  # kind 4, stream, layout, codec, flags, stamp, id, w, h
JPEG = struct.Struct("<BdI")  # kind 2, stamp, id


async def _collect(slot: BrowserSlot, kind: int, count: int, seconds: float) -> list[bytes]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    got: list[bytes] = []
    while len(got) < count:
        left = deadline - loop.time()
        if left <= 0:
            raise AssertionError(
                f"waited {seconds} s for {count} frames of kind {kind}: {len(got)}"
            )
        for payload in await asyncio.wait_for(slot.next(), left):
            if payload[0] == kind:
                got.append(payload)
    return got


async def _run() -> dict[str, object]:
    world = load_world("lab")
    key = derive_key("video stream")
    options = ServerOptions(
        listen="udp://127.0.0.1:0", key=key, camera_rate=10.0, video=VideoCodec.VP8
    )
    server, robot = simulated_server(PIONEER, world, options)
    robot_task = asyncio.create_task(server.run())
    await server.ready.wait()
    assert server.local_address is not None
    station = OperatorStation(PIONEER, world, server.local_address, key=key)
    page, plain = BrowserSlot(), BrowserSlot()
    station.attach(page)
    station_task = asyncio.create_task(station.run())
    try:
        first = await _collect(page, 4, 12, 30.0)
        inter = server.inter[0]
        keys_before = inter.sender.encoder.keyframes
        assert await station.handle_browser({"type": "keyframe", "stream": 0}, page) is None
        after = await _collect(page, 4, 8, 20.0)
        # a page without a decoder: the same video, as JPEG
        station.attach(plain)
        assert await station.handle_browser({"type": "video", "decoder": False}, plain) is None
        jpegs = await _collect(plain, 2, 3, 20.0)
        refused = await station.handle_browser({"type": "keyframe", "stream": 99}, page)
        return {
            "first": first,
            "after": after,
            "jpegs": jpegs,
            "keys_before": keys_before,
            "feedback": inter.feedback_received,
            "requests": inter.sender.keyframe_requests,
            "camera": robot.hardware.camera.capture(),
            "refused": refused,
        }
    finally:
        for task in (station_task, robot_task):
            task.cancel()
        await asyncio.gather(station_task, robot_task, return_exceptions=True)


def test_vp8_reaches_the_page_and_the_feedback_reaches_the_robot() -> None:
    out = asyncio.run(_run())
    first: list[bytes] = out["first"]  # type: ignore[assignment]
    heads = [VIDEO.unpack_from(p) for p in first]
    assert {(h[1], h[3]) for h in heads} == {(0, VideoCodec.VP8)}
    assert heads[0][4] == 1, "the first frame a page gets is a keyframe"
    ids = [h[6] for h in heads]
    assert ids == list(range(ids[0], ids[0] + len(ids))), "frames one by one (loopback loses none)"
    # the chunks decode to the camera's picture (the robot stands: the scene holds still)
    decoder = av.CodecContext.create("vp8", "r")
    pictures = [
        f.to_ndarray(format="rgb24")
        for p in first
        for f in decoder.decode(av.Packet(p[VIDEO.size :]))
    ]
    assert len(pictures) == len(first)
    camera = out["camera"]
    assert isinstance(camera, np.ndarray)
    assert pictures[-1].shape == camera.shape
    error = np.abs(pictures[-1].astype(int) - camera.astype(int)).mean()
    assert error < 8.0, f"decoded picture differs from the camera's by {error:.1f} on average"
    # the page's keyframe request went to the robot, which answered with a keyframe
    assert out["requests"] >= 1  # type: ignore[operator]
    after = [VIDEO.unpack_from(p) for p in out["after"]]  # type: ignore[attr-defined]
    assert any(h[4] == 1 for h in after)
    assert out["feedback"] >= 1  # type: ignore[operator]
    # the JPEG fallback: kind 2 frames that decode to the same picture
    jpegs: list[bytes] = out["jpegs"]  # type: ignore[assignment]
    image = decode_jpeg(jpegs[-1][JPEG.size :])
    assert image.shape == camera.shape
    assert np.abs(image.astype(int) - camera.astype(int)).mean() < 10.0
    assert out["refused"] is not None
    assert "keyframe" in str(out["refused"])


def _bar_frames(count: int) -> list[np.ndarray]:
    frames = []
    for i in range(count):
        image = np.full((120, 160, 3), 20, np.uint8)
        image[:, 8 * i : 8 * i + 24] = (250, 210, 30)
        frames.append(image)
    return frames


async def _run_clip(
    url: str, codec: VideoCodec = VideoCodec.VP8, record: Path | None = None, count: int = 20
) -> tuple[list[bytes], int]:
    world = load_world("lab")
    key = derive_key("video clip")
    options = ServerOptions(
        listen="udp://127.0.0.1:0",
        key=key,
        camera_rate=15.0,
        video=codec,
        camera_url=url,
    )
    recorder = BackgroundRecorder(Recorder(record)) if record is not None else None
    server, _ = simulated_server(PIONEER, world, options)
    robot_task = asyncio.create_task(server.run())
    await server.ready.wait()
    assert server.local_address is not None
    station = OperatorStation(PIONEER, world, server.local_address, key=key, recorder=recorder)
    page = BrowserSlot()
    station.attach(page)
    station_task = asyncio.create_task(station.run())
    try:
        frames = await _collect(page, 4, count, 30.0)
        assert server.camera_source is not None
        return frames, server.camera_source.loops
    finally:
        for task in (station_task, robot_task):
            task.cancel()
        await asyncio.gather(station_task, robot_task, return_exceptions=True)
        if recorder is not None:
            recorder.close()


def test_a_clip_replaces_the_camera(tmp_path: Path) -> None:
    """``--camera file://clip.mp4``: the clip's pictures, at its size, not the simulator's."""
    path = tmp_path / "clip.mp4"
    write_clip(str(path), _bar_frames(8), fps=30)
    frames, loops = asyncio.run(_run_clip(f"file://{path}"))
    heads = [VIDEO.unpack_from(p) for p in frames]
    assert {(h[7], h[8]) for h in heads} == {(160, 120)}
    decoder = av.CodecContext.create("vp8", "r")
    pictures = [
        f.to_ndarray(format="rgb24")
        for p in frames
        for f in decoder.decode(av.Packet(p[VIDEO.size :]))
    ]
    assert len(pictures) == len(frames)
    clip = _bar_frames(8)
    for picture in pictures[-5:]:  # each is one of the clip's frames (VP8's error only)
        errors = [np.abs(picture.astype(int) - c.astype(int)).mean() for c in clip]
        assert min(errors) < 6.0, f"a picture the clip does not hold: {min(errors):.1f}"
    assert loops >= 1, "the 8-frame clip played through at least once and started over"


@pytest.mark.parametrize(("codec", "fmt"), [(VideoCodec.VP9, "vp9"), (VideoCodec.H264, "h264")])
def test_a_recording_holds_the_clip_as_foxglove_compressed_video(
    tmp_path: Path, codec: VideoCodec, fmt: str
) -> None:
    """Read back with the mcap readers (not freelook's): Foxglove's schema, the format it
    plays, a keyframe first, every frame decoding in turn to one of the clip's pictures."""
    clip_path, mcap_path = tmp_path / "clip.mp4", tmp_path / "run.mcap"
    write_clip(str(clip_path), _bar_frames(8), fps=30)
    asyncio.run(_run_clip(f"file://{clip_path}", codec, mcap_path, count=15))
    with open(mcap_path, "rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None
        (channel,) = [c for c in summary.channels.values() if c.topic == "/camera/video"]
        schema = summary.schemas[channel.schema_id]
        assert schema.name == "foxglove_msgs/msg/CompressedVideo"
        assert schema.encoding == "ros2msg"
        assert channel.message_encoding == "cdr"
        decoded = [m for _, _, _, m in reader.iter_decoded_messages(topics=["/camera/video"])]
    assert len(decoded) >= 10
    assert {m.format for m in decoded} == {fmt}
    assert {m.frame_id for m in decoded} == {"camera"}
    stamps = [m.timestamp.sec + m.timestamp.nanosec * 1e-9 for m in decoded]
    assert stamps == sorted(stamps)
    if codec == VideoCodec.H264:  # Annex B, as Foxglove requires
        assert bytes(decoded[0].data[:4]) == b"\x00\x00\x00\x01"
    decoder = av.CodecContext.create(fmt, "r")
    pictures = []
    for message in decoded:
        packet = av.Packet(bytes(message.data))
        pictures += [f.to_ndarray(format="rgb24") for f in decoder.decode(packet)]
    assert len(pictures) == len(decoded), "every frame decodes, from the first on"
    clip = _bar_frames(8)
    for picture in pictures[-3:]:
        assert min(np.abs(picture.astype(int) - c.astype(int)).mean() for c in clip) < 6.0
