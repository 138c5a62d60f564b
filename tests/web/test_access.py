"""Who may use the cockpit: the launch's token on the page and the socket, the socket's Origin
checked against the server's own, refusals before ``hello``; malformed or refused browser
messages answered with an error while the socket stays open."""

from __future__ import annotations

import asyncio
import json
import math
import socket
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import websockets
from websockets.exceptions import ConnectionClosed

from freelook.errors import ConfigError
from freelook.launch import SessionOptions, web_access
from freelook.web import REFUSED_CLOSE_CODE, BrowserSlot, create_app, host_allowed, origin_allowed
from loopback import alive
from waiting import wait_until_async

TOKEN = "t0ken-for-tests"


class _Backend:
    """Says hello, records what it was given, refuses messages of type "bad"."""

    def __init__(self) -> None:
        self.handled: list[dict[str, Any]] = []
        self.attached = 0

    def hello(self) -> dict[str, object]:
        return {"type": "hello"}

    async def handle_browser(self, message: dict[str, Any], slot: BrowserSlot) -> str | None:
        self.handled.append(message)
        return "refused: unknown message type 'bad'" if message.get("type") == "bad" else None

    def attach(self, slot: BrowserSlot) -> None:
        self.attached += 1

    def detach(self, slot: BrowserSlot) -> None:
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def _serving(backend: _Backend) -> AsyncIterator[int]:
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(backend, TOKEN),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="off",
            ws_per_message_deflate=False,
        )
    )
    task = asyncio.create_task(server.serve())
    await wait_until_async(lambda: alive(task) and server.started, 20, "the web server to start")
    try:
        yield port
    finally:
        server.should_exit = True
        await task


def _run(body: Callable[[int, _Backend], Awaitable[None]]) -> _Backend:
    backend = _Backend()

    async def main() -> None:
        async with _serving(backend) as port:
            await body(port, backend)

    asyncio.run(main())
    return backend


def _json(frame: str | bytes) -> dict[str, Any]:
    assert isinstance(frame, bytes)
    assert frame[:1] == b"\x01"
    return json.loads(frame[1:])  # type: ignore[no-any-return]


async def _refused(url: str, origin: str | None) -> int | None:
    """Connect and try to drive: the close code, or None when the socket was served."""
    headers = {"Origin": origin} if origin is not None else None
    async with websockets.connect(url, additional_headers=headers) as ws:
        try:
            await ws.send(json.dumps({"type": "axes", "forward": 1.0}))
            await asyncio.wait_for(ws.recv(), 5)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd is not None else None
    return None


@pytest.mark.parametrize(
    ("origin", "host", "secure", "allowed"),
    [
        ("http://127.0.0.1:8080", "127.0.0.1:8080", False, True),
        ("http://localhost:8080", "127.0.0.1:8080", False, True),
        ("http://[::1]:8080", "localhost:8080", False, True),
        ("https://10.0.0.5:8443", "10.0.0.5:8443", True, True),
        ("http://evil.example", "127.0.0.1:8080", False, False),
        ("http://evil.example:8080", "127.0.0.1:8080", False, False),
        ("http://127.0.0.1:8081", "127.0.0.1:8080", False, False),  # another local server
        ("https://127.0.0.1:8080", "127.0.0.1:8080", False, False),
        ("http://10.0.0.5:8443", "10.0.0.5:8443", True, False),
        ("http://10.0.0.6:8080", "10.0.0.5:8080", False, False),
        ("null", "127.0.0.1:8080", False, False),
        ("http://127.0.0.1:80", "127.0.0.1", False, True),
    ],
)
def test_origin_is_the_servers_own(origin: str, host: str, secure: bool, allowed: bool) -> None:
    assert origin_allowed(origin, host, secure) is allowed


def test_socket_without_the_token_or_from_a_foreign_origin_is_refused_before_hello() -> None:
    async def body(port: int, backend: _Backend) -> None:
        base = f"ws://127.0.0.1:{port}/ws"
        assert await _refused(base, None) == REFUSED_CLOSE_CODE
        assert await _refused(base + "?token=wrong", None) == REFUSED_CLOSE_CODE
        assert await _refused(base, f"http://127.0.0.1:{port}") == REFUSED_CLOSE_CODE
        foreign = f"{base}?token={TOKEN}"
        assert await _refused(foreign, "http://evil.example") == REFUSED_CLOSE_CODE
        assert await _refused(foreign, f"http://evil.example:{port}") == REFUSED_CLOSE_CODE
        assert await _refused(foreign, f"http://127.0.0.1:{port + 1}") == REFUSED_CLOSE_CODE

    backend = _run(body)
    assert backend.handled == []
    assert backend.attached == 0


def test_socket_with_the_token_from_its_own_page_gets_hello() -> None:
    async def body(port: int, backend: _Backend) -> None:
        url = f"ws://127.0.0.1:{port}/ws?token={TOKEN}"
        for origin in (None, f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            headers = {"Origin": origin} if origin else None
            async with websockets.connect(url, additional_headers=headers) as ws:
                assert _json(await ws.recv()) == {"type": "hello"}

    assert _run(body).attached == 3


def test_malformed_or_refused_messages_get_an_error_and_the_socket_stays_open() -> None:
    replies: list[dict[str, Any]] = []

    async def body(port: int, backend: _Backend) -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws?token={TOKEN}") as ws:
            assert _json(await ws.recv())["type"] == "hello"
            for text in ("{not json", "[1, 2]", "x" * 70_000, json.dumps({"type": "bad"})):
                await ws.send(text)
                replies.append(_json(await asyncio.wait_for(ws.recv(), 5)))
            await ws.send(json.dumps({"type": "mode", "mode": "tank"}))  # still served
            await wait_until_async(
                lambda: len(backend.handled) >= 2, 5, "the mode message at the backend"
            )

    backend = _run(body)
    assert [r["type"] for r in replies] == ["error"] * 4
    assert "malformed JSON" in replies[0]["reason"]
    assert "expected a JSON object" in replies[1]["reason"]
    assert "too long" in replies[2]["reason"]
    assert replies[3]["reason"] == "refused: unknown message type 'bad'"
    assert backend.handled == [{"type": "bad"}, {"type": "mode", "mode": "tank"}]


def test_a_binary_frame_gets_an_error_and_the_socket_stays_open() -> None:
    """The page sends JSON text only: a binary frame (the adversarial campaign sent one) is
    refused with a reason, not a traceback that ends the socket."""
    replies: list[dict[str, Any]] = []

    async def body(port: int, backend: _Backend) -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws?token={TOKEN}") as ws:
            assert _json(await ws.recv())["type"] == "hello"
            await ws.send(b'{"type": "mode", "mode": "tank"}')
            replies.append(_json(await asyncio.wait_for(ws.recv(), 5)))
            await ws.send(json.dumps({"type": "mode", "mode": "tank"}))  # still served
            await wait_until_async(
                lambda: len(backend.handled) >= 1, 5, "the mode message at the backend"
            )

    backend = _run(body)
    assert replies == [
        {"type": "error", "reason": "binary frames are not accepted: send JSON text"}
    ]
    assert backend.handled == [{"type": "mode", "mode": "tank"}]


def test_a_ping_is_answered_at_once_and_a_forged_one_gets_an_error() -> None:
    """The page times its own delay with pings; a ping's ``t`` must be a finite number."""
    replies: list[dict[str, Any]] = []

    async def body(port: int, backend: _Backend) -> None:
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws?token={TOKEN}") as ws:
            assert _json(await ws.recv())["type"] == "hello"
            for text in (
                '{"type": "ping", "t": 1234.5}',
                '{"type": "ping", "t": NaN}',
                '{"type": "ping", "t": Infinity}',
                '{"type": "ping", "t": "soon"}',
                '{"type": "ping", "t": true}',
                '{"type": "ping"}',
            ):
                await ws.send(text)
                replies.append(_json(await asyncio.wait_for(ws.recv(), 5)))

    backend = _run(body)
    pong = replies[0]
    assert pong.pop("type") == "pong"
    assert pong.pop("t") == 1234.5  # the page's stamp echoed
    assert math.isfinite(pong.pop("wire"))  # the station's wire clock beside it
    assert pong == {}
    assert [r["type"] for r in replies[1:]] == ["error"] * 5
    assert all("ping: t must be a finite number" in r["reason"] for r in replies[1:])
    assert backend.handled == []  # answered by the web layer, never the station


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers)


def test_page_needs_the_token_and_a_cookie_keeps_a_reload_working() -> None:
    results: dict[str, Any] = {}

    async def body(port: int, backend: _Backend) -> None:
        base = f"http://127.0.0.1:{port}/"
        get = asyncio.to_thread
        results["none"] = await get(_get, base)
        results["wrong"] = await get(_get, base + "?token=wrong")
        results["token"] = await get(_get, base + f"?token={TOKEN}")
        cookie = results["token"][1]["set-cookie"].split(";", 1)[0]
        results["reload"] = await get(_get, base, {"Cookie": cookie})
        results["static"] = await get(_get, base + "static/cockpit.js")

    _run(body)
    assert results["none"][0] == 403
    assert results["wrong"][0] == 403
    assert results["token"][0] == 200
    assert "httponly" in results["token"][1]["set-cookie"].lower()
    assert "samesite=strict" in results["token"][1]["set-cookie"].lower()
    assert results["reload"][0] == 200
    assert results["static"][0] == 200  # the public front-end code


def test_every_launch_has_its_own_token_and_the_url_carries_it() -> None:
    first = web_access(SessionOptions(host="127.0.0.1", port=8080))
    second = web_access(SessionOptions(host="127.0.0.1", port=8080))
    assert first.token != second.token
    assert len(first.token) >= 32
    assert first.url == f"http://127.0.0.1:8080/?token={first.token}"
    assert first.warnings() == []  # loopback


def test_beyond_loopback_without_tls_warns_loudly(tmp_path: Path) -> None:
    wide = web_access(SessionOptions(host="0.0.0.0", port=8080))
    assert wide.url.startswith("http://127.0.0.1:8080/?token=")
    assert any("WITHOUT TLS" in line for line in wide.warnings())
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text("x")
    key.write_text("x")
    tls = web_access(SessionOptions(host="0.0.0.0", port=8443, certfile=cert, keyfile=key))
    assert tls.url.startswith("https://")
    assert tls.warnings() == []
    with pytest.raises(ConfigError, match="both --certfile and --keyfile"):
        web_access(SessionOptions(host="0.0.0.0", certfile=cert))
    with pytest.raises(ConfigError, match=r"missing\.pem: no such file"):
        web_access(SessionOptions(certfile=tmp_path / "missing.pem", keyfile=key))


# -- names, headers and pages of other sites ---------------------------------------------------


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8080", True),
        ("localhost:8080", True),
        ("[::1]:8080", True),
        ("10.0.0.5:8080", True),  # a URL by address
        ("[fd00::5]", True),
        ("my-robot-pc:8080", True),  # a name given
        ("my-robot-pc.", True),
        ("evil.example:8080", False),  # a rebinding page's own name
        ("127.0.0.1.evil.example", False),
        ("localhost.evil.example:8080", False),
        ("", False),
        ("127.0.0.1:99999", False),
    ],
)
def test_the_host_header_must_name_this_server(host: str, allowed: bool) -> None:
    assert host_allowed(host, {"my-robot-pc"}) is allowed


def _raw_upgrade(port: int, host: str) -> str:
    """The status line a WebSocket upgrade with ``host`` in its ``Host`` header is answered."""
    request = (
        f"GET /ws?token={TOKEN} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request.encode())
        return s.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def test_a_foreign_host_is_refused_even_with_the_token() -> None:
    # a DNS-rebinding page: its name now resolves to this machine, its requests carry it
    results: dict[str, Any] = {}

    async def body(port: int, backend: _Backend) -> None:
        page = f"http://127.0.0.1:{port}/?token={TOKEN}"
        get = asyncio.to_thread
        results["own"] = await get(_get, page)
        results["foreign"] = await get(_get, page, {"Host": f"evil.example:{port}"})
        results["ws own"] = await get(_raw_upgrade, port, f"127.0.0.1:{port}")
        results["ws foreign"] = await get(_raw_upgrade, port, f"evil.example:{port}")

    backend = _run(body)
    assert results["own"][0] == 200
    assert results["foreign"][0] == 421
    assert results["ws own"].startswith("HTTP/1.1 101")
    assert results["ws foreign"].startswith("HTTP/1.1 403")
    assert backend.attached == 1  # the foreign socket never reached the station


def test_every_response_carries_the_security_headers_and_the_pages_a_policy() -> None:
    results: dict[str, Any] = {}

    async def body(port: int, backend: _Backend) -> None:
        base = f"http://127.0.0.1:{port}"
        for name, path in (("page", f"/?token={TOKEN}"), ("station", f"/station?token={TOKEN}")):
            results[name] = await asyncio.to_thread(_get, base + path)
        results["static"] = await asyncio.to_thread(_get, base + "/static/cockpit.js")
        results["refused"] = await asyncio.to_thread(_get, base + "/")

    _run(body)
    for name in ("page", "station", "static", "refused"):
        headers = {k.lower(): v for k, v in results[name][1].items()}
        assert headers["x-frame-options"] == "DENY", name
        assert headers["referrer-policy"] == "no-referrer", name
        assert headers["x-content-type-options"] == "nosniff", name
    for name in ("page", "station"):
        policy = {k.lower(): v for k, v in results[name][1].items()}["content-security-policy"]
        assert "frame-ancestors 'none'" in policy
        assert "script-src 'self' 'sha256-" in policy  # the page's import map, by its hash
        assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]


def test_another_sites_page_cannot_spend_the_budget_and_lock_the_cockpit_out() -> None:
    # 30 wrong tokens from a page elsewhere (its socket's Origin, its requests' Sec-Fetch-Site):
    # refused without counting, so the operator's own page still opens
    results: dict[str, Any] = {}

    async def body(port: int, backend: _Backend) -> None:
        base = f"http://127.0.0.1:{port}"
        codes = []
        for k in range(30):
            codes.append(await _refused(f"ws://127.0.0.1:{port}/ws?token=g{k}", "http://evil.ex"))
            status, _ = await asyncio.to_thread(
                _get, f"{base}/?token=g{k}", {"Sec-Fetch-Site": "cross-site"}
            )
            codes.append(status)
        results["codes"] = codes
        results["own"] = await asyncio.to_thread(_get, f"{base}/?token={TOKEN}")
        results["own ws"] = await _refused(f"ws://127.0.0.1:{port}/ws?token={TOKEN}", None)

    _run(body)
    assert set(results["codes"]) == {REFUSED_CLOSE_CODE, 403}
    assert results["own"][0] == 200
    assert results["own ws"] is None  # served
