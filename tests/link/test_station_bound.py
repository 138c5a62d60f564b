"""The robot keeps state for a bounded number of stations: a key holder of the one-key
shorthand opening sessions under thousands of station ids is refused once every place is held
by a busy station, idle ones give their place, the driver keeps driving, and a captured open
stays a replay after its station is forgotten. Sans-I/O, a clock given by the test."""

from __future__ import annotations

from freelook.link import (
    Accepted,
    Heartbeat,
    KeyRing,
    LinkDriver,
    LinkSession,
    NativeCodec,
    Permissions,
    Refused,
    Reply,
    SessionOpened,
    StationKeys,
    VelocityCommand,
)

KEY = bytes(range(32))
ROBOT = 100


def robot(keys: KeyRing | None = None) -> LinkSession:
    return LinkSession(
        NativeCodec(KEY, sender=ROBOT),
        spacing=0.05,
        periodic=lambda now: [Heartbeat()],
        role="robot",
        keys=keys,
        nonce=b"start",
    )


def operator(station: int) -> LinkSession:
    nonce = b"operator %d" % station
    return LinkSession(NativeCodec(KEY, sender=station), spacing=0.05, role="operator", nonce=nonce)


def deliver(to: LinkSession, packets: list[bytes], now: float) -> list[object]:
    events: list[object] = []
    for packet in packets:
        events.extend(to.receive(packet, now))
    return events


def open_session(op: LinkSession, rb: LinkSession, now: float) -> tuple[bool, list[bytes]]:
    """Whether the robot took ``op``'s session; the open it sent (what an eavesdropper has)."""
    sent = op.poll(now)
    (reply,) = deliver(rb, sent, now)
    if isinstance(reply, Refused):
        return False, sent
    assert isinstance(reply, Reply)
    _, confirm = deliver(op, list(reply.packets), now)
    assert isinstance(confirm, Reply)
    events = deliver(rb, list(confirm.packets), now)
    assert isinstance(events[0], SessionOpened)
    return True, sent


def state_counts(rb: LinkSession) -> dict[str, int]:
    """How many entries each per-station table of the robot's link holds."""
    ends = rb._robot
    assert ends is not None
    return {
        "sessions": len(ends.sessions),
        "pending": len(ends._pending),
        "open stamps": len(ends._open_stamps),
        "stream statistics": len({sender for sender, _ in rb.stats._streams}),
        "station streams": len(rb._streams),
    }


def test_sessions_under_5000_station_ids_keep_the_state_bounded_and_the_driver_driving() -> None:
    rb = robot()
    forgotten: list[int] = []
    rb.on_forget = forgotten.append
    rb.keep_station(lambda station: station == 1)  # the driver holds control
    driver = operator(1)
    now = 0.0
    assert open_session(driver, rb, now)[0]
    driven = refused = taken = 0
    most: dict[str, int] = {}
    for k, station in enumerate(range(2, 5002)):
        now = 0.01 * (k + 1)
        ok, _ = open_session(operator(station), rb, now)
        taken += ok
        refused += not ok
        if k % 5 == 0:  # the driver's command every 50 ms
            for event in deliver(rb, driver.send(VelocityCommand(0.3, 0.0), now), now):
                driven += isinstance(event, Accepted)
            rb.poll(now)
        for name, count in state_counts(rb).items():
            most[name] = max(most.get(name, 0), count)
    assert max(most.values()) <= 16, most
    assert driven == 1000  # every command of the driver accepted
    assert 1 in rb.sessions
    # a place frees when a station is idle 5 s: about 15 an idle time, the rest refused
    assert taken < 5000 * 0.05
    assert refused == rb.stations_refused == 5000 - taken
    assert rb.stats.refused["session"] == refused
    assert len(forgotten) >= taken - 15  # each forgotten station's state dropped at once


def test_an_idle_station_holding_control_is_never_forgotten() -> None:
    rb = robot()
    rb.keep_station(lambda station: station == 1)
    assert open_session(operator(1), rb, 0.0)[0]
    for station in range(2, 17):
        assert open_session(operator(station), rb, 0.01 * station)[0]
    # everyone silent for 10 s: the newcomers take the places of the idle ones, not the driver's
    for station in range(17, 32):
        assert open_session(operator(station), rb, 10.0 + 0.01 * station)[0]
    assert 1 in rb.sessions
    assert len(rb.sessions) == 16
    # the places held by busy stations and the driver: the next is refused, and counted
    assert not open_session(operator(40), rb, 10.5)[0]
    assert rb.stations_refused == 1


def test_a_captured_open_is_still_a_replay_once_its_station_is_forgotten() -> None:
    rb = robot()
    victim = operator(7)
    _, captured = open_session(victim, rb, 0.0)
    rb.poll(40.0)  # silent past the session timeout: station 7 forgotten
    assert 7 not in rb.sessions
    assert rb._robot is not None
    assert 7 not in rb._robot._open_stamps
    (event,) = deliver(rb, captured, 40.1)
    assert isinstance(event, Refused)
    assert event.reason == "replay"
    # the station itself opens again (its opens are stamped later)
    assert open_session(victim, rb, 40.2)[0]


def test_a_keys_file_listing_more_stations_than_the_bound_has_a_place_for_each() -> None:
    ring = KeyRing({s: StationKeys(s, KEY, Permissions()) for s in range(1, 21)})
    rb = robot(ring)
    for station in range(1, 21):
        assert open_session(operator(station), rb, 0.01 * station)[0]
    assert len(rb.sessions) == 20


def test_a_station_reopening_after_its_session_expired_keeps_its_handshake() -> None:
    rb = robot()
    op = operator(3)
    assert open_session(op, rb, 0.0)[0]
    # silent 31 s: its session expires while its new handshake is under way
    (reply,) = deliver(rb, op.poll(31.0), 31.0)
    assert isinstance(reply, Reply)
    rb.poll(31.05)
    assert 3 not in rb.sessions
    _, confirm = deliver(op, list(reply.packets), 31.1)
    assert isinstance(confirm, Reply)
    (opened, *_) = deliver(rb, list(confirm.packets), 31.1)
    assert isinstance(opened, SessionOpened)
    assert 3 in rb.sessions


class _Wire:
    """An endpoint that keeps what the robot's driver sent (no socket)."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, data: bytes, address: object = None) -> None:
        self.sent.append(data)

    def send_to(self, data: bytes, source: object) -> None:
        self.sent.append(data)

    def learn_peer(self, source: object) -> None:
        pass


def test_the_driver_keeps_the_addresses_of_open_sessions_only() -> None:
    rb = robot()
    wire = _Wire()
    clock = [0.0]
    driver = LinkDriver(rb, wire, lambda: clock[0], lambda event: None)  # type: ignore[arg-type]
    for batch in range(10):  # 16 stations at a time, each batch 6 s after the last (idle)
        clock[0] = 6.0 * batch
        for k in range(16):
            station = 16 * batch + k + 1
            op = operator(station)
            for packet in op.poll(clock[0]):
                driver._handle(packet, ("127.0.0.1", station))
            (challenge,) = wire.sent[-1:]
            confirm = [e for e in op.receive(challenge, clock[0]) if isinstance(e, Reply)]
            for packet in confirm[0].packets:
                driver._handle(packet, ("127.0.0.1", station))
        assert len(rb.sessions) == 16
        assert set(driver.peers) == set(rb.sessions)
