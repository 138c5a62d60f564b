"""Benchmark of ``freelook report`` on a 30-minute recording (target: at most 30 s).

The recording is what an operator station writes in 30 minutes with the Pioneer's rates:
telemetry every 31 ms with the full 181-beam scan and 16 sonars (and the ROS 2 streams derived
from it), 30 video frames a second (15 kB JPEGs, each in 14 datagrams), every received packet
with its raw bytes, the map and the robot description. It is written once through the
recorder the station uses (a few minutes) and kept in the temporary folder for later runs.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from freelook.bench import Case, benchmark

if TYPE_CHECKING:
    from freelook.link import Telemetry
    from freelook.record import Recorder

MINUTES = 30.0
TELEMETRY_SPACING = 0.031  # s: the Pioneer's
FRAME_RATE = 30.0
JPEG_BYTES = 15_000
FRAGMENTS = 14  # datagrams a frame takes
_VERSION = 2  # bump when the generated recording changes
_START = 1_800_000_000.0  # s: the recording's first stamp


def _recording_path(minutes: float) -> Path:
    folder = Path(tempfile.gettempdir()) / "freelook-bench"
    folder.mkdir(exist_ok=True)
    return folder / f"station-{minutes:g}min-v{_VERSION}.mcap"


def write_long_recording(path: Path, minutes: float = MINUTES, seed: int = 0) -> None:
    """A station's recording of ``minutes`` of driving laps in the lab (seeded)."""
    from freelook.config import load_robot
    from freelook.maps import load_world
    from freelook.record import Recorder, robot_urdf

    rng = np.random.default_rng(seed)
    start = _START
    clock = [start]
    partial = path.with_suffix(".partial")
    recorder = Recorder(
        partial, metadata={"robot": "pioneer3dx", "world": "lab"}, clock=lambda: clock[0]
    )
    recorder.robot_description(start, robot_urdf(load_robot("pioneer3dx")))
    recorder.occupancy_grid(start, load_world("lab"))
    telemetry_bytes = rng.bytes(539)
    laser = tuple(float(r) for r in rng.uniform(0.5, 8.0, 181))
    sonar = tuple(float(r) for r in rng.uniform(0.5, 5.0, 16))
    sequences = {1: 0, 2: 0}
    frame_due = start
    n = int(minutes * 60 / TELEMETRY_SPACING)
    for i in range(n):
        t = start + i * TELEMETRY_SPACING
        clock[0] = t
        message = _lap_telemetry(i, t, laser, sonar, rng)
        recorder.telemetry(message, sent=i * 2 + i // 500)
        _packet(recorder, telemetry_bytes, t, 0.002, "Telemetry", 1, sequences[1])
        sequences[1] += 1
        while frame_due <= t:
            jpeg = rng.bytes(JPEG_BYTES)  # a new frame, as incompressible as a JPEG
            recorder.image(frame_due, jpeg)
            room = -(-JPEG_BYTES // FRAGMENTS)
            for k in range(FRAGMENTS):
                fragment = jpeg[k * room : (k + 1) * room]
                if rng.random() > 0.002:  # a few lost on the way
                    _packet(recorder, fragment, frame_due, 0.003, "VideoFragment", 2, sequences[2])
                sequences[2] += 1
            frame_due += 1.0 / FRAME_RATE
    recorder.close()
    partial.rename(path)


def _lap_telemetry(
    i: int, t: float, laser: tuple[float, ...], sonar: tuple[float, ...], rng: np.random.Generator
) -> Telemetry:
    """The ``i``-th telemetry of the laps, at ``t``: a 4 × 3 m ellipse in about 55 s, now and
    then slowed by a safety zone."""
    from freelook.link import LinkStatsReport, SafetyFlags, Telemetry

    omega = 2 * math.pi / 55.0
    a = omega * (t - _START)
    x, y = 9.0 + 4.0 * math.cos(a), 6.75 + 3.0 * math.sin(a)
    heading = math.atan2(3.0 * math.cos(a), -4.0 * math.sin(a))
    slowed = (i // 400) % 7 == 3  # now and then a zone slows the robot
    return Telemetry(
        stamp=t,
        odom=(x, y, heading),
        pose=(x, y, heading),
        v=0.4 * (0.5 if slowed else 1.0) + float(rng.normal(0.0, 0.002)),
        omega=0.15,
        cmd_v=0.4 * (0.5 if slowed else 1.0),
        cmd_omega=0.15,
        pan=0.0,
        tilt=0.0,
        laser_angle_min=-math.pi / 2,
        laser_angle_increment=math.pi / 180,
        laser_range_max=30.0,
        laser=laser,
        sonar=sonar,
        safety_zone=1 if slowed else -1,
        safety_scale=0.5 if slowed else 1.0,
        safety_flags=SafetyFlags.ZONE if slowed else SafetyFlags.NONE,
        link=LinkStatsReport(i * 2, i // 500, 0, 0, 0, 0, 21.0, 32.0, 0.1, 0.004),
    )


def _packet(
    recorder: Recorder, data: bytes, sent: float, delay: float, kind: str, stream: int, seq: int
) -> None:
    """A packet the station received from the robot ``delay`` seconds after it was sent."""
    recorder.packet(
        "robot_to_operator",
        data,
        send_time=sent,
        receive_time=sent + delay,
        wire="native",
        accepted=True,
        kind=kind,
        stream=stream,
        sequence=seq,
    )


@benchmark("record.report_30min")
def report_30min() -> Case:
    """``freelook report`` of a station's 30-minute recording with video; target 30 s."""
    from freelook.record import build_report, recording_info

    path = _recording_path(MINUTES)
    generated = 0.0
    if not path.exists():
        began = time.perf_counter()
        write_long_recording(path)
        generated = time.perf_counter() - began
    info = recording_info(path)
    out = Path(tempfile.mkdtemp(prefix="freelook-report-"))

    def run() -> object:
        return build_report(path, out)

    return Case(
        run,
        target_s=30.0,
        unit="report",
        calls=3,  # each reads the whole recording: three, no warm-up
        extra=lambda: {
            "recording_minutes": info.duration / 60,
            "messages": float(info.messages),
            "megabytes": path.stat().st_size / 1e6,
            "generated_s": generated,
        },
    )
