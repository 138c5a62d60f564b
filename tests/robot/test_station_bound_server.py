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
