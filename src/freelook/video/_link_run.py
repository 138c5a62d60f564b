"""Video over an impaired link, in simulated time (for benchmarks and tests): the robot's
sender (encoder, rate controller, byte budget) and telemetry share one rate-limited, lossy
channel (the experiments' channel model); the station reassembles, gates, decodes and reports
loss back over a lossy return channel. Every picture shown is scored against the frame the
camera rendered (SSIM, on grey levels, at the camera's size).

Seeded and clocked by the loop: the same arguments give the same run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy.ndimage import uniform_filter

from freelook.link import (
    FrameAssembler,
    ImpairedChannel,
    Impairments,
    LinkStatistics,
    NativeCodec,
    Telemetry,
    VideoCodec,
    VideoFeedback,
    VideoFragment,
    derive_key,
)
from freelook.video._encoder import VideoEncoder
from freelook.video._gate import FeedbackReporter, FrameGate
from freelook.video._rate import RateController, Rung, VideoSetting
from freelook.video._sender import ByteBudget, VideoSender

__all__ = ["LinkRun", "run_link", "ssim", "telemetry_share"]

_KEY = derive_key("video link run")
_DECODERS = {VideoCodec.VP8: "vp8", VideoCodec.VP9: "vp9", VideoCodec.H264: "h264"}


def ssim(a: npt.NDArray[np.uint8], b: npt.NDArray[np.uint8]) -> float:
    """Mean structural similarity of two RGB pictures of one size, on grey levels (8 × 8
    uniform windows, the usual constants for 8-bit data)."""
    x = a.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    y = b.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    mx, my = uniform_filter(x, 8), uniform_filter(y, 8)
    vx = uniform_filter(x * x, 8) - mx * mx
    vy = uniform_filter(y * y, 8) - my * my
    cxy = uniform_filter(x * y, 8) - mx * my
    s = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return float(s.mean())


def telemetry_share(
    rate_bps: float, telemetry_bytes: int, spacing: float, share: float = 0.3
) -> tuple[float, float]:
    """(telemetry spacing, bit/s left for video) on a link of ``rate_bps``: the robot's rule
    for a rate-limited UDP link (``RadioBudget.for_rate``)."""
    usable = 0.9 * rate_bps / 8
    spacing = max(spacing, telemetry_bytes / (share * usable))
    return spacing, 8 * (usable - telemetry_bytes / spacing)


@dataclass
class LinkRun:
    """What the operator saw: pictures shown (time, SSIM), and the robot's bitrate."""

    seconds: float
    shown: list[tuple[float, float]] = field(default_factory=list)  # (time, SSIM)
    bitrates: list[tuple[float, float]] = field(default_factory=list)  # (time, bit/s)
    frames_sent: int = 0
    bytes_sent: int = 0
    keyframe_requests: int = 0

    def fps(self, start: float = 1.0, end: float | None = None) -> float:
        end = self.seconds if end is None else end
        return sum(1 for t, _ in self.shown if start <= t < end) / (end - start)

    def mean_ssim(self, start: float = 1.0, end: float | None = None) -> float:
        end = self.seconds if end is None else end
        scores = [s for t, s in self.shown if start <= t < end]
        return float(np.mean(scores)) if scores else 0.0

    def longest_freeze(self, start: float = 1.0, end: float | None = None) -> float:
        """The longest time (s) without a new picture between ``start`` and ``end``."""
        end = self.seconds if end is None else end
        times = [start] + [t for t, _ in self.shown if start <= t < end] + [end]
        return max(b - a for a, b in itertools.pairwise(times))

    def bitrate(self, start: float, end: float) -> float:
        """The robot's mean bitrate (bit/s) between ``start`` and ``end``."""
        values = [b for t, b in self.bitrates if start <= t < end]
        return float(np.mean(values)) if values else math.nan


def run_link(
    codec: VideoCodec,
    render: Callable[[float], npt.NDArray[np.uint8]],
    *,
    seconds: float = 10.0,
    fps: float = 15.0,
    rate_bps: float = 250_000.0,
    loss: Callable[[float], float] | float = 0.1,
    delay: float = 0.02,
    jpeg_quality: int = 80,
    seed: int = 0,
    tick: float = 0.005,
    request_spacing: float = 0.2,
    serial_baud: int | None = None,
) -> LinkRun:
    """Run ``seconds`` of video of ``render(t)`` (the camera's RGB frame at time t) over a
    ``rate_bps`` link losing ``loss`` (a share, or a function of time) of packets each way."""
    height, width = render(0.0).shape[:2]
    spacing, video_bps, rate_bps = _link_budget(rate_bps, serial_baud)
    lossy = loss if callable(loss) else (lambda _t, p=loss: p)
    loop = _LinkLoop(
        run=LinkRun(seconds),
        render=render,
        sender=_video_sender(codec, width, height, fps, video_bps, jpeg_quality),
        reporter=FeedbackReporter(FrameGate(), request_spacing=request_spacing),
        decoder=_decoder(codec),
        size=(width, height),
        telemetry_spacing=spacing,
        down=ImpairedChannel(
            Impairments(bandwidth_bps=rate_bps, delay=delay, queue_bytes=16_384), seed=seed
        ),
        up=ImpairedChannel(Impairments(delay=delay), seed=seed + 1),
    )
    for step in range(round(seconds / tick) + 1):
        now = step * tick
        loop.set_loss(lossy(now))
        loop.robot_sends(now)
        loop.station_receives(now)
        loop.robot_hears(now)
    return loop.run


#: a full report: 181 laser beams (539 bytes with its tag)
_TELEMETRY = Telemetry(0.0, (0, 0, 0), (0, 0, 0), 0, 0, 0, 0, 0, 0, laser=(1.0,) * 181)


def _link_budget(rate_bps: float, serial_baud: int | None) -> tuple[float, float, float]:
    """(telemetry spacing, bit/s for video, the link's bit/s): the robot's rule for a
    rate-limited UDP link, or for a radio modem on a serial line (RadioBudget.for_baud)."""
    telemetry_bytes = len(NativeCodec(_KEY).encode(_TELEMETRY, 0.0))
    if serial_baud is None:
        spacing, video_bps = telemetry_share(rate_bps, telemetry_bytes, 0.031)
        return spacing, video_bps, rate_bps
    usable = 0.8 * serial_baud / 10
    spacing = max(0.031, telemetry_bytes / (0.7 * usable))
    return spacing, 8 * (usable - telemetry_bytes / spacing), serial_baud * 0.8


def _video_sender(
    codec: VideoCodec, width: int, height: int, fps: float, video_bps: float, jpeg_quality: int
) -> VideoSender:
    """The robot's sender: JPEG at the camera's size and rate, an inter-frame codec under a
    rate controller."""
    controller: RateController | None = None
    if codec == VideoCodec.JPEG:
        setting = VideoSetting(0, Rung(width, height, fps))
    else:
        controller = RateController(video_bps, width, height, fps)
        setting = controller.setting
    encoder = VideoEncoder(codec, setting, jpeg_quality=jpeg_quality)
    return VideoSender(0, encoder, controller=controller, budget=ByteBudget(video_bps / 8), fps=fps)


def _decoder(codec: VideoCodec) -> object:
    """The station's decoder for an inter-frame codec (None for JPEG)."""
    import av

    return av.CodecContext.create(_DECODERS[codec], "r") if codec != VideoCodec.JPEG else None


@dataclass
class _LinkLoop:
    """One run's two ends and the channels between them, stepped by :func:`run_link`."""

    run: LinkRun
    render: Callable[[float], npt.NDArray[np.uint8]]
    sender: VideoSender
    reporter: FeedbackReporter
    decoder: object
    size: tuple[int, int]  # the camera's (width, height)
    telemetry_spacing: float
    down: ImpairedChannel  # robot → station, rate-limited
    up: ImpairedChannel  # station → robot
    robot: NativeCodec = field(default_factory=lambda: NativeCodec(_KEY, sender=100))
    station: NativeCodec = field(default_factory=lambda: NativeCodec(_KEY, sender=1))
    stats: LinkStatistics = field(default_factory=LinkStatistics)
    assembler: FrameAssembler = field(default_factory=FrameAssembler)
    sources: dict[int, npt.NDArray[np.uint8]] = field(default_factory=dict)  # frame id → image
    next_telemetry: float = 0.0
    next_frame: float = 0.0
    next_feedback: float = 0.0

    def set_loss(self, loss: float) -> None:
        for channel in (self.down, self.up):
            channel.impairments = channel.impairments.model_copy(update={"loss": loss})

    def robot_sends(self, now: float) -> None:
        """Telemetry at its spacing, and a frame at the sender's rate when it is ready."""
        if now >= self.next_telemetry:
            self.next_telemetry += self.telemetry_spacing
            self.down.send(self.robot.encode(_TELEMETRY, now), now)
        if now < self.next_frame:
            return
        self.next_frame += 1.0 / self.sender.fps
        if self.sender.ready(now):
            self._send_frame(now)
        if self.sender.bitrate is not None:
            self.run.bitrates.append((now, float(self.sender.bitrate)))

    def _send_frame(self, now: float) -> None:
        image = self.render(now)
        frame = self.sender.encode(image, now, now)
        if frame is None:
            return
        self.sources[frame.frame_id] = image
        packets = [
            packet
            for _ in range(self.sender.copies_of(frame))  # on a lossy link, in copies
            for packet in self.robot.encode_video(frame, now)
        ]
        for packet in packets:
            self.down.send(packet, now)
        self.sender.spent(sum(len(p) for p in packets))
        self.run.frames_sent += 1
        self.run.bytes_sent += sum(len(p) for p in packets)

    def station_receives(self, now: float) -> None:
        """What arrives is counted, reassembled, gated and shown; feedback every 0.1 s."""
        for data in self.down.receive(now):
            decoded = self.station.decode(data)
            self.stats.on_received(decoded.stream, decoded.sequence, decoded.stamp, now, 100)
            if isinstance(decoded.message, VideoFragment):
                self._on_fragment(decoded.message, now)
        if now >= self.next_feedback:
            self.next_feedback += 0.1
            self._report(now)

    def _on_fragment(self, fragment: VideoFragment, now: float) -> None:
        complete = self.assembler.add(fragment)
        if complete is None:
            return
        if not self.reporter.gate.admit(complete):  # as the station does: ask for a keyframe
            self._report(now)
            return
        picture = _show(self.decoder, complete.data, *self.size)
        source = self.sources.pop(complete.frame_id, None)
        if picture is not None and source is not None:
            self.run.shown.append((now, ssim(picture, source)))

    def _report(self, now: float) -> None:
        for feedback in self.reporter.poll(now, self.stats.received, self.stats.lost):
            self.up.send(self.station.encode(feedback, now), now)
            self.run.keyframe_requests += int(feedback.keyframe)

    def robot_hears(self, now: float) -> None:
        """The station's feedback reaches the sender."""
        for data in self.up.receive(now):
            message = self.robot.decode(data).message
            if isinstance(message, VideoFeedback):
                self.sender.on_feedback(message, now)


def _show(decoder: object, data: bytes, width: int, height: int) -> npt.NDArray[np.uint8] | None:
    """The picture a chunk decodes to, at the camera's size (a smaller rung scaled up)."""
    import av

    from freelook.link import decode_jpeg

    if decoder is None:
        return decode_jpeg(data)
    try:
        frames = decoder.decode(av.Packet(data))  # type: ignore[attr-defined]
    except av.FFmpegError:
        return None
    if not frames:
        return None
    frame = frames[-1].reformat(width=width, height=height, format="rgb24")
    return np.asarray(frame.to_ndarray(), np.uint8)
