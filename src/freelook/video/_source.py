"""Cameras read with PyAV: a recorded clip (``file://``, looped at its own frame rate, for tests
and demos), a USB camera (``v4l2:///dev/video0``) or an IP camera (``rtsp://…``).

A reader thread decodes the source as it comes and keeps only the newest picture: a live
camera is never read behind, and :meth:`AvCamera.capture` never blocks on the device.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np
import numpy.typing as npt

from freelook.errors import ConfigError

__all__ = ["AvCamera", "parse_camera_url"]

_SCHEMES = ("file", "v4l2", "rtsp", "rtsps")


def parse_camera_url(url: str) -> tuple[str, str, str | None, dict[str, str]]:
    """(scheme, what to open, the FFmpeg input format, its options) for a ``--camera`` URL."""
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise ConfigError(
            f"--camera {url!r}: expected file:///PATH, v4l2:///dev/videoN or rtsp://HOST/PATH"
        )
    if parts.scheme in ("file", "v4l2") and parts.netloc:
        raise ConfigError(f"--camera {url!r}: a local device or file has no host")
    if parts.scheme == "file":
        path = unquote(parts.path)
        if not path:
            raise ConfigError(f"--camera {url!r}: no file named")
        return "file", path, None, {}
    if parts.scheme == "v4l2":
        if not parts.path.startswith("/dev/"):
            raise ConfigError(f"--camera {url!r}: expected v4l2:///dev/videoN")
        return "v4l2", parts.path, "v4l2", {}
    # an IP camera: over TCP (no lost RTP packets to smear the picture), a 5 s timeout
    return parts.scheme, url, None, {"rtsp_transport": "tcp", "timeout": "5000000"}


class AvCamera:
    """The newest picture of a PyAV source, as the HAL's :class:`Camera` gives it."""

    def __init__(self, url: str) -> None:
        import av

        self.url = url
        scheme, target, fmt, options = parse_camera_url(url)
        self.looped = scheme == "file"
        try:
            self._container: Any = av.open(target, format=fmt, options=options, timeout=10.0)
        except (av.FFmpegError, OSError) as err:
            raise ConfigError(f"--camera {url!r}: {err}") from None
        if not self._container.streams.video:
            self._container.close()
            raise ConfigError(f"--camera {url!r}: no video stream in it")
        stream = self._container.streams.video[0]
        self.size = (int(stream.codec_context.width), int(stream.codec_context.height))
        rate = stream.average_rate or stream.guessed_rate
        self.fps = float(rate) if rate else 30.0
        self._newest: npt.NDArray[np.uint8] | None = None
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a picture came, or the reader ended
        self._stop = threading.Event()
        self.frames = 0  # pictures decoded
        self.loops = 0  # times a clip started over
        self.error: str | None = None
        self._thread = threading.Thread(target=self._read, name=f"camera {url}", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        import av

        period = 1.0 / self.fps
        due = time.monotonic()
        try:
            while not self._stop.is_set():
                for frame in self._container.decode(video=0):
                    image = np.asarray(frame.to_ndarray(format="rgb24"), np.uint8)
                    with self._changed:
                        self._newest = image
                        self.frames += 1
                        self._changed.notify_all()
                    if self.looped:  # a clip plays at its own rate, not as fast as it decodes
                        due += period
                        if self._stop.wait(max(0.0, due - time.monotonic())):
                            return
                    elif self._stop.is_set():
                        return
                if not self.looped:
                    self.error = "the camera's stream ended"
                    return
                self._container.seek(0)
                with self._changed:
                    self.loops += 1
        except av.FFmpegError as err:
            self.error = str(err)
        finally:
            with self._changed:
                self._changed.notify_all()

    def capture(self) -> npt.NDArray[np.uint8] | None:
        """The newest picture (H × W × 3 RGB), or None before the first."""
        with self._lock:
            return self._newest

    def wait_until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait (on the reader's pictures, not by polling) until ``done()``; False at the
        timeout or when the reader ended without it."""
        with self._changed:
            return (
                self._changed.wait_for(lambda: done() or not self._thread.is_alive(), timeout)
                and done()
            )

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        self._container.close()


def write_clip(
    path: str, frames: list[npt.NDArray[np.uint8]], fps: int = 15, codec: str = "libx264"
) -> None:
    """Write RGB ``frames`` as a video file (MP4 with H.264 by default): demos, tests and
    benchmarks make their clips with it rather than keep binary files."""
    import av

    height, width = frames[0].shape[:2]
    with av.open(path, "w") as container:
        stream: Any = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for image in frames:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
