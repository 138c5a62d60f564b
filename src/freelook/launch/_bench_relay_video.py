"""``link.relay``'s video figures: the driving camera's VP9 frames a second at a station
through the relay at 250 kbit/s, and over direct UDP at the same rate, in the same run.

``freelook robot --hardware sim --video vp9 --link-rate 250k`` (pioneer3dx in ``lab``, its
640 × 480 camera; telemetry first, video in what it leaves of the 250 kbit/s) serves on the
case's relay URL, and a second one on a UDP port on loopback, each a process of its own and
both running throughout. An operator station in this process (the one ``freelook operator``
runs) opens a session with one, takes control and watches; the relay and the direct link take
turns, twice each, and each figure is the median of its turns. A frame counts when the
station's keyframe gate passes it: complete, and decodable after those before it (what the
station hands the cockpit's decoder). Beside the frame rates, the bitrate each robot set its
encoder to, as its log says (what its rate controller made of the 250 kbit/s). The robot
processes are stopped by their pids.
"""

from __future__ import annotations

import asyncio
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from freelook.bench import Context, figures, stop_process

#: bit/s the robot is told its link carries (``--link-rate``)
RATE = "250k"
SETTLE = 3.0  # s from control taken to the watch: the rate controller's first setting
WATCH = 8.0  # s of frames counted each turn
TURNS = 2  # each link's
#: the robot's log of its stream's setting (freelook.video.rate)
SETTING = re.compile(rb"video stream 0: (\d+) kbit/s, (\d+)x(\d+) at ([\d.]+) fps")
SERVES = 120.0  # s a robot program may take to serve (its loops are compiled ahead)


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _robot(listen: str, keys: str, log: Path) -> subprocess.Popen[bytes]:
    """``freelook robot`` serving on ``listen``, its output in ``log``, once it serves."""
    with log.open("wb") as out:
        robot = subprocess.Popen(
            [sys.executable, "-m", "freelook.cli", "robot", "--hardware", "sim",
             "--listen", listen, "--keys", keys, "--video", "vp9", "--link-rate", RATE],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    deadline = time.monotonic() + SERVES
    while b"profile on" not in log.read_bytes():
        if robot.poll() is not None or time.monotonic() > deadline:
            stop_process(robot)
            said = log.read_text(errors="replace")
            raise RuntimeError(f"freelook robot did not serve on {listen}:\n{said}")
        time.sleep(0.2)  # another process's log: nothing to await
    return robot


def _bitrate(log: Path) -> float:
    """kbit/s the robot's encoder was last set to, as its log says (nan if it said none)."""
    found = SETTING.findall(log.read_bytes())
    return float(found[-1][0]) if found else float("nan")


async def _frames_per_second(url: str, station_key: str) -> float:
    """A station on ``url`` in control: the frames its gate passed a second over
    :data:`WATCH`."""
    from freelook.config import load_robot
    from freelook.link import derive_key, parse_transport_url
    from freelook.operator import OperatorStation

    station = OperatorStation(
        load_robot("pioneer3dx"), None, parse_transport_url(url), key=derive_key(station_key),
        station=1,
    )  # fmt: skip
    task = asyncio.create_task(station.run())
    try:
        deadline = time.monotonic() + 60.0
        while not station.in_control:
            if task.done():
                task.result()  # the station's own error
            if time.monotonic() > deadline:
                raise RuntimeError(f"no control of the robot on {url} in 60 s")
            await asyncio.sleep(0.05)
        await asyncio.sleep(SETTLE)
        gate = station.video.gate
        frames, t0 = gate.passed, time.monotonic()
        await asyncio.sleep(WATCH)
        if task.done():
            task.result()
        return (gate.passed - frames) / (time.monotonic() - t0)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@figures("link.relay")
def relay_video(context: Context) -> dict[str, float]:
    """VP9 frames a second at the station at 250 kbit/s, through the relay and direct, and
    the bitrate the robot set its encoder to on each."""
    folder, keys = Path(context["folder"]), context["keys"]
    links = {"relay": context["url"], "direct": f"udp://127.0.0.1:{_free_udp_port()}"}
    logs = {name: folder / f"robot-{name}.log" for name in links}
    robots = []
    seen: dict[str, list[float]] = {name: [] for name in links}
    try:
        for name, url in links.items():
            robots.append(_robot(url, keys, logs[name]))
        for _ in range(TURNS):
            for name, url in links.items():
                seen[name].append(asyncio.run(_frames_per_second(url, context["station_key"])))
    finally:
        for robot in robots:
            stop_process(robot)
    out: dict[str, float] = {}
    for name, turns in seen.items():
        out[f"video_{name}_fps"] = statistics.median(turns)
        out[f"video_{name}_kbit_s"] = _bitrate(logs[name])
    out["video_link_bps"] = 250e3
    return out
