"""The robot's video streams: each camera it sends (:class:`VideoStream`, its JPEG frames
by :func:`_jpeg_frame`), and the inter-frame ones: a :class:`VideoSender` per camera, fed on the
server's event loop and encoded on a thread of its own (the control loop runs on the event
loop: an encoder holding it for tens of milliseconds would stretch its cycles).

What the link leaves for video: a serial radio's baud budget after telemetry, or a UDP link's
``--link-rate`` after telemetry, or, on a UDP link without one, :data:`UNSHAPED_VIDEO_RATE`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.config import frame_limit
from freelook.hal import Camera, EncodedCamera
from freelook.link import (
    FrameLayout,
    VideoCodec,
    VideoFeedback,
    VideoFrame,
    decode_jpeg,
    encode_jpeg,
)
from freelook.video import (
    RATE_LOG,
    ByteBudget,
    RateController,
    VideoEncoder,
    VideoSender,
    VideoSetting,
)

__all__ = ["UNSHAPED_VIDEO_RATE", "InterStream", "VideoStream"]

log = logging.getLogger(RATE_LOG)  # each change of a stream's setting (INFO)
camera_log = logging.getLogger(__name__)  # frames refused (WARNING, the first and every 100th)

#: bit/s for one camera on a UDP link of unknown rate (Ethernet, Wi-Fi)
UNSHAPED_VIDEO_RATE = 2_000_000.0
#: the highest frame rate an inter-frame stream starts at (the camera may run faster)
MAX_INTER_FPS = 15.0


#: a camera's newest frame: RGB pixels, or a compressed camera's JPEG (decoded on the thread)
Captured = npt.NDArray[np.uint8] | bytes


def _capture(camera: Camera, quality: int) -> Captured | None:
    """The camera's newest frame as it came: nothing is decoded on the event loop."""
    if isinstance(camera, EncodedCamera):
        encoded = camera.capture_jpeg(quality)
        return None if encoded is None else encoded[0]
    return camera.capture()


@dataclass(frozen=True)
class VideoStream:
    """One camera the server sends: its stream id, device, rate (Hz), JPEG quality, layout."""

    stream: int
    camera: Camera
    rate: float
    jpeg_quality: int
    layout: FrameLayout = FrameLayout.MONO
    size: tuple[int, int] | None = None  # the frames' (width, height): a pair's both eyes


def _jpeg_frame(stream: VideoStream) -> tuple[bytes, int, int] | None:
    """The newest frame of ``stream``'s camera as (JPEG, width, height), None if it has none;
    a compressed camera's frame as it came, each once."""
    if isinstance(stream.camera, EncodedCamera):
        return stream.camera.capture_jpeg(stream.jpeg_quality)
    image = stream.camera.capture()
    if image is None:
        return None
    height, width = image.shape[:2]
    return encode_jpeg(image, stream.jpeg_quality), width, height


class InterStream:
    """One camera sent with an inter-frame codec: its sender, its feedback, its thread."""

    def __init__(
        self,
        stream: int,
        camera: Camera,
        codec: VideoCodec,
        size: tuple[int, int],
        rate: float,
        budget_bps: float,
        *,
        shaped: bool,
        jpeg_quality: int = 80,
        layout: FrameLayout = FrameLayout.MONO,
    ) -> None:
        """``size``: the camera's (width, height) as described (its frames' own size wins:
        a ROS topic's camera is known only by its frames); ``rate``: its frame rate;
        ``budget_bps``: bit/s the link leaves this stream; ``shaped``: frames are also thinned
        to the budget (a radio or a rate-limited link; an unshaped link only sets the
        bitrate)."""
        fps = min(rate, MAX_INTER_FPS)
        self.controller = RateController(budget_bps, size[0], size[1], fps)
        self.size = size
        #: the largest frame taken from this camera: larger ones (or a header claiming more)
        #: are refused before they are decoded
        self.limit = frame_limit(*size)
        #: frames refused: a JPEG that does not decode, or a frame over :attr:`limit`
        self.refused = 0
        encoder = VideoEncoder(codec, self.controller.setting)
        self.sender = VideoSender(
            stream,
            encoder,
            controller=self.controller,
            budget=ByteBudget(budget_bps / 8) if shaped else None,
            layout=layout,
        )
        self.camera = camera
        self.jpeg_quality = jpeg_quality
        self._feedback: list[tuple[VideoFeedback, float]] = []
        self.feedback_received = 0
        self._pool = concurrent.futures.ThreadPoolExecutor(1, f"video {stream}")
        self._logged: VideoSetting | None = None
        self._log_setting()  # what it starts at

    @property
    def stream(self) -> int:
        return self.sender.stream

    def on_feedback(self, feedback: VideoFeedback, now: float) -> None:
        """Held until the next frame: the encoder is only touched on its own thread."""
        self.feedback_received += 1
        if len(self._feedback) < 64:  # bounded: a flood of reports keeps the newest few
            self._feedback.append((feedback, now))
        else:
            self._feedback[-1] = (feedback, now)

    def _pixels(self, captured: Captured) -> npt.NDArray[np.uint8] | None:
        """The frame's RGB pixels; None (counted, logged) for one that is corrupt or too big."""
        try:
            if isinstance(captured, bytes):
                return decode_jpeg(captured, self.limit)
            height, width = captured.shape[:2]
            if not (0 < width <= self.limit[0] and 0 < height <= self.limit[1]):
                raise ValueError(f"a {width}×{height} frame; at most {self.limit} is taken")
        except ValueError as err:
            self.refused += 1
            if self.refused % 100 == 1:
                camera_log.warning(
                    "video stream %d: frame refused (%s); %d so far", self.stream, err, self.refused
                )
            return None
        return captured

    def _encode(
        self,
        feedback: list[tuple[VideoFeedback, float]],
        captured: Captured,
        now: float,
        stamp: float,
    ) -> VideoFrame | None:
        for message, at in feedback:
            self.sender.on_feedback(message, at)
        image = self._pixels(captured)
        if image is None:
            return None
        height, width = image.shape[:2]
        if (width, height) != self.size:  # the camera's own size (a ROS topic's, say)
            self.size = (width, height)
            self.sender.encoder.configure(self.controller.resize(width, height))
        self._log_setting()
        return self.sender.encode(image, now, stamp)

    def _log_setting(self) -> None:
        """One line when the setting changes: what the operator's loss made of the bitrate."""
        setting = self.controller.setting
        if setting == self._logged:
            return
        self._logged = setting
        rung = setting.rung
        log.info(
            "video stream %d: %d kbit/s, %dx%d at %g fps, %d cop%s (reported loss %.1f %%)",
            self.stream,
            round(setting.bitrate / 1000),
            rung.width,
            rung.height,
            rung.fps,
            setting.copies,
            "y" if setting.copies == 1 else "ies",
            100 * self.controller.loss,
        )

    async def run(
        self,
        transmitting: Callable[[], bool],
        now: Callable[[], float],
        wire_offset: Callable[[], float],
        send: Callable[[VideoFrame], int],
    ) -> None:
        """Capture, encode and send at the controller's frame rate until cancelled."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        try:
            while True:
                period = 1.0 / self.sender.fps
                due += period
                delay = due - loop.time()
                if delay < -period:  # fell behind: skip frames rather than burst
                    due = loop.time()
                    delay = 0.0
                await asyncio.sleep(max(0.0, delay))
                if not transmitting() or not self.sender.ready(now()):
                    continue
                captured = now()
                image = _capture(self.camera, self.jpeg_quality)
                if image is None:
                    continue
                feedback, self._feedback = self._feedback, []
                frame = await loop.run_in_executor(
                    self._pool, self._encode, feedback, image, captured, captured + wire_offset()
                )
                if frame is not None:  # copies on a lossy link, each numbered anew
                    self.sender.spent(sum(send(frame) for _ in range(self.sender.copies_of(frame))))
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)
