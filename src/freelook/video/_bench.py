"""Benchmarks of inter-frame video against JPEG, each in the same run: bytes per frame and
SSIM at 320 × 240 and 640 × 480, the operator's view over a 250 kbit/s link with 10 % (and
40 %) loss and over a 115200-baud radio modem, and the robot's CPU share of encoding at
640 × 480, 15 fps. The camera is the simulator's, driving and panning through the lab."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.bench import Case, benchmark
from freelook.link import VideoCodec
from freelook.video._encoder import VideoEncoder
from freelook.video._link_run import LinkRun, run_link, ssim
from freelook.video._rate import Rung, VideoSetting

Render = Callable[[float], npt.NDArray[np.uint8]]

#: the inter-frame codec the robot sends by default
CODEC = VideoCodec.VP9


def camera(width: int, height: int) -> Render:
    """The simulated camera at time t of a drive through the lab: forward, weaving, panning."""
    from freelook.config import CameraConfig, load_robot
    from freelook.maps import load_world
    from freelook.sim.camera import Camera

    robot = load_robot("pioneer3dx")
    assert robot.pan_tilt is not None
    cam = Camera(CameraConfig(width=width, height=height), robot.pan_tilt, load_world("lab"))

    def render(t: float) -> npt.NDArray[np.uint8]:
        x = 2.0 + (0.25 * t) % 3.0
        return cam.render(x, 2.0 + 0.05 * t, 0.4 * math.sin(0.4 * t), pan=0.3 * math.sin(0.7 * t))

    return render


def _sequence(width: int, height: int, count: int = 90, fps: float = 15.0) -> list:  # type: ignore[type-arg]
    render = camera(width, height)
    return [render(i / fps) for i in range(count)]


def _encode_all(
    encoder: VideoEncoder, frames: list[npt.NDArray[np.uint8]], skip: int = 15
) -> tuple[float, float]:
    """(mean bytes per frame, mean SSIM against the rendered frame) after ``skip`` frames."""
    import av

    decoder: Any = None
    if encoder.inter:
        name = {VideoCodec.VP8: "vp8", VideoCodec.VP9: "vp9", VideoCodec.H264: "h264"}
        decoder = av.CodecContext.create(name[VideoCodec(encoder.codec)], "r")
    sizes, scores = [], []
    for i, image in enumerate(frames):
        chunk = encoder.encode(image)
        assert chunk is not None
        if decoder is None:
            from freelook.link import decode_jpeg

            picture = decode_jpeg(chunk.data)
        else:
            (frame,) = decoder.decode(av.Packet(chunk.data))
            picture = frame.to_ndarray(format="rgb24")
        if i >= skip:
            sizes.append(len(chunk.data))
            scores.append(ssim(picture, image))
    return float(np.mean(sizes)), float(np.mean(scores))


def _frames_case(width: int, height: int, bitrate: int) -> Case:
    frames = _sequence(width, height)
    setting = VideoSetting(bitrate, Rung(width, height, 15.0))
    jpeg = VideoEncoder(VideoCodec.JPEG, setting, jpeg_quality=80)
    inter = VideoEncoder(CODEC, setting)
    cycle = iter(range(10**9))

    def extra() -> dict[str, float]:
        inter_bytes, inter_ssim = _encode_all(VideoEncoder(CODEC, setting), frames)
        jpeg_bytes, jpeg_ssim = _encode_all(jpeg, frames)
        return {
            "bitrate_kbps": bitrate / 1000,
            "vp9_bytes_per_frame": inter_bytes,
            "vp9_ssim": inter_ssim,
            "jpeg_bytes_per_frame": jpeg_bytes,
            "jpeg_ssim": jpeg_ssim,
            "jpeg_to_vp9_bytes": jpeg_bytes / inter_bytes,
        }

    return Case(
        run=lambda: inter.encode(frames[next(cycle) % len(frames)]),
        baseline=lambda: jpeg.encode(frames[next(cycle) % len(frames)]),
        unit="frame",
        extra=extra,
    )


@benchmark("video.frames_320x240")
def frames_320() -> Case:
    """VP9 at 250 kbit/s against JPEG quality 80: bytes per frame and SSIM; time per frame."""
    return _frames_case(320, 240, 250_000)


@benchmark("video.frames_640x480")
def frames_640() -> Case:
    """VP9 at 1 Mbit/s against JPEG quality 80: bytes per frame and SSIM; time per frame."""
    return _frames_case(640, 480, 1_000_000)


def _figures(prefix: str, run: LinkRun, start: float, end: float) -> dict[str, float]:
    return {
        f"{prefix}_fps": run.fps(start, end),
        f"{prefix}_ssim": run.mean_ssim(start, end),
        f"{prefix}_longest_freeze_s": run.longest_freeze(start, end),
    }


@benchmark("video.link_250k")
def link_250k() -> Case:
    """320 × 240 at 15 fps over 250 kbit/s shared with telemetry, each way losing 10 % of
    packets for 20 s, then 40 % for 20 s (the experiments' channel model, seeded): what the
    operator sees with VP9 and with JPEG at the same budget."""
    render = camera(320, 240)
    figures: dict[str, float] = {}

    def loss(t: float) -> float:
        return 0.1 if t < 20.0 else 0.4

    def run() -> None:
        inter = run_link(CODEC, render, seconds=40.0, loss=loss, seed=1)
        jpeg = run_link(VideoCodec.JPEG, render, seconds=40.0, loss=loss, seed=1)
        figures.update(_figures("vp9_10pct", inter, 1.0, 20.0))
        figures.update(_figures("jpeg_10pct", jpeg, 1.0, 20.0))
        figures.update(_figures("vp9_40pct", inter, 21.0, 40.0))
        figures.update(_figures("jpeg_40pct", jpeg, 21.0, 40.0))
        figures["fps_ratio_10pct"] = figures["vp9_10pct_fps"] / max(figures["jpeg_10pct_fps"], 1e-9)
        figures["vp9_kbps_10pct"] = inter.bitrate(5.0, 20.0) / 1000
        figures["vp9_kbps_40pct"] = inter.bitrate(25.0, 40.0) / 1000

    return Case(run=run, calls=1, unit="run", extra=lambda: dict(figures))


@benchmark("video.serial_115200")
def serial_115200() -> Case:
    """320 × 240 over a 115200-baud radio modem (no loss), telemetry first: delivered fps
    with VP9 and with JPEG, 20 s each."""
    render = camera(320, 240)
    figures: dict[str, float] = {}

    def run() -> None:
        for name, codec in (("vp9", CODEC), ("jpeg", VideoCodec.JPEG)):
            result = run_link(codec, render, seconds=20.0, loss=0.0, serial_baud=115_200)
            figures.update(_figures(name, result, 1.0, 20.0))

    return Case(run=run, calls=1, unit="run", extra=lambda: dict(figures))


@benchmark("video.encode_cpu_640x480")
def encode_cpu() -> Case:
    """The robot's CPU share of encoding at 640 × 480, 15 fps (process CPU time, one thread):
    VP9 at 1 Mbit/s, against JPEG quality 80 in the same run (target: ≤ 25 % of one core)."""
    frames = _sequence(640, 480, 60)
    setting = VideoSetting(1_000_000, Rung(640, 480, 15.0))
    cycle = iter(range(10**9))
    inter = VideoEncoder(CODEC, setting)
    jpeg = VideoEncoder(VideoCodec.JPEG, setting)

    def share(encoder: VideoEncoder) -> float:
        start = time.process_time()
        for image in frames:
            encoder.encode(image)
        return (time.process_time() - start) / len(frames) * 15.0

    return Case(
        run=lambda: inter.encode(frames[next(cycle) % len(frames)]),
        baseline=lambda: jpeg.encode(frames[next(cycle) % len(frames)]),
        unit="frame",
        extra=lambda: {
            "vp9_core_share": share(VideoEncoder(CODEC, setting)),
            "jpeg_core_share": share(VideoEncoder(VideoCodec.JPEG, setting)),
        },
    )
