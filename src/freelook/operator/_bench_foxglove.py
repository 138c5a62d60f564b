"""Benchmark of the live Foxglove bridge: what publishing one telemetry report costs.

The candidate writes one Pioneer telemetry report (181-beam scan, 16 sonars, and the ROS 2
streams derived from it: odometry, localization, /tf, mode, link statistics) to the bridge's
:class:`LiveStreams` while a WebSocket client, written from the protocol, is subscribed to
every topic and drains them on its own thread. The baseline writes the same report to the
MCAP recorder (in memory), as a station with ``--record`` does. Both run on the background
recorder's thread in a session, so the ratio says what ``--foxglove`` adds to recording.
"""

from __future__ import annotations

import asyncio
import io
import json
import math
import threading
import time

from freelook.bench import Case, benchmark
from freelook.link import LinkStatsReport, Telemetry
from freelook.operator._foxglove import FoxgloveBridge
from freelook.record import Recorder

__all__: list[str] = []


def _telemetry(i: int) -> Telemetry:
    t = 1_800_000_000.0 + 0.031 * i
    return Telemetry(
        stamp=t,
        odom=(1.0 + 0.01 * i, 2.0, 0.3),
        pose=(1.0 + 0.01 * i, 2.0, 0.3),
        v=0.4,
        omega=0.15,
        cmd_v=0.4,
        cmd_omega=0.15,
        pan=0.0,
        tilt=0.0,
        laser_angle_min=-math.pi / 2,
        laser_angle_increment=math.pi / 180,
        laser_range_max=30.0,
        laser=tuple(1.0 + (k % 50) * 0.1 for k in range(181)),
        sonar=tuple(2.0 + k * 0.1 for k in range(16)),
        link=LinkStatsReport(i, 0, 0, 0, 0, 0, 21.0, 32.0, 0.1, 0.004),
    )


class _Watcher:
    """A Foxglove client on its own thread that subscribes to every channel and reads."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.received = 0
        self.subscribed = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()

    async def _run(self) -> None:
        import websockets

        uri = f"ws://127.0.0.1:{self.port}"
        async with websockets.connect(uri, subprotocols=["foxglove.sdk.v1"]) as ws:  # type: ignore[list-item]
            subscribed: set[int] = set()
            while not self._stop.is_set():
                try:
                    frame = await asyncio.wait_for(ws.recv(), 0.2)
                except TimeoutError:
                    continue
                if isinstance(frame, bytes):
                    self.received += 1
                    continue
                message = json.loads(frame)
                if message.get("op") != "advertise":
                    continue
                subs = [
                    {"id": channel["id"], "channelId": channel["id"]}
                    for channel in message["channels"]
                    if channel["id"] not in subscribed
                ]
                subscribed.update(s["id"] for s in subs)
                await ws.send(json.dumps({"op": "subscribe", "subscriptions": subs}))
                if len(subscribed) >= 8:
                    self.subscribed.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@benchmark("foxglove.live_telemetry")
def _live_telemetry() -> Case:
    loop = asyncio.new_event_loop()
    bridge = FoxgloveBridge("bench-token", max_speed=1.0, max_turn_rate=1.0, port=0)
    port = loop.run_until_complete(_start(bridge))
    live = bridge.streams
    for i in range(3):  # advertise every channel once
        live.telemetry(_telemetry(i), sent=i)
    watcher = _Watcher(port)
    watcher.subscribed.wait(10)
    time.sleep(0.2)
    recorder = Recorder(io.BytesIO())
    counter = [0]

    def publish() -> None:
        counter[0] += 1
        live.telemetry(_telemetry(counter[0]), sent=counter[0])

    def record() -> None:
        counter[0] += 1
        recorder.telemetry(_telemetry(counter[0]), sent=counter[0])

    def figures() -> dict[str, float]:
        received = float(watcher.received)
        watcher.close()
        bridge.stop()
        loop.close()
        return {"messages_received_by_the_client": received}

    return Case(
        run=publish,
        baseline=record,
        unit="telemetry report",
        interleave=True,
        extra=figures,
    )


async def _start(bridge: FoxgloveBridge) -> int:
    return bridge.start()
