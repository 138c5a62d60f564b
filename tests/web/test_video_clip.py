"""A recorded clip as the robot's camera, as a user runs it: ``freelook robot --camera
file://clip.mp4`` (the clip written here with PyAV; VP9, the default) and ``freelook operator
--record``; real Chromium paints the clip's pictures at the clip's size, and the operator's
recording, read back with the mcap readers, holds the stream as Foxglove's CompressedVideo
whose frames decode, from the first on, to the clip's pictures."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import av
import numpy as np
import numpy.typing as npt
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from programs import (  # type: ignore[import-not-found]
    ANNOUNCED_URL,
    start,
    wait_for_line,
)

from cli_processes import free_udp_port
from freelook.video import write_clip
from keys_for_tests import KEY_A
from waiting import wait_until

pytestmark = pytest.mark.browser

KEY = KEY_A
WIDTH, HEIGHT = 160, 120
#: rows of the camera canvas above the crosshair the cockpit draws on it
TOP = 24
#: the canvas's rows 0…TOP as RGB (the canvas holds the newest picture painted)
CANVAS_TOP = f"""() => {{
  const c = document.getElementById("camera");
  const top = c.getContext("2d").getImageData(0, 0, c.width, {TOP});
  return [c.width, c.height, Array.from(top.data)];
}}"""


def clip_frames(count: int = 10) -> list[npt.NDArray[np.uint8]]:
    """A yellow bar walking right over a dark blue picture: frame i has it at column 14 i."""
    frames = []
    for i in range(count):
        image = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
        image[:] = (20, 30, 90)
        image[:, 14 * i : 14 * i + 20] = (240, 210, 40)
        frames.append(image)
    return frames


def nearest(picture: npt.NDArray[np.uint8], rows: int) -> float:
    """The mean error of ``picture``'s top ``rows`` against the clip frame it is nearest."""
    top = picture[:rows].astype(int)
    return min(float(np.abs(top - c[:rows].astype(int)).mean()) for c in clip_frames())


def test_a_clip_streams_to_the_cockpit_and_records_as_compressed_video(
    browser: Any, tmp_path: Path
) -> None:
    from test_cockpit import open_cockpit  # type: ignore[import-not-found]

    clip, recording = tmp_path / "clip.mp4", tmp_path / "run.mcap"
    write_clip(str(clip), clip_frames(), fps=15)
    udp_port = free_udp_port()
    robot = start(
        *("robot", "--hardware", "sim", "--listen", f"udp://127.0.0.1:{udp_port}"),
        *("--key", KEY, "--camera", f"file://{clip}"),  # no --video: VP9 by default
    )
    operator = None
    try:
        wait_for_line(robot, re.compile("profile on"), 600, "the robot to serve")
        operator = start(
            *("operator", "--robot", f"udp://127.0.0.1:{udp_port}", "--key", KEY),
            *("--no-browser", "--record", str(recording)),
            *("--port", str(free_udp_port(socket.SOCK_STREAM))),
        )
        line = wait_for_line(operator, ANNOUNCED_URL, 120, "the operator to serve its cockpit")
        found = ANNOUNCED_URL.search(line)
        assert found is not None
        page, errors = open_cockpit(browser, SimpleNamespace(url=found.group(1)))
        wait_until(
            lambda: page.evaluate("window.freelook.framesPainted") > 20,
            60,
            "20 of the clip's frames painted",
            every=0.1,
            show=lambda: page.evaluate(
                "({decoded: window.freelook.video.decoded, errors: window.freelook.video.errors})"
            ),
        )
        assert page.evaluate("window.freelook.video.decoded") > 20  # VP9, through WebCodecs
        width, height, data = page.evaluate(CANVAS_TOP)
        assert (width, height) == (WIDTH, HEIGHT)
        painted = np.array(data, np.uint8).reshape(TOP, WIDTH, 4)[:, :, :3]
        error = nearest(painted, TOP)
        assert error < 10.0, f"the painted picture is none of the clip's ({error:.1f})"
        assert errors == []
        page.close()
    finally:
        if operator is not None:
            operator.stop()
        robot.stop()
    assert operator.process.returncode == 0
    with open(recording, "rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None
        (channel,) = [c for c in summary.channels.values() if c.topic == "/camera/video"]
        schema = summary.schemas[channel.schema_id]
        assert schema.name == "foxglove_msgs/msg/CompressedVideo"
        assert schema.encoding == "ros2msg"
        assert channel.message_encoding == "cdr"
        messages = [m for _, _, _, m in reader.iter_decoded_messages(topics=["/camera/video"])]
    assert len(messages) > 20
    assert {m.format for m in messages} == {"vp9"}
    decoder = av.CodecContext.create("vp9", "r")
    pictures = [
        f.to_ndarray(format="rgb24")
        for m in messages
        for f in decoder.decode(av.Packet(bytes(m.data)))
    ]
    assert len(pictures) == len(messages), "every recorded frame decodes, from the first on"
    assert {p.shape for p in pictures} == {(HEIGHT, WIDTH, 3)}
    assert max(nearest(p, HEIGHT) for p in pictures[-10:]) < 10.0
