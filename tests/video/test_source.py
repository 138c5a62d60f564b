"""Cameras read with PyAV: a clip written here (no binary files in the repository) plays
looped at its own rate, newest picture first; bad URLs and missing files are one clear error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from freelook.errors import ConfigError
from freelook.video import AvCamera, parse_camera_url, write_clip


def clip_frames(count: int, width: int = 160, height: int = 120) -> list[npt.NDArray[np.uint8]]:
    """A bar that walks across a dark picture: frame i has it at column 8 i."""
    frames = []
    for i in range(count):
        image = np.full((height, width, 3), 30, np.uint8)
        image[:, 8 * i : 8 * i + 16] = (240, 200, 40)
        frames.append(image)
    return frames


def test_a_clip_plays_looped_at_its_size(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    write_clip(str(path), clip_frames(12), fps=30)
    camera = AvCamera(f"file://{path}")
    try:
        assert camera.size == (160, 120)
        assert camera.fps == pytest.approx(30.0)
        if not camera.wait_until(lambda: camera.frames > 0, 20.0):
            raise AssertionError(f"waited 20 s for the first picture ({camera.error})")
        image = camera.capture()
        assert image is not None
        assert image.shape == (120, 160, 3)
        # the bar is where one of the clip's frames has it
        column = int(np.argmax(image[60, :, 0]))
        assert column % 8 <= 2
        if not camera.wait_until(lambda: camera.loops >= 2, 20.0):
            raise AssertionError(f"waited 20 s for two loops: {camera.loops} ({camera.error})")
        assert camera.frames >= 24
        assert camera.error is None
    finally:
        camera.close()


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--camera"):
        AvCamera(f"file://{tmp_path}/none.mp4")


def test_a_file_that_is_no_video_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.mp4"
    path.write_bytes(b"not a video at all" * 10)
    with pytest.raises(ConfigError, match="--camera"):
        AvCamera(f"file://{path}")


@pytest.mark.parametrize(
    "url", ["http://camera/x", "/dev/video0", "v4l2://host/dev/video0", "v4l2:///tmp/x", "file://"]
)
def test_a_url_of_no_camera_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="--camera"):
        parse_camera_url(url)


def test_the_sources_open_through_ffmpeg() -> None:
    assert parse_camera_url("v4l2:///dev/video2") == ("v4l2", "/dev/video2", "v4l2", {})
    scheme, target, fmt, options = parse_camera_url("rtsp://127.0.0.1:8554/cam")
    assert (scheme, target, fmt) == ("rtsp", "rtsp://127.0.0.1:8554/cam", None)
    assert options["rtsp_transport"] == "tcp"
    assert parse_camera_url("file:///tmp/a%20b.mp4")[1] == "/tmp/a b.mp4"
