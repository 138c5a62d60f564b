"""The campaign's cockpit-server probe: a real ``freelook sim`` process's HTTP server, attacked
over raw TCP on loopback as a DNS-rebinding page, an idle client and another site's page would.

- Host headers: the page and the socket's upgrade, with the right token, under names that are
  not this server's (a rebinding page's own), each must be refused (421).
- Security headers: the page must carry its Content-Security-Policy, ``X-Frame-Options``,
  ``Referrer-Policy`` and ``nosniff``.
- Idle connections: sockets that never send a request head, or trickle one a byte a second,
  must be closed by the head deadline (``HEAD_TIMEOUT``); those still open after it are counted.
- Large messages: on an authorised socket, a ping padded past the message limit (refused with
  an error) and past the protocol's frame limit (the socket closed) must not be answered.
- Another site's page: wrong tokens sent with a foreign ``Origin`` or ``Sec-Fetch-Site:
  cross-site`` (more than the wrong-token budget), then the real token from the same address:
  the operator must not be locked out.

An unauthorised effect is any of these let through; the control is the real token under the
server's own name served (the page 200, the socket 101). A crash is the process ending or
printing a traceback.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import random
import re
import secrets
import time
from dataclasses import dataclass

from tools.attack._tally import ProcessUnderAttack, Tally

__all__ = ["attack_cockpit_server"]

START = 120.0  # s: a bound for the sim to start (numba compiles on a first run)
_URL = re.compile(r"open (https?://\S+)")
#: names a rebinding page's requests carry (its own), with and without the server's port
_FOREIGN_HOSTS = (
    "evil.example",
    "rebind.attacker.test",
    "127.0.0.1.nip.io",
    "localhost.evil.example",
    "xn--80ak6aa92e.com",
    "",
)
_HEADERS = (
    "content-security-policy",
    "x-frame-options",
    "referrer-policy",
    "x-content-type-options",
)


@dataclass(frozen=True)
class Server:
    """Where the cockpit listens and its token."""

    port: int
    token: str


async def _request(port: int, head: str, timeout: float = 5.0) -> tuple[int, dict[str, str]]:
    """Send one request head to 127.0.0.1:``port``; the status and headers of the answer (0
    when the server closed without one)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode("latin-1"))
        await writer.drain()
        raw = b""
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, TimeoutError):
            raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()
    lines = raw.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return 0, {}
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if value:
            headers[name.strip().lower()] = value.strip()
    return status, headers


def _page(host: str, token: str, extra: str = "") -> str:
    return f"GET /?token={token} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n"


def _upgrade(host: str, token: str, extra: str = "") -> str:
    key = base64.b64encode(secrets.token_bytes(16)).decode()
    return (
        f"GET /ws?token={token} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"{extra}\r\n"
    )


async def _hosts(server: Server, tally: Tally) -> None:
    """Foreign Host headers with the token (each refused), then the server's own (served), and
    the security headers on the page."""
    own = f"127.0.0.1:{server.port}"
    for name in _FOREIGN_HOSTS:
        for host in dict.fromkeys((name, f"{name}:{server.port}")):
            for kind, head in (
                ("foreign Host, the page", _page(host, server.token)),
                ("foreign Host, the socket", _upgrade(host, server.token)),
            ):
                tally.tried(kind)
                status, _ = await _request(server.port, head)
                if status in (101, 200):
                    tally.effect(f"{kind} {host!r} with the token was served ({status})")
    tally.tried("own Host (control)", 2)
    status, headers = await _request(server.port, _page(own, server.token))
    upgraded, _ = await _request(server.port, _upgrade(own, server.token))
    if status != 200 or upgraded != 101:
        tally.effect(
            f"the real token under the server's own name: page {status}, socket {upgraded}"
        )
    else:
        tally.notes.append("the real token under the server's own name served (200, 101)")
    missing = [name for name in _HEADERS if name not in headers]
    tally.tried("security headers", len(_HEADERS))
    if missing:
        tally.effect(f"the page without {', '.join(missing)}")
    elif headers.get("x-frame-options", "").upper() != "DENY":
        tally.effect(f"X-Frame-Options {headers['x-frame-options']!r}, not DENY")


async def _idle(port: int, count: int, deadline: float, tally: Tally) -> None:
    """``count`` connections, half silent and half trickling a request head a byte a second;
    after ``deadline`` seconds those still open are counted (each an effect's worth)."""
    opened = time.monotonic()
    closed_at: list[float] = []

    async def one(trickle: bool) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
        try:
            for i in range(int(deadline) + 1):
                if trickle and not writer.is_closing():
                    with contextlib.suppress(ConnectionError):
                        writer.write(head[i : i + 1])
                with contextlib.suppress(TimeoutError):
                    if await asyncio.wait_for(reader.read(1), 1.0) == b"":
                        closed_at.append(time.monotonic() - opened)
                        return
                    # an answer (408, 503): keep reading until it closes
        except ConnectionError:
            closed_at.append(time.monotonic() - opened)
        finally:
            writer.close()

    trickles = [i % 2 == 1 for i in range(count)]
    tally.tried("idle connection", trickles.count(False))
    tally.tried("trickling request head", trickles.count(True))
    await asyncio.gather(*(one(t) for t in trickles))
    still = count - len(closed_at)
    if still:
        tally.effect(f"{still} of {count} idle connections still open after {deadline:.0f} s")
    longest = max(closed_at, default=0.0)
    tally.notes.append(
        f"{len(closed_at)} of {count} idle or trickling connections closed by the server, "
        f"the last after {longest:.1f} s; {still} still open after {deadline:.0f} s"
    )


async def _large(server: Server, tally: Tally) -> None:
    """Pings padded past the message limit and past the frame limit on an authorised
    socket: neither may be answered with a pong."""
    import websockets

    from freelook.web import MAX_INBOUND

    url = f"ws://127.0.0.1:{server.port}/ws?token={server.token}"
    for kind, size in (
        ("message over the limit", MAX_INBOUND + 1024),
        ("message over the frame limit", 4 * MAX_INBOUND + 1024),
        ("message of 4 MiB", 4 << 20),
    ):
        tally.tried(kind)
        answered, closed = False, False
        async with websockets.connect(url, max_size=None) as ws:
            try:
                await ws.send(json.dumps({"type": "ping", "t": 1.5, "pad": "x" * size}))
                await ws.send(json.dumps({"type": "ping", "t": 2.5}))  # the control: answered
                end = time.monotonic() + 5.0
                while time.monotonic() < end:
                    frame = await asyncio.wait_for(ws.recv(), end - time.monotonic())
                    if isinstance(frame, bytes) and frame[:1] == b"\x01":
                        message = json.loads(frame[1:])
                        if message.get("type") == "pong":
                            if message.get("t") == 1.5:
                                answered = True
                            else:
                                break
            except (websockets.ConnectionClosed, TimeoutError):
                closed = True
        if answered:
            tally.effect(f"a {kind} ({size:,} characters) was taken")
        tally.notes.append(f"{kind} ({size:,} characters): {'closed' if closed else 'refused'}")


async def _foreign_page(server: Server, draw: random.Random, tries: int, tally: Tally) -> None:
    """``tries`` wrong tokens as another site's page sends them (the socket with a foreign
    Origin, the page marked cross-site), then the real token from the same address."""
    import websockets

    own = f"127.0.0.1:{server.port}"
    for i in range(tries):
        guess = secrets.token_urlsafe(draw.choice((8, 24, 32)))
        if i % 2:
            tally.tried("wrong token, foreign Origin")
            with contextlib.suppress(Exception):  # refused: a closed or refused handshake
                async with websockets.connect(
                    f"ws://{own}/ws?token={guess}",
                    additional_headers={"Origin": "http://evil.example"},
                ) as ws:
                    await asyncio.wait_for(ws.recv(), 1.0)
        else:
            tally.tried("wrong token, Sec-Fetch-Site: cross-site")
            await _request(server.port, _page(own, guess, "Sec-Fetch-Site: cross-site\r\n"))
    tally.tried("the real token after them (control)", 2)
    status, _ = await _request(server.port, _page(own, server.token))
    upgraded, _ = await _request(server.port, _upgrade(own, server.token))
    if status != 200 or upgraded != 101:
        tally.effect(
            f"after {tries} wrong tokens from another site's page the operator was refused "
            f"(page {status}, socket {upgraded})"
        )
    else:
        tally.notes.append(f"after {tries} foreign wrong tokens the real token still served")


async def attack_server(
    server: Server, draw: random.Random, idle: int, deadline: float, tally: Tally
) -> None:
    """Every attack of the probe at a cockpit listening on ``server``."""
    await _hosts(server, tally)
    await _foreign_page(server, draw, 60, tally)
    await _large(server, tally)
    await _idle(server.port, idle, deadline, tally)


async def _campaign(idle: int, seed: int, tally: Tally) -> None:
    from freelook.web import HEAD_TIMEOUT

    sim = ProcessUnderAttack(
        *("sim", "--no-browser", "--no-record", "--port", "0", "--world", "square"),
        *("--seed", str(seed)),
    )
    try:
        await asyncio.to_thread(sim.wait_line, "open http")
        found = _URL.search("".join(sim.lines))
        assert found is not None
        url = found.group(1)
        server = Server(int(url.split(":")[2].split("/")[0]), url.split("token=")[1])
        await attack_server(server, random.Random(seed), idle, HEAD_TIMEOUT + 3.0, tally)
    finally:
        for problem in sim.problems():
            tally.crash(f"sim: {problem}")
        sim.stop()


def attack_cockpit_server(idle: int, seed: int) -> Tally:
    """The HTTP server of one ``freelook sim`` process: Host headers, idle connections
    (``idle`` of them), large messages and another site's wrong tokens."""
    tally = Tally("cockpit server (HTTP)")
    asyncio.run(_campaign(idle, seed, tally))
    return tally
