"""The robot's judgement of a driver's camera picture through a delayed link (sans-I/O,
injected times): a report that arrives ``now`` speaks of frames sent a round trip before, so
a frame counts as missed only if it was sent more than the station's round trip and
:data:`FRAME_IN_FLIGHT` before the report arrived. A moving picture at 0 to 1 s one way is never
judged blind, a frozen one is caught within its bound and a round trip, and a round trip the
station could forge (by holding its echoes) is believed up to the blind bound only."""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field

import pytest

from freelook.config import load_robot
from freelook.link import ReceptionReport
from freelook.robot import BLIND_GRACE, VIDEO_BLIND_GRACE
from freelook.robot._sight import FRAME_IN_FLIGHT, TRIPS_KEPT, DriverSight

CONFIG = load_robot("pioneer3dx")
WATCHDOG = CONFIG.safety.watchdog_timeout
BOUND = WATCHDOG + VIDEO_BLIND_GRACE  # s a picture may be old while frames are sent
FPS = 30.0
REPORT_EVERY = 0.2  # s: the station's reports (every 4th transmission of 0.05 s)
JITTER = 0.05  # s added to each packet's delay, uniformly, in order (as the link shaper)
STATION = 1


@dataclass
class Drive:
    """The robot's sight judging one station across a link ``delay`` s each way."""

    delay: float
    measured: bool = True  # the robot measures the round trip (sessions of the native profile)
    trip_told: float | None = None  # a round trip the station makes the robot measure instead
    seed: int = 59
    blind_at: list[float] = field(default_factory=list)  # robot time of each judged blind
    sees_at: list[float] = field(default_factory=list)

    def run(self, sent: list[float], lost_from: float = math.inf, until: float = 12.0) -> None:
        """Frames go out at ``sent`` (robot time); those sent from ``lost_from`` on never
        arrive; the station reports every 0.2 s until ``until``."""
        draw = random.Random(self.seed)
        sight = DriverSight(WATCHDOG + BLIND_GRACE, BOUND)
        arrivals, last = [], -math.inf
        for t in sent:
            last = max(last, t + self.delay + draw.random() * JITTER)
            if t < lost_from:
                arrivals.append(last)
        events: list[tuple[float, int, float]] = [(t, 0, 0.0) for t in sent]
        last = -math.inf
        for k in range(1, int(until / REPORT_EVERY)):
            at = k * REPORT_EVERY  # the station's clock: the same as the robot's here
            seen = [a for a in arrivals if a <= at]
            age = at - seen[-1] if seen else math.inf
            last = max(last, at + self.delay + draw.random() * JITTER)
            events.append((last, 1, age))
        heapq.heapify(events)
        while events:
            now, kind, age = heapq.heappop(events)
            if kind == 0:
                sight.frame_sent(now)
                continue
            if self.measured:  # the echoes' round trip, with both ways' jitter
                trip = 2 * self.delay + draw.random() * 2 * JITTER
                sight.round_trip(STATION, trip if self.trip_told is None else self.trip_told)
            change = sight.report(STATION, ReceptionReport(0.05, age, 0.0), now)
            if change is not None:
                (self.blind_at if change.blind else self.sees_at).append(now)
        self.sight = sight


def frames(start: float, end: float) -> list[float]:
    return [start + i / FPS for i in range(int((end - start) * FPS))]


DELAYS = [0.0, 0.25, 0.5, 1.0]


@pytest.mark.parametrize("delay", DELAYS)
def test_a_moving_picture_through_delay_is_never_judged_blind(delay: float) -> None:
    # the camera pauses for 2 s (a radio with no room, the transmission switched off): the
    # station's picture ages far past its bound, and when the frames come again the first
    # reports still speak of the pause; a frame still in flight is not missed
    drive = Drive(delay)
    drive.run(frames(0.0, 3.0) + frames(5.0, 10.0))
    assert drive.blind_at == [], (delay, drive.blind_at)
    assert drive.sight.sees(STATION)


@pytest.mark.parametrize("delay", [0.5, 1.0])
def test_without_the_round_trip_the_frames_in_flight_were_taken_for_missed(delay: float) -> None:
    # the judgement as it was (and as it stays on a link that measures no round trip): the
    # same moving picture is judged blind when the camera comes back, once the round trip
    # passes FRAME_IN_FLIGHT (at 0.25 s one way it just does not)
    drive = Drive(delay, measured=False)
    drive.run(frames(0.0, 3.0) + frames(5.0, 10.0))
    assert drive.blind_at, delay
    assert all(5.0 < t < 5.0 + 2 * delay + FRAME_IN_FLIGHT + 0.5 for t in drive.blind_at)


@pytest.mark.parametrize("delay", DELAYS)
@pytest.mark.parametrize("measured", [True, False])
def test_a_frozen_picture_is_caught_within_its_bound_and_a_round_trip(
    delay: float, measured: bool
) -> None:
    # frames go on being sent, and from 4 s on none reaches the station: its picture froze
    drive = Drive(delay, measured=measured)
    drive.run(frames(0.0, 12.0), lost_from=4.0)
    froze = 4.0 + delay  # when the station's picture stopped changing (robot time, as here)
    assert len(drive.blind_at) == 1, drive.blind_at
    caught = drive.blind_at[0] - froze
    assert caught <= BOUND + 2 * delay + 2 * JITTER + REPORT_EVERY, (delay, caught)
    assert caught > BOUND, (delay, caught)  # not before its bound
    assert not drive.sight.sees(STATION)


@pytest.mark.parametrize("delay", DELAYS)
def test_a_forged_round_trip_is_believed_up_to_the_blind_bound(delay: float) -> None:
    # a station holding its echoes makes the robot measure 1000 s: believed as 2 s (the
    # telemetry's blind bound), counted, and the frozen picture is still caught, later by the
    # difference at most
    drive = Drive(delay, trip_told=1000.0)
    drive.run(frames(0.0, 12.0), lost_from=4.0)
    sight = drive.sight
    assert sight.max_round_trip == WATCHDOG + BLIND_GRACE
    assert sight.trips_capped > 0
    assert len(drive.blind_at) == 1, drive.blind_at
    assert drive.blind_at[0] - (4.0 + delay) <= BOUND + sight.max_round_trip + REPORT_EVERY + 0.1


def test_a_round_trip_that_is_not_a_number_is_not_believed() -> None:
    sight = DriverSight(2.0, 1.0)
    for trip in (math.nan, math.inf, -1.0):
        sight.round_trip(STATION, trip)
    assert sight.trip(STATION) == 0.0  # judged as before any measure
    for trip in (0.6, 0.4, 0.5):
        sight.round_trip(STATION, trip)
    assert sight.trip(STATION) == 0.4  # the shortest: jitter only lengthens
    for _ in range(TRIPS_KEPT):
        sight.round_trip(STATION, 0.9)
    assert sight.trip(STATION) == 0.9  # the link grew slower: the old ones are forgotten
    sight.forget(STATION)
    assert sight.trip(STATION) == 0.0  # a new session measures afresh
