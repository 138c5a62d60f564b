"""Guessing the cockpit's token is throttled per address and said in aggregate: the throttle's
arithmetic, then real HTTP and WebSocket requests on loopback against a real server."""

from __future__ import annotations

import asyncio
import logging
import socket
import urllib.error
import urllib.request

import pytest
import uvicorn
import websockets

from freelook.web import REFUSED_CLOSE_CODE, BrowserSlot, GuessThrottle, create_app
from loopback import alive
from waiting import wait_until_async

TOKEN = "t0ken-for-tests"


def test_a_source_over_its_budget_is_refused_unchecked_until_its_window_passes() -> None:
    throttle = GuessThrottle(budget=3, window=10.0)
    for k in range(3):
        assert not throttle.blocked("a", float(k))
        throttle.failed("a", float(k))
    assert throttle.blocked("a", 3.0)
    assert not throttle.blocked("b", 3.0)  # per source
    assert throttle.blocked("a", 9.9)
    assert not throttle.blocked("a", 10.0)  # the window the failures fell in has passed


def test_refusals_are_reported_in_aggregate_at_most_once_per_period() -> None:
    throttle = GuessThrottle(budget=5, window=10.0, report_every=10.0)
    lines = []
    for k in range(1000):
        now = k * 0.01  # 100 guesses a second for 10 s, from 50 addresses
        source = f"10.0.0.{k % 50}"
        if not throttle.blocked(source, now):
            throttle.failed(source, now)
        line = throttle.report(now)
        if line is not None:
            lines.append(line)
    assert len(lines) == 1  # the first at once, the next not before 10 s
    late = throttle.report(10.0)
    assert late is not None
    assert "refused 999 attempt(s)" in late
    assert "50 source(s)" in late
    assert throttle.report(10.5) is None  # nothing since


def test_the_table_of_sources_is_bounded() -> None:
    throttle = GuessThrottle(budget=2, max_sources=100)
    for k in range(10_000):
        throttle.failed(f"s{k}", 0.0)
    assert len(throttle._sources) <= 100


class _Backend:
    def hello(self) -> dict[str, object]:
        return {"type": "hello"}

    async def handle_browser(self, message: dict[str, object], slot: BrowserSlot) -> str | None:
        return None

    def attach(self, slot: BrowserSlot) -> None:
        return None

    def detach(self, slot: BrowserSlot) -> None:
        return None


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def test_guessing_the_token_is_throttled_and_logged_in_aggregate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = _Clock()
    throttle = GuessThrottle(budget=20, window=10.0)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(_Backend(), TOKEN, throttle=throttle, clock=clock),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="off",
        )
    )

    async def run() -> None:
        task = asyncio.create_task(server.serve())
        await wait_until_async(
            lambda: alive(task) and server.started, 20, "the web server to start"
        )
        base = f"http://127.0.0.1:{port}"
        try:
            statuses = [
                await asyncio.to_thread(_status, f"{base}/?token=guess{k}") for k in range(30)
            ]
            assert statuses == [403] * 20 + [429] * 10
            # the socket too: refused with the close code, its guess never checked
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws?token=guess") as ws:
                await ws.wait_closed()
                assert ws.close_code == REFUSED_CLOSE_CODE
            # while the window lasts the address is refused even with the token
            assert await asyncio.to_thread(_status, f"{base}/?token={TOKEN}") == 429
            clock.now = 10.0  # the window passes
            assert await asyncio.to_thread(_status, f"{base}/?token={TOKEN}") == 200
        finally:
            server.should_exit = True
            await task

    with caplog.at_level(logging.WARNING, logger="freelook.web._app"):
        asyncio.run(run())
    lines = [r.getMessage() for r in caplog.records if r.name == "freelook.web._app"]
    assert len(lines) == 1, lines  # 31 refusals, one line (the next not before 10 s)
    assert "wrong or missing secret from 1 source(s) (127.0.0.1)" in lines[0]
