"""The arm's cameras on a serial radio share its video budget with the driving camera: a frame
goes out only when the budget holds it and it holds the radio at most 0.1 s, so TAROS's stereo
pair is thinned, the driving camera (too big for the air time) left out, and telemetry keeps
its spacing. Two real ptys joined like a radio pair at 921600 baud."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass

import pytest
from test_serial_link import radio_pair  # type: ignore[import-not-found]

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import derive_key, parse_transport_url
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from freelook.web import BrowserSlot
from loopback import robot_and_station, session_open

pytestmark = pytest.mark.realtime

BAUD = 921600
SECONDS = 3.0


@dataclass
class Run:
    sent: dict[int, int]  # frames each stream sent while measured
    skipped: dict[int, int]  # frames each stream left out for the budget
    received: int  # stream 1 frames that reached the browser's slot
    elapsed: float
    telemetry_gap: float  # s: the longest time between telemetry stamps the station saw


def test_the_stereo_pair_is_thinned_to_the_radio_budget() -> None:
    config, world = load_robot("taros"), load_world("eod")
    key = derive_key("arm camera radio")

    async def session(robot_device: str, operator_device: str) -> Run:
        server, _ = simulated_server(
            config,
            world,
            ServerOptions(listen=f"serial://{robot_device}?baud={BAUD}", key=key, camera=True),
        )
        slot = BrowserSlot()

        def station_for(_: object) -> OperatorStation:
            url = parse_transport_url(f"serial://{operator_device}?baud={BAUD}")
            station = OperatorStation(config, world, url, key=key)
            station.attach(slot)
            return station

        async with robot_and_station(
            server,
            station_for,
            opened=lambda station: session_open(station) and station.telemetry,
            what="the session open and telemetry flowing",
        ) as station:
            sent_before = dict(server.sent_by_stream)
            received = 0
            stamps: list[float] = []
            started = time.monotonic()
            while time.monotonic() - started < SECONDS:  # the measured time
                try:
                    out = await asyncio.wait_for(slot.next(), 0.5)
                except TimeoutError:
                    continue
                received += sum(1 for p in out if p[:2] == b"\x03\x01")
                telemetry = station.telemetry
                if telemetry is not None and (not stamps or telemetry.stamp != stamps[-1]):
                    stamps.append(telemetry.stamp)
            elapsed = time.monotonic() - started
            return Run(
                {s: n - sent_before.get(s, 0) for s, n in server.sent_by_stream.items()},
                dict(server.skipped_by_stream),
                received,
                elapsed,
                max(b - a for a, b in itertools.pairwise(stamps)),
            )

    with radio_pair(baud=BAUD) as (robot_device, operator_device):
        r = asyncio.run(session(robot_device, operator_device))
    pair = next(c for c in config.cameras if c.name == "arm_stereo")

    # the pair goes out, fewer than its 15 a second: the budget thins it
    assert r.sent.get(1, 0) > 0
    assert r.skipped.get(1, 0) > 0
    assert r.sent[1] < 0.8 * pair.rate_hz * r.elapsed
    assert r.received > 0  # and reaches the browser's slot as stream 1
    # a driving frame (about 22 kB) would hold the radio longer than 0.1 s: never sent
    assert r.sent.get(0, 0) == 0
    assert r.skipped.get(0, 0) > 0
    # telemetry keeps coming: the video budget is what is left after it (no gap as long as the
    # watchdog's timeout, on a busy machine too; a frame holding the radio would make one)
    assert r.telemetry_gap < config.safety.watchdog_timeout
