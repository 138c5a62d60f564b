"""The cockpit's server holds no connection a client leaves idle: one that sends no request
head within the deadline is closed, a WebSocket upgraded in time stays open past it, and a
WebSocket message larger than a browser message may be is refused before it is buffered."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import websockets
from test_access import TOKEN, _Backend, _free_port  # type: ignore[import-not-found]
from websockets.exceptions import ConnectionClosed

import freelook.web._serve as serve
from freelook.web import MAX_INBOUND, cockpit_server, create_app
from loopback import alive
from waiting import wait_until_async

DEADLINE = 0.5  # s: the head deadline, shortened for the test


@asynccontextmanager
async def _cockpit(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[int]:
    monkeypatch.setattr(serve, "HEAD_TIMEOUT", DEADLINE)
    port = _free_port()
    server = cockpit_server(create_app(_Backend(), TOKEN), "127.0.0.1", port)
    task = asyncio.create_task(server.serve())
    await wait_until_async(lambda: alive(task) and server.started, 20, "the web server to start")
    try:
        yield port
    finally:
        server.should_exit = True
        await task


def _closed_within(port: int, seconds: float, send: bytes = b"") -> bool:
    """Whether the server closes a connection that sends ``send`` and then nothing."""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as s:
        if send:
            s.sendall(send)
        try:
            return s.recv(1024) == b""
        except TimeoutError:
            return False


def test_a_connection_that_sends_no_request_is_closed_and_a_socket_stays_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def main() -> None:
        async with _cockpit(monkeypatch) as port:
            # idle, and a request head that trickles in and never ends
            assert await asyncio.to_thread(_closed_within, port, 10 * DEADLINE)
            assert await asyncio.to_thread(_closed_within, port, 10 * DEADLINE, b"GET / HT")
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws?token={TOKEN}") as ws:
                await ws.recv()  # hello
                await asyncio.sleep(3 * DEADLINE)  # well past the head's deadline
                await ws.send(json.dumps({"type": "ping", "t": 1.0}))
                pong = json.loads((await ws.recv())[1:])
                assert (pong["type"], pong["t"]) == ("pong", 1.0)

    asyncio.run(main())


def test_a_websocket_message_beyond_the_limit_is_refused_before_it_is_buffered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def main() -> None:
        async with _cockpit(monkeypatch) as port:
            url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
            async with websockets.connect(url, max_size=None) as ws:
                await ws.recv()
                await ws.send("x" * (MAX_INBOUND + 10))  # too long, still within the frame cap
                reply = json.loads((await ws.recv())[1:])
                assert reply["type"] == "error"
                assert "too long" in reply["reason"]
                await ws.send("x" * (16 * MAX_INBOUND))  # 1 MiB: the server closes
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.recv()
                assert closed.value.rcvd is not None
                assert closed.value.rcvd.code == 1009  # message too big

    asyncio.run(main())
