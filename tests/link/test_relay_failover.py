"""Two relays for one robot: both ends are given the same relays in order
(``zenoh+tls://RELAY-A:PORT,RELAY-B:PORT/r1``, as a user writes it), connect to the first,
and when it dies (killed by its pid) move to the second by themselves. The session carries on
through the second relay: the robot keeps driving on the command it held, the station's
telemetry gap is bounded, and no session is re-opened. Both relays run as a user runs them
(``freelook relay``), the robot and the station in this process."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from pathlib import Path

import psutil
import pytest
from test_relay import CONFIG, STATION_KEY, _keys_file, relay
from test_zenoh import free_port

from freelook.errors import ConfigError
from freelook.hardware.sim import simulated_server
from freelook.link import TLS_CA_ENV, KeyRing, VelocityCommand, derive_key, parse_transport_url
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from loopback import alive, running, serving
from waiting import wait_until_async

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed"),
]

#: s the session may go without telemetry while both ends move to the second relay
TAKE_OVER = 1.0


def _clients(port: int) -> int:
    """Connections established to 127.0.0.1:``port`` from this process (robot and station)."""
    return sum(
        1
        for c in psutil.Process().net_connections("tcp")
        if c.status == psutil.CONN_ESTABLISHED and c.raddr and c.raddr.port == port
    )


class Gaps:
    """The longest gap between the robot's reports at the station, and the lowest speed the
    robot commanded itself (after safety), sampled every 5 ms."""

    def __init__(self, station: OperatorStation, server: object) -> None:
        self.station = station
        self.core = server.program.core  # type: ignore[attr-defined]
        self.longest = 0.0
        self.slowest = float(self.core.control.last_output.v)
        self.task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        seen, last = self.station.core.report_rx, loop.time()
        while True:
            await asyncio.sleep(0.005)
            now = loop.time()
            self.slowest = min(self.slowest, float(self.core.control.last_output.v))
            if self.station.core.report_rx != seen:
                seen = self.station.core.report_rx
                self.longest = max(self.longest, now - last)
                last = now


def test_when_the_first_relay_dies_both_ends_carry_on_through_the_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = _keys_file(tmp_path)
    monkeypatch.setenv(TLS_CA_ENV, str(tmp_path / "ca.pem"))
    first_port, second_port = free_port(), free_port()
    url = f"zenoh+tls://127.0.0.1:{first_port},127.0.0.1:{second_port}/r1"
    out: dict[str, float | int | bool] = {}

    async def scenario() -> None:
        server, _ = simulated_server(
            CONFIG,
            load_world("square"),
            ServerOptions(listen=url, keys=KeyRing.load(keys), camera=False),
            robot_map=None,
        )
        station = OperatorStation(
            CONFIG, None, parse_transport_url(url), key=derive_key(STATION_KEY), station=1
        )
        loop = asyncio.get_running_loop()
        with contextlib.ExitStack() as relays:
            first = relays.enter_context(relay(keys, first_port))
            relays.enter_context(relay(keys, second_port))
            async with serving(server), running(station) as (task,):
                await wait_until_async(lambda: station.in_control, 30, "station 1 in control")
                station.drive_command = VelocityCommand(0.3, 0.0)
                core = server.program.core
                await wait_until_async(lambda: core.control.last_output.v > 0.29, 10, "driving")
                out["on_first"] = _clients(first_port)  # both ends took the first relay
                gaps = Gaps(station, server)
                await asyncio.sleep(1.0)
                first.kill()  # the first relay dies, by its pid
                killed, received = loop.time(), station.stats.received
                await wait_until_async(
                    lambda: _clients(second_port) == 2, 20, "both ends on the second relay"
                )
                await wait_until_async(
                    lambda: station.stats.received > received + 10, 20, "telemetry again"
                )
                out["back_after"] = loop.time() - killed
                await asyncio.sleep(2.0)
                gaps.task.cancel()
                alive(task)
                out["longest_gap"] = gaps.longest
                out["slowest"] = gaps.slowest
                out["opened"] = station.sessions_opened
                out["resumed"] = station.sessions_resumed
                out["driving"] = core.control.last_output.v > 0.29
                out["first_dead"] = first.poll() is not None

    asyncio.run(scenario())
    print(f"\nrelay take-over: {out}")
    assert out["first_dead"], out
    assert out["on_first"] == 2, out
    assert out["opened"] == 1, out  # the same session, not a new one
    assert out["resumed"] == 0, out
    assert out["longest_gap"] < TAKE_OVER, out
    assert out["slowest"] > 0.2, out  # the robot never stopped (0.3 m/s held)
    assert out["driving"], out


def test_several_relays_are_written_in_order_in_one_url() -> None:
    url = parse_transport_url("zenoh+tls://relay-a.example:7447,[::1]:7448,10.0.0.2:7449/r1")
    assert (url.host, url.port, url.robot, url.mode, url.tls) == (
        "relay-a.example", 7447, "r1", "client", True
    )  # fmt: skip
    assert url.zenoh_endpoints == [
        "tcp/relay-a.example:7447",
        "tcp/[::1]:7448",
        "tcp/10.0.0.2:7449",
    ]
    assert parse_transport_url("zenoh+tls://relay-a.example:7447/r1").zenoh_endpoints == [
        "tcp/relay-a.example:7447"
    ]
    for bad in (
        "zenoh+tls://relay-a:7447,/r1",  # an empty relay
        "zenoh+tls://relay-a:7447,relay-b/r1",  # a relay without its port
        "zenoh+tls://relay-a:7447,relay-b:70000/r1",
        "zenoh+tls://user@relay-a:7447/r1",
        "zenoh+tls://relay-a:7447,relay_b!:7448/r1",  # not a host name
    ):
        with pytest.raises(ConfigError, match="expected zenoh\\+tls://RELAY:PORT/ROBOT"):
            parse_transport_url(bad)
