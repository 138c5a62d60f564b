"""The robot server's link keeps a bounded number of stations, and the program's state for a
station goes with it: the driver that held control keeps its place however long it is silent
(until its session expires), a station the link forgets leaves no sight or dropped-command
entry behind. The server's own session, fed packets by the test (no socket)."""

from __future__ import annotations

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import (
    ControlRequest,
    Heartbeat,
    LinkSession,
    NativeCodec,
    ReceptionReport,
    Refused,
    Reply,
    VelocityCommand,
)
from freelook.maps import load_world
from freelook.robot import ServerOptions

KEY = bytes(range(32))


def test_the_server_forgets_idle_stations_in_the_program_too_and_keeps_the_driver() -> None:
    config, world = load_robot("pioneer3dx"), load_world("square")
    server, _ = simulated_server(
        config,
        world,
        ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False),
        robot_map=None,
    )
    link, core = server.session, server.program.core
    t0 = server.runtime.now()

    def talk(station: LinkSession, packets: list[bytes], now: float) -> list[object]:
        events: list[object] = []
        for packet in packets:
            for event in link.receive(packet, now):
                events.append(event)
                if isinstance(event, Reply):
                    for answer in event.packets:
                        for back in station.receive(answer, now):
                            if isinstance(back, Reply):
                                talk(station, list(back.packets), now)
                else:
                    server._on_event(event)
        return events

    def station(sid: int) -> LinkSession:
        return LinkSession(
            NativeCodec(KEY, sender=sid), spacing=0.05, role="operator", nonce=b"%d" % sid
        )

    driver = station(1)
    talk(driver, driver.poll(t0), t0)
    talk(driver, driver.send(ControlRequest(1, 10), t0), t0)
    talk(driver, driver.send(VelocityCommand(0.2, 0.0), t0), t0)
    assert core.holds_control(1, t0)
    # an observer that reports it is blind, and sends a command it may not
    observer = station(2)
    talk(observer, observer.poll(t0), t0)
    talk(observer, observer.send(ReceptionReport(9.0, 9.0, 0.0), t0), t0)
    talk(observer, observer.send(VelocityCommand(0.2, 0.0), t0), t0)
    assert not core.sight.sees(2)
    assert core.arbiter.dropped[2] == 1
    # ten seconds later, everyone silent: opens under 100 station ids
    refused = 0
    for sid in range(3, 103):
        now = t0 + 10.0 + 0.01 * sid
        newcomer = station(sid)
        refused += any(isinstance(e, Refused) for e in talk(newcomer, newcomer.poll(now), now))
        talk(newcomer, newcomer.send(Heartbeat(), now), now)
    assert len(link.sessions) == 16
    assert refused == 100 - 15  # the observer's place and fourteen others' were given
    assert 1 in link.sessions  # its lease ran out, and its next command resumes it
    assert 2 not in link.sessions
    assert 2 not in core.arbiter.dropped
    assert core.sight.sees(2)  # no blind entry left: a new session reports afresh
    assert link.stations_refused == refused


def _open_under_ids(address: tuple[str, int], ids: range) -> int:
    """Sessions opened under each of ``ids`` at once, each from a UDP socket of its own (the
    one-key shorthand's key holder, from as many ports), each then silent; how many the robot
    took."""
    import selectors
    import socket
    import time

    taken = 0
    with selectors.DefaultSelector() as selector:
        socks = []
        for sid in ids:
            op = LinkSession(
                NativeCodec(KEY, sender=sid), spacing=0.05, role="operator", nonce=b"%d" % sid
            )
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            socks.append(sock)
            sock.bind(("127.0.0.1", 0))
            selector.register(sock, selectors.EVENT_READ, op)
            for packet in op.poll(time.time()):
                sock.sendto(packet, address)
        try:
            while ready := selector.select(timeout=2.0):  # answers within it, or not at all
                for key, _ in ready:
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    for event in key.data.receive(data, time.time()):
                        if isinstance(event, Reply):
                            for packet in event.packets:
                                key.fileobj.sendto(packet, address)  # type: ignore[union-attr]
                            taken += 1
                            selector.unregister(key.fileobj)  # opened: silent from now on
                            break
        finally:
            for sock in socks:
                sock.close()
    return taken


def test_over_udp_opens_under_200_ids_leave_16_sessions_and_the_driver_driving() -> None:
    import asyncio

    from freelook.operator import OperatorStation
    from loopback import robot_and_station
    from waiting import wait_until_async

    config, world = load_robot("pioneer3dx"), load_world("square")
    server, _ = simulated_server(
        config,
        world,
        ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False),
        robot_map=None,
    )

    async def scenario() -> tuple[int, int, int, int]:
        async with robot_and_station(
            server, lambda address: OperatorStation(config, None, address, key=KEY, station=1)
        ) as driver:
            address = server.local_address
            assert address is not None
            taken = await asyncio.to_thread(_open_under_ids, address, range(2, 202))
            assert driver.telemetry is not None
            stamp = driver.telemetry.stamp
            await wait_until_async(
                lambda: driver.telemetry is not None and driver.telemetry.stamp > stamp + 0.5,
                15,
                "the driver's telemetry, half a second on",
            )
            assert server.driver is not None
            return (
                taken,
                len(server.session.sessions),
                len(server.driver.peers),
                1 in (server.session.sessions),
            )

    taken, sessions, peers, driver_kept = asyncio.run(scenario())
    assert taken == 15  # the places the driver left: every other open refused
    assert sessions == 16
    assert peers <= 16
    assert driver_kept
