"""Direct when possible, on this machine (loopback, no NAT): robot and station on
``zenoh+tls://127.0.0.1:PORT/r1?direct`` through ``freelook relay`` learn their addresses from
its STUN reflector and move the link onto a direct UDP path; forged datagrams sent to either
end's direct socket (garbage, a wrong key's packet, a packet replayed) are refused by the
session and counted (from a host no candidate is on, dropped before it and counted), and the
path stays where it was. The station's cockpit state says which
path carries the link."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

import pytest
from test_relay import CONFIG, FORGED, STATION_KEY, _keys_file, relay
from test_zenoh import free_port

from freelook.hardware.sim import simulated_server
from freelook.link import (
    TLS_CA_ENV,
    DirectZenohEndpoint,
    KeyRing,
    NativeCodec,
    VelocityCommand,
    derive_key,
    parse_transport_url,
)
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from loopback import alive, running, serving
from waiting import wait_until_async

pytestmark = pytest.mark.timeout(180)


def test_on_loopback_the_link_goes_direct_and_forged_direct_datagrams_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = _keys_file(tmp_path)
    monkeypatch.setenv(TLS_CA_ENV, str(tmp_path / "ca.pem"))
    port = free_port()
    url = f"zenoh+tls://127.0.0.1:{port}/r1?direct"
    out: dict[str, object] = {}

    async def scenario() -> None:
        server, _robot = simulated_server(
            CONFIG,
            load_world("square"),
            ServerOptions(listen=url, keys=KeyRing.load(keys), camera=False),
            robot_map=None,
        )
        station = OperatorStation(
            CONFIG, None, parse_transport_url(url), key=derive_key(STATION_KEY), station=1
        )
        async with serving(server), running(station) as (task,):
            await wait_until_async(lambda: station.in_control, 30, "station 1 in control")
            assert station.driver is not None
            assert server.driver is not None
            ends = station.driver.endpoint, server.driver.endpoint
            assert all(isinstance(end, DirectZenohEndpoint) for end in ends)
            here, there = ends  # type: ignore[assignment]
            assert isinstance(here, DirectZenohEndpoint)
            assert isinstance(there, DirectZenohEndpoint)
            await wait_until_async(
                lambda: here.path_name() == "direct" and there.path_name() == "direct",
                10, "both ends direct",
            )  # fmt: skip
            out["state path"] = station.state()["link"]["path"]
            station.drive_command = VelocityCommand(0.2, 0.0)
            core = server.program.core
            await wait_until_async(lambda: core.control.last_output.v > 0.15, 10, "driving")
            refused = {
                "robot": dict(server.session.stats.refused),
                "station": dict(station.session.stats.refused),
            }
            path = here.paths[here.robot]
            chosen = path.chosen
            wrong = NativeCodec(os.urandom(32), sender=1)
            recorded = NativeCodec(derive_key(STATION_KEY), sender=1)
            forged = [FORGED, wrong.encode(VelocityCommand(1.0, 1.0), time.time())]
            forged.append(recorded.encode(VelocityCommand(1.0, 1.0), time.time() - 30.0))
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
                stranger.bind(("127.0.0.1", 0))
                for _ in range(20):
                    for end in ends:
                        for data in forged:
                            stranger.sendto(data, end._sock.getsockname())
                    await asyncio.sleep(0.02)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as elsewhere:
                elsewhere.bind(("127.0.0.2", 0))  # a host no candidate is on
                for _ in range(10):
                    for end in ends:
                        elsewhere.sendto(forged[1], end._sock.getsockname())

            def counted() -> tuple[int, int, int]:
                """Strangers dropped at the fewer end; forgeries refused at the robot, at the
                station (since they were sent)."""
                robot = server.session.stats.refused.values()
                at_station = station.session.stats.refused.values()
                return (
                    min(here.direct_strangers, there.direct_strangers),
                    sum(robot) - sum(refused["robot"].values()),
                    sum(at_station) - sum(refused["station"].values()),
                )

            await wait_until_async(  # the asserts below say what each must come to
                lambda: (c := counted())[0] >= 10 and min(c[1:]) >= 30,
                10.0,
                "the strangers dropped and the forgeries refused at both ends",
                show=counted,
            )
            alive(task)
            out["strangers"] = (here.direct_strangers, there.direct_strangers)
            out["robot refused"] = {
                k: v - refused["robot"].get(k, 0)
                for k, v in server.session.stats.refused.items()
                if v > refused["robot"].get(k, 0)
            }
            out["station refused"] = {
                k: v - refused["station"].get(k, 0)
                for k, v in station.session.stats.refused.items()
                if v > refused["station"].get(k, 0)
            }
            out["chosen"] = (chosen, path.chosen)
            out["paths"] = (here.path_name(), there.path_name())
            out["direct"] = (here.received_direct, there.received_direct)
            out["speed"] = float(core.control.last_output.v)
            out["in control"] = station.in_control

    with relay(keys, port):
        asyncio.run(scenario())
    print(f"\ndirect on loopback: {out}")
    assert out["state path"] == {"via": "direct", "relay": f"127.0.0.1:{port}"}, out
    assert out["paths"] == ("direct", "direct"), out  # forgeries moved no path
    chosen = out["chosen"]
    assert isinstance(chosen, tuple)
    assert chosen[0] == chosen[1], out
    robot_refused = out["robot refused"]
    assert isinstance(robot_refused, dict)
    assert sum(robot_refused.values()) >= 30, out  # dropped by the session, and counted
    station_refused = out["station refused"]
    assert isinstance(station_refused, dict)
    assert sum(station_refused.values()) >= 30, out
    speed = out["speed"]
    assert isinstance(speed, float)
    assert speed < 0.25, out  # the forged 1 m/s never drove it
    assert out["in control"], out
    # from no candidate's host: dropped, counted (with any of the peer's first probes that came
    # before its candidates did)
    strangers = out["strangers"]
    assert isinstance(strangers, tuple)
    assert min(strangers) >= 10, out
