"""``freelook report``'s strip of camera frames: pictures spread over the run, from its JPEG
frames or from its CompressedVideo (decoded with PyAV), in time order; frames that do not
decode (a damaged or hostile recording) are skipped, counted and said, and the report is still
written."""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from freelook.link import VideoCodec, encode_jpeg
from freelook.record import Recorder, build_report, compressed_video
from freelook.video import Rung, VideoEncoder, VideoSetting

COUNT = 30
FIGURE = re.compile(
    r'<figure id="camera-strip" data-frames="(\d+)" data-source="([^"]*)">'
    r'<img src="data:image/png;base64,([^"]+)"[^>]*><figcaption>([^<]*)</figcaption>'
)


def picture(i: int) -> npt.NDArray[np.uint8]:
    """Frame i of the run: red at the start, blue at the end (with a little texture)."""
    image = np.zeros((96, 128, 3), np.uint8)
    share = i / (COUNT - 1)
    image[:] = (round(230 * (1 - share)), 40, round(230 * share))
    image[40:56, 10 + 3 * i : 26 + 3 * i] = 250
    return image


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _record(path: Path, write: object) -> None:
    clock = Clock()
    recorder = Recorder(path, clock=clock, metadata={"robot": "pioneer3dx"})
    for i in range(COUNT):
        clock.now = 1000.0 + 0.1 * i
        write(recorder, clock.now, i)  # type: ignore[operator]
    recorder.close()


def _strip(tmp_path: Path, path: Path) -> tuple[int, str, npt.NDArray[np.uint8], str]:
    index = build_report(path, tmp_path / "report")
    found = FIGURE.search(index.read_text(encoding="utf-8"))
    assert found is not None, "no camera strip in the report"
    png = Image.open(io.BytesIO(base64.b64decode(found.group(3)))).convert("RGB")
    return int(found.group(1)), html.unescape(found.group(2)), np.asarray(png), found.group(4)


def _ends(strip: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.int_], npt.NDArray[np.int_]]:
    """The colour of the first and of the last picture in the strip (its coloured columns)."""
    row = strip[int(strip.shape[0] * 0.35)].astype(int)
    coloured = np.flatnonzero(np.abs(row - 255).sum(axis=1) > 60)
    assert len(coloured) > 20, "the strip holds no pictures"
    return row[coloured[0] + 3], row[coloured[-1] - 3]


def test_a_strip_from_the_jpeg_frames(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    _record(path, lambda r, t, i: r.image(t, encode_jpeg(picture(i), 85)))
    frames, source, strip, caption = _strip(tmp_path, path)
    assert (frames, source) == (8, "JPEG")
    first, last = _ends(strip)
    assert first[0] > 150 > first[2], first  # red: the run's start
    assert last[2] > 150 > last[0], last  # blue: its end
    assert "did not decode" not in caption


def _vp9_chunks() -> list[tuple[bytes, bool]]:
    encoder = VideoEncoder(VideoCodec.VP9, VideoSetting(400_000, Rung(128, 96, 10.0)))
    chunks = []
    for i in range(COUNT):
        chunk = encoder.encode(picture(i), keyframe=i == 20)
        assert chunk is not None
        chunks.append((chunk.data, chunk.keyframe))
    return chunks


def test_a_strip_from_compressed_video(tmp_path: Path) -> None:
    path, chunks = tmp_path / "run.mcap", _vp9_chunks()
    _record(
        path,
        lambda r, t, i: compressed_video(r, t, chunks[i][0], "vp9", "camera", "/camera/video"),
    )
    frames, source, strip, caption = _strip(tmp_path, path)
    assert (frames, source) == (8, "CompressedVideo vp9")
    first, last = _ends(strip)
    assert first[0] > 150 > first[2], first
    assert last[2] > 150 > last[0], last
    assert "did not decode" not in caption


@pytest.mark.parametrize("attack", ["garbage", "format"])
def test_frames_that_do_not_decode_are_skipped_and_said(tmp_path: Path, attack: str) -> None:
    """Frames 5…9 replaced (random bytes, or a format freelook does not record): the strip
    is still drawn, the pictures after the next keyframe (20) still decode, the count is
    said."""
    path, chunks = tmp_path / "run.mcap", _vp9_chunks()
    noise = np.random.default_rng(44).integers(0, 256, 600, dtype=np.uint8).tobytes()

    def write(r: Recorder, t: float, i: int) -> None:
        data, fmt = chunks[i][0], "vp9"
        if 5 <= i < 10:
            data, fmt = (noise, "vp9") if attack == "garbage" else (data, "mjpeg")
        compressed_video(r, t, data, fmt, "camera", "/camera/video")

    _record(path, write)
    frames, source, strip, caption = _strip(tmp_path, path)
    assert source == "CompressedVideo vp9"
    assert frames >= 4
    found = re.search(r"(\d+) frames did not decode", caption)
    assert found is not None, caption
    assert int(found.group(1)) >= 1
    _, last = _ends(strip)
    assert last[2] > 150 > last[0], last  # the run's end, after the keyframe
