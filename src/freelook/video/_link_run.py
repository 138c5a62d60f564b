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
    import av

    first = render(0.0)
    height, width = first.shape[:2]
    robot, station = NativeCodec(_KEY, sender=100), NativeCodec(_KEY, sender=1)
    # a full report: 181 laser beams (539 bytes with its tag)
    sample = Telemetry(0.0, (0, 0, 0), (0, 0, 0), 0, 0, 0, 0, 0, 0, laser=(1.0,) * 181)
    telemetry_bytes = len(NativeCodec(_KEY).encode(sample, 0.0))
    if serial_baud is None:
        spacing, video_bps = telemetry_share(rate_bps, telemetry_bytes, 0.031)
    else:  # a radio modem: the robot's rule for a serial line (RadioBudget.for_baud)
        usable = 0.8 * serial_baud / 10
        spacing = max(0.031, telemetry_bytes / (0.7 * usable))
        video_bps = 8 * (usable - telemetry_bytes / spacing)
        rate_bps = serial_baud * 0.8
    controller: RateController | None = None
    if codec == VideoCodec.JPEG:
        setting = VideoSetting(0, Rung(width, height, fps))
    else:
        controller = RateController(video_bps, width, height, fps)
        setting = controller.setting
    encoder = VideoEncoder(codec, setting, jpeg_quality=jpeg_quality)
    sender = VideoSender(
        0, encoder, controller=controller, budget=ByteBudget(video_bps / 8), fps=fps
    )
    lossy = loss if callable(loss) else (lambda _t, p=loss: p)
    down = ImpairedChannel(
        Impairments(bandwidth_bps=rate_bps, delay=delay, queue_bytes=16_384), seed=seed
    )
    up = ImpairedChannel(Impairments(delay=delay), seed=seed + 1)
    stats, assembler, gate = LinkStatistics(), FrameAssembler(), FrameGate()
    reporter = FeedbackReporter(gate, request_spacing=request_spacing)
    decoder = av.CodecContext.create(_DECODERS[codec], "r") if codec != VideoCodec.JPEG else None
    sources: dict[int, npt.NDArray[np.uint8]] = {}
    run = LinkRun(seconds)
    next_frame = next_telemetry = next_feedback = 0.0
    steps = round(seconds / tick)
    for step in range(steps + 1):
        now = step * tick
        down.impairments = down.impairments.model_copy(update={"loss": lossy(now)})
        up.impairments = up.impairments.model_copy(update={"loss": lossy(now)})
        if now >= next_telemetry:
            next_telemetry += spacing
            down.send(robot.encode(sample, now), now)
        if now >= next_frame:
            next_frame += 1.0 / sender.fps
            if sender.ready(now):
                image = render(now)
                frame = sender.encode(image, now, now)
                if frame is not None:
                    sources[frame.frame_id] = image
                    packets = [
                        packet
                        for _ in range(sender.copies)  # a lossy link: each frame twice
                        for packet in robot.encode_video(frame, now)
                    ]
                    for packet in packets:
                        down.send(packet, now)
                    sender.spent(sum(len(p) for p in packets))
                    run.frames_sent += 1
                    run.bytes_sent += sum(len(p) for p in packets)
            if sender.bitrate is not None:
                run.bitrates.append((now, float(sender.bitrate)))
        for data in down.receive(now):
            decoded = station.decode(data)
            stats.on_received(decoded.stream, decoded.sequence, decoded.stamp, now, 100)
            message = decoded.message
            if not isinstance(message, VideoFragment):
                continue
            complete = assembler.add(message)
            if complete is None:
                continue
            if not gate.admit(complete):  # as the station does: ask for a keyframe at once
                for feedback in reporter.poll(now, stats.received, stats.lost):
                    up.send(station.encode(feedback, now), now)
                    run.keyframe_requests += int(feedback.keyframe)
                continue
            picture = _show(decoder, complete.data, width, height)
            source = sources.pop(complete.frame_id, None)
            if picture is not None and source is not None:
                run.shown.append((now, ssim(picture, source)))
        if now >= next_feedback:
            next_feedback += 0.1
            for feedback in reporter.poll(now, stats.received, stats.lost):
                up.send(station.encode(feedback, now), now)
                run.keyframe_requests += int(feedback.keyframe)
        for data in up.receive(now):
            message = robot.decode(data).message
            if isinstance(message, VideoFeedback):
                sender.on_feedback(message, now)
    return run


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
