"""A session through a long round trip opens once and stays open (sans-I/O sessions on an
injected clock, the delays the test sets): the station's opens are not retried every
``reopen_after`` against a challenge a round trip away (each retry waits twice the one before,
up to 8 times), and a session just opened is not
taken for a silent one while the robot's first packet of it is still on its way. A session
that goes silent is still asked to open again a ``reopen_after`` after its last packet."""

from __future__ import annotations

import random

import pytest

from freelook.link import Heartbeat, LinkSession, NativeCodec, SessionOpened, derive_key

KEY = derive_key("session open delay test passphrase")
JITTER = 0.05


class Link:
    """A robot end and an operator end, ``delay`` s each way plus a uniform 0…0.05 s."""

    def __init__(self, delay: float, seed: int) -> None:
        self.delay = delay
        self.rng = random.Random(seed)
        self.robot = LinkSession(
            NativeCodec(KEY, sender=100), spacing=0.05, role="robot", nonce=b"r",
            periodic=lambda now: [Heartbeat()],
        )  # fmt: skip
        self.operator = LinkSession(
            NativeCodec(KEY, sender=7), spacing=0.05, role="operator", nonce=b"o",
            periodic=lambda now: [Heartbeat()],
        )  # fmt: skip
        self.in_flight: list[tuple[float, str, bytes]] = []
        self.now = 0.0
        self.opened: dict[str, list[float]] = {"robot": [], "operator": []}
        self.robot_mute = False  # the robot's packets are lost

    def send(self, to: str, packet: bytes) -> None:
        if to == "operator" and self.robot_mute:
            return
        due = self.now + self.delay + self.rng.uniform(0.0, JITTER)
        self.in_flight.append((due, to, packet))

    def run(self, seconds: float) -> None:
        end_at = self.now + seconds
        while self.now < end_at:
            self.now = now = round(self.now + 0.01, 6)
            due = [p for p in self.in_flight if p[0] <= now]
            self.in_flight = [p for p in self.in_flight if p[0] > now]
            for _, to, packet in due:
                end = self.robot if to == "robot" else self.operator
                for event in end.receive(packet, now, source="peer"):
                    if isinstance(event, SessionOpened):
                        self.opened[to].append(now)
                    for reply in getattr(event, "packets", ()):
                        self.send("operator" if to == "robot" else "robot", reply)
            for packet in self.robot.poll(now):
                self.send("operator", packet)
            for packet in self.operator.poll(now):
                self.send("robot", packet)


# (a round trip up to 8 s opens: 2 s each way is a satellite hop's, or a relay's far away)
@pytest.mark.parametrize("delay", [0.01, 0.25, 0.5, 0.75, 0.9, 1.25, 2.0, 3.5])
@pytest.mark.parametrize("seed", [591, 592, 593])
def test_through_a_long_round_trip_the_session_opens_once(delay: float, seed: int) -> None:
    link = Link(delay, seed)
    link.run(30.0)
    trip = 2 * delay
    # retries at 1, 3, 7, 15 s (then every 8 s): the first open whose challenge comes back
    # before the next one goes out is answered
    assert len(link.opened["operator"]) == 1, (delay, link.opened)
    opens, gaps = (0.0, 1.0, 3.0, 7.0, 15.0), (1.0, 2.0, 4.0, 8.0, 8.0)
    answered = next(t for t, gap in zip(opens, gaps, strict=True) if gap > trip + 3 * JITTER)
    assert link.opened["operator"][0] <= answered + trip + 2 * JITTER + 0.1, link.opened
    assert len(link.opened["robot"]) == 1, (delay, link.opened)
    assert link.operator.session_status(link.now) == "open"


@pytest.mark.parametrize("delay", [0.01, 0.5])
def test_a_session_gone_silent_is_opened_again(delay: float) -> None:
    link = Link(delay, 594)
    link.run(6.0)
    opener = link.operator._operator
    assert opener is not None
    assert opener.session is not None
    assert opener.unanswered_since is None
    link.robot_mute = True  # the robot's packets stop coming
    link.run(3.0)
    heard = opener.session.last_rx
    assert heard <= 6.0 + delay + JITTER + 0.01  # the last packets sent before the mute
    # the first open a reopen_after after the last packet (no round trip's grace: the session
    # had spoken), the next one 1 s later, then 2 s apart, but never closer than one and a
    # half of the last handshake's round trip (through 0.5 s each way, 1.5 s): two in the 3 s
    # at 0.01 s each way, one at 0.5 s
    assert opener.unanswered_since is not None
    assert heard + 1.0 <= opener.unanswered_since <= heard + 1.0 + 0.06
    assert opener.unanswered == (2 if delay < 0.3 else 1)
    assert opener.last_open is not None
    if opener.unanswered == 2:
        spacing = opener.last_open - opener.unanswered_since
        assert spacing >= max(1.0, 1.5 * opener.handshake_trip) - 0.011
    link.robot_mute = False
    link.run(6.0)
    assert link.operator.session_status(link.now) == "open"
