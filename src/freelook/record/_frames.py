"""A strip of the driving camera's frames for ``freelook report``: a few pictures spread evenly
over the run, each with its time, so a reader sees what the operator saw.

The pictures come from the run's inter-frame video (``/camera/video``, Foxglove's
CompressedVideo: every frame decoded in turn with PyAV, since a delta needs the frames before
it) or, without it, from its JPEG frames (``/camera/image/compressed``: only the chosen ones
decoded). A frame that does not decode (a damaged or hostile recording) is skipped and
counted; an inter-frame stream then starts again at its next keyframe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.link import decode_jpeg
from freelook.record._figures import _png, _pyplot
from freelook.record._reader import read_messages, recording_info
from freelook.record._video import VIDEO_FORMATS, video_topic

__all__ = ["CameraStrip", "camera_strip", "plot_strip"]

JPEG_TOPIC = "/camera/image/compressed"
#: the most pictures a strip holds, and the largest side a recorded frame may have
MAX_FRAMES = 12
MAX_SIDE = 4096


@dataclass
class CameraStrip:
    """The pictures of a strip: (seconds into the run, RGB picture), and where they came from."""

    source: str  # "CompressedVideo vp9", "JPEG", …
    frames: list[tuple[float, npt.NDArray[np.uint8]]] = field(default_factory=list)
    undecodable: int = 0  # frames skipped: they did not decode


def _chosen(count: int, wanted: int) -> set[int]:
    """``wanted`` indices spread evenly over ``count`` (first and last included)."""
    if count <= wanted:
        return set(range(count))
    return {round(k * (count - 1) / (wanted - 1)) for k in range(wanted)}


def camera_strip(path: str | Path, wanted: int = 8) -> CameraStrip | None:
    """Up to ``wanted`` (at most :data:`MAX_FRAMES`) of the run's driving-camera pictures;
    None when it recorded none."""
    wanted = max(2, min(MAX_FRAMES, wanted))
    info = recording_info(path)
    start = info.start or 0.0
    video, jpeg = info.counts.get(video_topic(None), 0), info.counts.get(JPEG_TOPIC, 0)
    if video:
        return _video_strip(path, start, _chosen(video, wanted))
    if jpeg:
        return _jpeg_strip(path, start, _chosen(jpeg, wanted))
    return None


def _fits(picture: npt.NDArray[np.uint8]) -> bool:
    return picture.ndim == 3 and max(picture.shape[:2]) <= MAX_SIDE


def _jpeg_strip(path: str | Path, start: float, chosen: set[int]) -> CameraStrip:
    strip = CameraStrip("JPEG")
    for index, recorded in enumerate(read_messages(path, [JPEG_TOPIC])):
        if index not in chosen:
            continue
        try:
            picture = decode_jpeg(bytes(recorded.message.data))
        except (ValueError, RuntimeError):
            strip.undecodable += 1
            continue
        if _fits(picture):
            strip.frames.append((recorded.log_time - start, picture))
    return strip


def _video_strip(path: str | Path, start: float, chosen: set[int]) -> CameraStrip:
    import av

    strip = CameraStrip("CompressedVideo")
    decoder: Any = None
    codec = ""
    for index, recorded in enumerate(read_messages(path, [video_topic(None)])):
        fmt = str(recorded.message.format)
        if fmt not in VIDEO_FORMATS.values():
            strip.undecodable += 1  # a format freelook does not record
            continue
        if decoder is None or fmt != codec:
            decoder, codec = av.CodecContext.create(fmt, "r"), fmt
            strip.source = f"CompressedVideo {fmt}"
        try:
            pictures = decoder.decode(av.Packet(bytes(recorded.message.data)))
        except (av.FFmpegError, ValueError):
            strip.undecodable += 1
            decoder = None  # a fresh decoder, from the next keyframe on
            continue
        if index in chosen and pictures:
            picture = np.asarray(pictures[-1].to_ndarray(format="rgb24"), np.uint8)
            if _fits(picture):
                strip.frames.append((recorded.log_time - start, picture))
    return strip


def plot_strip(strip: CameraStrip) -> bytes:
    """The strip's pictures side by side, each under its time (s into the run), as a PNG."""
    plt = _pyplot()
    count = len(strip.frames)
    fig, axes = plt.subplots(1, count, figsize=(1.6 * count, 1.55), squeeze=False)
    for ax, (t, picture) in zip(axes[0], strip.frames, strict=True):
        ax.imshow(picture)
        ax.set_title(f"{t:.1f} s", fontsize=8)
        ax.axis("off")
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.85, wspace=0.04)
    return _png(fig)
