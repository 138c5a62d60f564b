"""A station whose session requests go unanswered says so; the robot logs what it refused, per
source, at a rate a flood cannot raise. Sans-I/O: two link sessions and the test's clock."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from freelook.link import (
    SESSION_REFUSALS,
    Heartbeat,
    KeyRing,
    LinkSession,
    NativeCodec,
    RefusalLog,
    Refused,
    Reply,
)

ROBOT_KEY = bytes(range(32))
WRONG_KEY = bytes(range(1, 33))
STATION = ("127.0.0.1", 40001)
STEP = 0.05


def robot(keys: KeyRing | None = None) -> LinkSession:
    return LinkSession(
        NativeCodec(ROBOT_KEY, sender=100),
        spacing=STEP,
        periodic=lambda now: [Heartbeat()],
        role="robot",
        keys=keys,
        nonce=b"robot",
    )


def operator(key: bytes, station: int = 1) -> LinkSession:
    return LinkSession(NativeCodec(key, sender=station), spacing=STEP, role="operator", nonce=b"op")


def run(
    op: LinkSession, rb: LinkSession, start: float, until: float, robot_on: bool = True
) -> tuple[list[tuple[float, str | None]], list[Refused]]:
    """Both ends on one clock from ``start`` to ``until``: the operator's status at every
    step, and what the robot refused. ``robot_on`` False: the robot hears nothing."""
    statuses: list[tuple[float, str | None]] = []
    refused: list[Refused] = []
    now = start
    while now < until:
        for packet in op.poll(now) if robot_on else ():
            for event in rb.receive(packet, now, STATION):
                if isinstance(event, Reply):
                    for answer in event.packets:
                        op.receive(answer, now, ("127.0.0.1", 47001))
                elif isinstance(event, Refused):
                    refused.append(event)
        if robot_on:
            for answer in rb.poll(now):
                op.receive(answer, now, ("127.0.0.1", 47001))
        else:
            op.poll(now)
        statuses.append((now, op.session_status(now)))
        now = round(now + STEP, 6)
    return statuses, refused


def test_a_wrong_key_goes_unanswered_and_the_station_says_so() -> None:
    op, rb = operator(WRONG_KEY), robot()
    statuses, refused = run(op, rb, 0.0, 4.0)
    seen = dict(statuses)
    assert seen[0.0] == "opening"
    assert all(s == "opening" for t, s in statuses if t < op.unanswered_after)
    assert all(s == "unanswered" for t, s in statuses if t >= op.unanswered_after)
    assert op.unanswered_requests >= 3  # one request a second, none answered
    assert not rb.sessions
    # the robot refused every request, and knows where each came from
    assert refused
    assert {r.reason for r in refused} == {"auth"}
    assert {r.source for r in refused} == {STATION}


def test_an_unknown_station_id_goes_unanswered_too() -> None:
    ring = KeyRing.from_mapping({"stations": {"1": {"key": ROBOT_KEY.hex()}}})
    op, rb = operator(ROBOT_KEY, station=7), robot(keys=ring)
    statuses, refused = run(op, rb, 0.0, 3.0)
    assert statuses[-1][1] == "unanswered"
    assert {r.reason for r in refused} == {"session"}


def test_the_right_key_opens_and_a_robot_gone_silent_goes_unanswered_again() -> None:
    op, rb = operator(ROBOT_KEY), robot()
    statuses, refused = run(op, rb, 0.0, 3.0)
    assert statuses[-1][1] == "open"
    assert all(s == "open" for t, s in statuses if t >= 0.1)
    assert op.unanswered_requests == 0
    assert refused == []
    # the robot stops answering (it died, or its radio did): the station asks again, unanswered
    later, _ = run(op, rb, 3.0, 8.0, robot_on=False)
    assert later[-1][1] == "unanswered"
    # and it comes back: the session opens again
    back, _ = run(op, rb, 8.0, 10.0)
    assert back[-1][1] == "open"


def test_without_sessions_there_is_no_status() -> None:
    assert robot().session_status(5.0) is None
    plain = LinkSession(NativeCodec(ROBOT_KEY, sender=1), spacing=STEP)
    assert plain.session_status(5.0) is None


# -- the robot's log of refusals -----------------------------------------------------------------


def test_the_first_refusal_of_a_source_is_logged_at_once_then_one_line_per_period() -> None:
    log = RefusalLog(period=10.0)
    first = log.note(STATION, "auth", "tag does not verify (station 1, seq 0)", 0.0)
    assert first is not None
    assert "127.0.0.1:40001" in first
    assert "tag does not verify" in first
    assert "wrong key or station id" in first
    lines = [log.note(STATION, "auth", "tag does not verify", t / 10) for t in range(1, 100)]
    assert lines == [None] * 99  # 99 more within 10 s: no line
    line = log.note(STATION, "auth", "tag does not verify", 10.0)
    assert line is not None
    assert "refused 100 more packets from 127.0.0.1:40001" in line
    assert "auth 100" in line
    assert log.note(STATION, "auth", "tag does not verify", 10.5) is None


def test_each_source_has_its_own_line_and_normal_losses_are_not_logged() -> None:
    log = RefusalLog(period=10.0)
    assert log.note(("127.0.0.1", 1), "session", "no key for station 7", 0.0) is not None
    assert log.note(("127.0.0.1", 2), "auth", "tag does not verify", 0.1) is not None
    assert log.note(("::1", 3), "auth", "tag does not verify", 0.2) == (
        "refused packets from [::1]:3 (auth: tag does not verify): no session here for them "
        "(a wrong key or station id, or a session from before a restart); they get no answer"
    )
    # late, duplicated or corrupted packets of a station in session are the radio's, not news
    for reason in ("replay", "crc", "malformed", "value"):
        assert reason not in SESSION_REFUSALS
        assert log.note(("127.0.0.1", 4), reason, "stale", 0.3) is None


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.sampled_from(sorted(SESSION_REFUSALS))),
        max_size=400,
    ),
    st.integers(1, 30),
)
def test_a_flood_from_many_sources_gives_a_bounded_log(
    packets: list[tuple[int, str]], max_sources: int
) -> None:
    """Ten packets a second from up to 21 sources: a source's first refusal is logged at once;
    while it is remembered, its lines are a period apart; the log remembers at most its bound."""
    log = RefusalLog(period=10.0, max_lines=100, max_sources=max_sources)
    lines: dict[int, list[float]] = {}
    for k, (port, reason) in enumerate(packets):
        now = k * 0.1
        line = log.note(("127.0.0.1", port), reason, "x", now)
        if port not in lines:
            assert line is not None  # never seen: logged at once
        if line is not None:
            lines.setdefault(port, []).append(now)
        assert log.remembered <= max_sources
    if max_sources >= 21:  # nothing forgotten: a period between any source's lines
        for times in lines.values():
            assert all(b - a >= 10.0 - 1e-9 for a, b in itertools.pairwise(times))


def test_many_sources_give_at_most_max_lines_a_period_and_the_rest_come_later() -> None:
    """A flood from forged source addresses: 1000 sources in a second give 8 lines; a source
    held back is reported, with its count, when its turn comes in a later period."""
    log = RefusalLog(period=10.0, max_lines=8)
    first = [log.note(("127.0.0.1", p), "auth", "x", p / 1000) for p in range(1000)]
    assert sum(line is not None for line in first) == 8
    assert log.held_back == 992
    later = log.note(("127.0.0.1", 999), "auth", "x", 10.5)
    assert later == (
        "refused 2 packets from 127.0.0.1:999 (auth: x): no session here for them (a wrong "
        "key or station id, or a session from before a restart); they get no answer"
    )
