"""Process behaviour: clean exit on SIGINT with the port freed; a token off loopback."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from freelook.operator import web_access
from freelook.web import BrowserSlot, create_app


def test_sim_exits_cleanly_on_sigint(tmp_path: Path) -> None:
    from conftest import start_sim  # type: ignore[import-not-found]

    sim = start_sim(tmp_path, record=True)
    port = int(sim.url.rsplit(":", 1)[1].strip("/"))
    code = sim.stop()
    assert code == 0
    assert sim.process.stdout is not None
    tail = sim.process.stdout.read()
    sim.process.stdout.close()
    assert "freelook: stopped" in tail
    assert "recorded" in tail
    with socket.socket() as s:  # the web port is free again
        s.bind(("127.0.0.1", port))
    assert sim.record is not None
    assert sim.record.stat().st_size > 1000


class _Backend:
    def hello(self) -> dict[str, object]:
        return {"type": "hello"}

    async def handle_browser(self, message: dict[str, object], slot: BrowserSlot) -> None:
        return None

    def attach(self, slot: BrowserSlot) -> None:
        return None

    def detach(self, slot: BrowserSlot) -> None:
        return None


def _status(app: object, query: str = "") -> int:
    """GET / straight through the ASGI interface."""
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "raw_path": b"/",
        "query_string": query.encode(),
        "headers": [],
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
        "root_path": "",
        "http_version": "1.1",
    }
    asyncio.run(app(scope, receive, send))  # type: ignore[operator]
    return int(sent[0]["status"])  # type: ignore[call-overload]


def test_listening_beyond_loopback_requires_the_token() -> None:
    assert web_access("127.0.0.1") is None
    assert web_access("::1") is None
    token = web_access("0.0.0.0")
    assert token
    guarded = create_app(_Backend(), token)
    assert _status(guarded) == 403
    assert _status(guarded, "token=wrong") == 403
    assert _status(guarded, f"token={token}") == 200
    assert _status(create_app(_Backend(), None)) == 200
