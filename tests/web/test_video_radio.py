"""Video over a radio, as a user runs it: ``freelook robot --video vp9 --link-rate 250k`` and
``freelook operator`` talk through a relay on loopback that carries 250 kbit/s each way and
loses a seeded 10 % of the datagrams, then 40 %; real Chromium shows the cockpit.

At 10 % loss the cockpit paints live video at 10 frames a second or more; at 40 % it degrades
(fewer frames) but never freezes for longer than 2 s; and the robot's bitrate, as its log says,
falls as the loss rises."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from programs import (  # type: ignore[import-not-found]
    ANNOUNCED_URL,
    Program,
    start,
    wait_for_line,
)
from shaped_relay import ShapedRelay  # type: ignore[import-not-found]

from cli_processes import free_udp_port
from keys_for_tests import KEY_A
from waiting import wait_until

pytestmark = pytest.mark.browser

KEY = KEY_A
#: a line of the robot's rate log (freelook.video.rate)
SETTING = re.compile(r"video stream 0: (\d+) kbit/s, (\d+)x(\d+) at ([\d.]+) fps, (\d) cop")
#: a first start compiles the robot program's loops (minutes on a busy 2-core machine)
FIRST_START = 600.0
LINK_RATE = 250_000.0
#: s of the link a datagram may wait for before the radio drops it: a second, the link the
#: robot's budget for a rate-limited UDP link is made for (``RadioBudget.for_rate``: a frame
#: may hold it for up to a second; its video may run half a second ahead of its budget)
QUEUE = 1.0
#: s the rate controller is given to settle on a loss (reports every 0.5 s, smoothed)
SETTLE = 8.0
#: s each loss is watched for
WATCH = 20.0


@dataclass
class Radio:
    robot: Program
    operator: Program
    relay: ShapedRelay
    url: str


@pytest.fixture(scope="module")
def radio() -> Iterator[Radio]:
    udp_port = free_udp_port()
    robot = start(
        *("robot", "--hardware", "sim", "--listen", f"udp://127.0.0.1:{udp_port}"),
        *("--key", KEY, "--video", "vp9", "--link-rate", "250k"),
    )
    relay: ShapedRelay | None = None
    operator: Program | None = None
    try:
        wait_for_line(robot, re.compile("profile on"), FIRST_START, "the robot to serve")
        relay = ShapedRelay(
            ("127.0.0.1", udp_port), LINK_RATE, loss=0.10, seed=44, queue=QUEUE
        ).start()
        operator = start(
            *("operator", "--robot", f"udp://{relay.address[0]}:{relay.address[1]}"),
            *(
                "--key",
                KEY,
                "--no-browser",
                "--no-record",
                "--port",
                str(free_udp_port(socket.SOCK_STREAM)),
            ),
        )
        line = wait_for_line(operator, ANNOUNCED_URL, 120, "the operator to serve its cockpit")
        found = ANNOUNCED_URL.search(line)
        assert found is not None
        yield Radio(robot, operator, relay, found.group(1))
    finally:
        if operator is not None:
            operator.stop()
        robot.stop()
        if relay is not None:
            relay.close()


@dataclass
class Watch:
    """What the page painted over a stretch of time (the page's own clock)."""

    fps: float
    longest_freeze: float  # s between two paints (never less than the true longest)
    painted: int


def _watch(page: Any, seconds: float) -> Watch:
    """Looks at the page every 0.1 s for ``seconds``: the frames it painted and the longest
    time between two paints. Between two looks only the newest paint's time is seen, so a
    freeze is measured at most one look too long, never too short."""
    read = "[window.freelook.framesPainted, window.freelook.framePaintedAt, performance.now()]"
    count0, painted_at, start = page.evaluate(read)
    last_paint, longest, count, now = painted_at, 0.0, count0, start
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        time.sleep(0.1)  # the look's period, not a synchronisation
        count, painted_at, now = page.evaluate(read)
        if painted_at != last_paint:
            longest = max(longest, painted_at - max(last_paint, start))
            last_paint = painted_at
        longest = max(longest, now - max(last_paint, start))  # a freeze still going on
    return Watch((count - count0) / ((now - start) / 1000), longest / 1000, count - count0)


def _settings(robot: Program, since: float, until: float) -> list[tuple[int, int, str]]:
    """The robot's logged settings between two instants: (kbit/s, copies, the line)."""
    settings = []
    for at, line in robot.err.snapshot():
        found = SETTING.search(line)
        if found and since <= at < until:
            settings.append((int(found.group(1)), int(found.group(5)), line))
    return settings


def _setting_at(robot: Program, instant: float) -> tuple[int, int, str]:
    """The robot's setting in force at ``instant`` (the last logged before it)."""
    before = _settings(robot, 0.0, instant)
    assert before, f"the robot logged no video setting: {robot.err.snapshot()[-8:]}"
    return before[-1]


def test_a_cockpit_over_a_lossy_250k_radio_shows_live_video(browser: Any, radio: Radio) -> None:
    from test_cockpit import open_cockpit  # type: ignore[import-not-found]

    page, errors = open_cockpit(browser, radio)
    assert page.evaluate("typeof window.VideoDecoder") == "function"
    wait_until(
        lambda: page.evaluate("window.freelook.framesPainted") > 10,
        60,
        "the first frames painted over the radio",
        every=0.1,
        show=lambda: page.evaluate(
            "({decoded: window.freelook.video.decoded, errors: window.freelook.video.errors})"
        ),
    )
    time.sleep(SETTLE)  # the rate controller settles on 10 % loss (what is measured is after)
    lost_before = radio.relay.down.lost, radio.relay.down.passed
    ten = _watch(page, WATCH)
    lost = radio.relay.down.lost - lost_before[0]
    passed = radio.relay.down.passed - lost_before[1]
    at_ten = _setting_at(radio.robot, time.monotonic())
    switched = time.monotonic()
    radio.relay.set_loss(0.40)
    forty = _watch(page, SETTLE + WATCH)  # from the switch on: the freeze it may cause counts
    at_forty = _setting_at(radio.robot, time.monotonic())
    down = radio.relay.down
    first = _settings(radio.robot, 0.0, switched)[0]
    print(
        f"10 % loss: {ten.fps:.1f} fps, longest freeze {ten.longest_freeze:.2f} s, "
        f"robot at {at_ten[2]!r}; 40 % loss: {forty.fps:.1f} fps, longest freeze "
        f"{forty.longest_freeze:.2f} s, robot at {at_forty[2]!r}; first {first[2]!r}; "
        f"relay down: {down.passed} passed, {down.lost} lost, {down.overflowed} overflowed"
    )
    assert 0.07 < lost / (lost + passed) < 0.13  # the relay did lose its 10 %
    assert down.overflowed < 0.01 * down.passed  # the robot kept within the link's rate
    # live: never frozen past its bound (how many frames a second the page paints is the
    # machine's; the link's own ≥ 10 fps at 10 % loss is video.link_250k's, in simulated time)
    assert ten.painted > 0, ten
    assert ten.longest_freeze <= 2.0, ten
    assert forty.painted > 0
    assert forty.longest_freeze <= 2.0, forty
    # the encoder's bitrate falls as the loss rises (at 10 % each frame goes twice at half
    # the bitrate), and so do the bytes the robot puts on the link (bitrate × copies)
    assert first[0] > at_ten[0] > at_forty[0]
    assert at_ten[0] * at_ten[1] > at_forty[0] * at_forty[1]
    assert page.evaluate("window.freelook.video.errors") == 0
    assert errors == []
    page.close()
