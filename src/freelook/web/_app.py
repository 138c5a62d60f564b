"""The cockpit web server: static front-end plus one binary WebSocket per browser.

Server → browser frames start with a kind byte: ``0x01`` JSON (UTF-8), ``0x02`` the driving
camera (float64 stamp, uint32 frame id, JPEG), ``0x03`` a further camera stream (uint8 stream,
uint8 layout: 0 mono, 1 stereo side by side; float64 stamp, uint32 frame id, JPEG); all
little-endian. Browser → server messages are JSON text; one that is
malformed or refused gets ``{"type": "error", "reason": ...}`` back and the socket stays open.
``{"type": "ping", "t": <number>}`` is answered here, at once, with ``{"type": "pong", "t": …,
"wire": …}`` ahead of any queued state or frame: the page times the round trip to know how far
behind it takes its messages in, and learns the station's wire clock (``wire``, s: the clock the
station's link stamps follow) to age the robot's frames by.

Access: every launch has a random token (:func:`new_token`). ``GET /`` (the cockpit) and
``GET /station`` (the virtual operator station) need it as
``?token=`` (then a cookie keeps a reload working); ``/ws`` needs it as ``?token=`` and, when
the browser sends an ``Origin``, that origin must be the server's own (scheme, host and port as
the browser sees them; ``127.0.0.1``, ``localhost`` and ``::1`` count as one host). A refused
socket is closed with code 4403 before anything is sent. The static files are the public
front-end code and need no token. Wrong tokens are counted per address (:class:`GuessThrottle`):
an address over its budget is refused unchecked for the rest of its window (HTTP 429, or the
close code) and refusals are logged in aggregate. What another site's page sends is refused
before its token is looked at and never counted (a socket from a foreign ``Origin``, a page
request the browser marks ``Sec-Fetch-Site: cross-site`` or ``same-site``), so no page can spend
the operator's budget and lock the cockpit out.

Every request's ``Host`` must be a name this server answers to (:func:`host_allowed`: an
address, a loopback name, this machine's name or one given): a DNS-rebinding page, whose
requests carry its own name, is refused with 421 even when it holds the token. Every response
carries a Content-Security-Policy (scripts from this server only, the pages' inline import map
and error handler by their hashes; no framing), ``X-Frame-Options: DENY``, ``Referrer-Policy:
no-referrer`` and ``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import ipaddress
import json
import logging
import math
import re
import secrets
import socket
import struct
import time
from collections.abc import Callable, Collection, Mapping
from html import unescape as html_unescape
from importlib import resources
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from freelook.web._slots import BrowserSlot
from freelook.web._throttle import GuessThrottle

__all__ = [
    "MAX_INBOUND",
    "REFUSED_CLOSE_CODE",
    "CockpitBackend",
    "create_app",
    "encode_error",
    "encode_frame",
    "encode_json",
    "host_allowed",
    "is_loopback",
    "new_token",
    "origin_allowed",
]

log = logging.getLogger(__name__)
_FRAME_HEADER = struct.Struct("<BdI")
_STREAM_HEADER = struct.Struct("<BBBdI")  # kind 3, stream, layout, stamp, frame id
MAX_INBOUND = 64 * 1024
#: WebSocket close code for a socket refused for its token or Origin (HTTP 403 + 4000).
REFUSED_CLOSE_CODE = 4403
_DEFAULT_PORT = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_LOOPBACK_NAMES = {"localhost", "localhost."}


def new_token() -> str:
    """A fresh random access token (192 bits, URL-safe), one per launch."""
    return secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_port(netloc: str, scheme: str) -> tuple[str, int] | None:
    parts = urlsplit(f"{scheme}://{netloc}")
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.hostname is None:
        return None
    return parts.hostname.lower(), port if port is not None else _DEFAULT_PORT.get(scheme, 0)


def origin_allowed(origin: str, host_header: str, secure: bool) -> bool:
    """Whether a browser's ``Origin`` is the server's own origin.

    The server's origin is what the browser used to reach it: ``http(s)://`` + the ``Host``
    header. Loopback names (``127.0.0.1``, ``localhost``, ``[::1]``) are one host when the
    scheme and port match.
    """
    scheme = "https" if secure else "http"
    parts = urlsplit(origin)
    if parts.scheme != scheme:
        return False
    theirs = _host_port(parts.netloc, scheme)
    ours = _host_port(host_header, scheme)
    if theirs is None or ours is None or theirs[1] != ours[1]:
        return False
    if theirs[0] == ours[0]:
        return True
    return is_loopback(theirs[0]) and is_loopback(ours[0])


def host_allowed(host_header: str, names: Collection[str]) -> bool:
    """Whether a request's ``Host`` names this server: an IP address (what a browser sends
    for a URL by address), a loopback name, or one of ``names`` (this machine's own). Another
    name is a DNS-rebinding page's: its name now resolves to this machine, but it is not one."""
    parts = urlsplit(f"http://{host_header}")
    try:
        parts.port  # noqa: B018 (a malformed port raises)
    except ValueError:
        return False
    name = parts.hostname
    if not name:
        return False
    if is_loopback(name):
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    return name.rstrip(".") in {n.lower().rstrip(".") for n in names}


def _machine_names() -> set[str]:
    """This machine's name, as a browser on the network may reach it (with mDNS's .local)."""
    name = socket.gethostname().lower()
    return {name, f"{name}.local"} if name else set()


_INLINE_SCRIPT = re.compile(r"<script type=\"importmap\">(.*?)</script>", re.S)
_INLINE_HANDLER = re.compile(r'\son\w+="([^"]*)"')


def _hash(source: str) -> str:
    digest = hashlib.sha256(source.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def content_policy(html: str) -> str:
    """The Content-Security-Policy of a page: scripts from this server, and the page's own
    inline import map and event handlers by their hashes (nothing else inline runs); images
    and media also from the page's blobs (camera frames); sockets to this server only."""
    hashes = [_hash(m) for m in _INLINE_SCRIPT.findall(html)]
    handlers = [_hash(html_unescape(m)) for m in _INLINE_HANDLER.findall(html)]
    script = " ".join(["'self'", *hashes, *(["'unsafe-hashes'", *handlers] if handlers else [])])
    return (
        f"default-src 'self'; script-src {script}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' blob: data:; media-src 'self' blob:; worker-src 'self' blob:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )


_SECURITY_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
)


class _Guard:
    """ASGI middleware in front of the app: the ``Host`` check, and the security headers on
    every HTTP response (a page's own Content-Security-Policy is set with the page)."""

    def __init__(self, app: ASGIApp, names: Collection[str]) -> None:
        self.app = app
        self.names = set(names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
        if not host_allowed(host, self.names):
            log.warning("cockpit: refused a request for host %r (not a name of this server)", host)
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": REFUSED_CLOSE_CODE})
                return
            await PlainTextResponse(
                "unknown host: open the cockpit by this machine's address or name",
                status_code=421,
            )(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *_SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers if scope["type"] == "http" else send)


def encode_json(message: dict[str, Any]) -> bytes:
    """A JSON message as a binary WebSocket frame."""
    return b"\x01" + json.dumps(message, separators=(",", ":")).encode()


def encode_error(reason: str) -> bytes:
    """The reply to a browser message that was malformed or refused."""
    return encode_json({"type": "error", "reason": reason})


def encode_frame(
    stamp: float, frame_id: int, jpeg: bytes, stream: int = 0, layout: int = 0
) -> bytes:
    """A JPEG frame as a binary WebSocket frame (no recompression): kind 0x02 for the driving
    camera (stream 0), 0x03 with the stream and layout for any other."""
    if stream == 0:
        return _FRAME_HEADER.pack(2, stamp, frame_id & 0xFFFFFFFF) + jpeg
    return _STREAM_HEADER.pack(3, stream, layout, stamp, frame_id & 0xFFFFFFFF) + jpeg


class CockpitBackend(Protocol):
    """What the web server needs from the operator station."""

    def hello(self) -> dict[str, Any]:
        """The first message a browser gets: robot description, map, settings."""
        ...

    async def handle_browser(self, message: dict[str, Any], slot: BrowserSlot) -> str | None:
        """One JSON message from a browser; a reason when it was refused, None when accepted."""

    def attach(self, slot: BrowserSlot) -> None:
        """Start feeding ``slot`` with state and frames."""

    def detach(self, slot: BrowserSlot) -> None:
        """Stop feeding ``slot`` (the browser went away)."""


def _pong(message: dict[str, Any], wire: float) -> bytes | None:
    """The answer to a page's ping (None: ``message`` is no ping), with the station's wire
    clock ``wire``; its ``t`` must be a finite number, else the answer is an error reply."""
    if message.get("type") != "ping":
        return None
    t = message.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        return encode_error(f"ping: t must be a finite number, got {t!r:.40}")
    return encode_json({"type": "pong", "t": t, "wire": wire})


def _parse_frame(frame: Mapping[str, Any]) -> dict[str, Any] | str:
    """A received frame's browser message, or why it is not one (a binary frame is refused
    with a reason like any malformed message, the socket kept)."""
    if frame["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(frame.get("code", 1000))
    text = frame.get("text")
    if text is None:
        return "binary frames are not accepted: send JSON text"
    return _parse(text)


def _parse(text: str) -> dict[str, Any] | str:
    """A browser message as a JSON object, or why it is not one."""
    if len(text) > MAX_INBOUND:
        return f"message too long ({len(text)} characters, limit {MAX_INBOUND})"
    try:
        message = json.loads(text)
    except json.JSONDecodeError as err:
        return f"malformed JSON: {err}"
    except RecursionError:
        return "malformed JSON: nested too deeply"
    if not isinstance(message, dict):
        return f"expected a JSON object, got {type(message).__name__}"
    return message


class _Access:
    """The token gate of the pages and the socket: who may open them, and the wrong tokens
    counted per address."""

    def __init__(self, token: str, guesses: GuessThrottle, clock: Callable[[], float]) -> None:
        self.token = token
        self.guesses = guesses
        self.clock = clock

    @staticmethod
    def cookie_name(connection: HTTPConnection) -> str:
        return f"freelook-token-{connection.url.port or 0}"  # one per port on a shared host

    def token_matches(self, given: object) -> bool:
        return isinstance(given, str) and hmac.compare_digest(given.encode(), self.token.encode())

    def refused(self, source: str, now: float) -> None:
        self.guesses.failed(source, now)
        line = self.guesses.report(now)
        if line is not None:
            log.warning("cockpit: %s", line)

    def page(self, request: Request, html: str, policy: str) -> Response:
        """``html`` (with its Content-Security-Policy ``policy``) for a request with the
        token (in the query or the cookie), else 403 (429 for an address over its budget of
        wrong tokens; 403 uncounted for a request another site's page made)."""
        source, now = _host(request), self.clock()
        if request.headers.get("sec-fetch-site") in ("cross-site", "same-site"):
            return PlainTextResponse(
                "the cockpit opens only from its own URL, not from another site's page",
                status_code=403,
            )
        if self.guesses.blocked(source, now):
            refused_line = self.guesses.report(now)
            if refused_line is not None:
                log.warning("cockpit: %s", refused_line)
            return PlainTextResponse(
                "too many wrong tokens from this address: wait a few seconds", status_code=429
            )
        given = request.query_params.get("token")
        if not self.token_matches(given) and not self.token_matches(
            request.cookies.get(self.cookie_name(request))
        ):
            self.refused(source, now)
            return PlainTextResponse(
                "access token required: open the URL freelook printed (…/?token=…)",
                status_code=403,
            )
        response = HTMLResponse(
            html, headers={"Cache-Control": "no-store", "Content-Security-Policy": policy}
        )
        if given is not None:  # a reload of the cleaned URL still finds the page
            response.set_cookie(
                self.cookie_name(request),
                self.token,
                httponly=True,
                samesite="strict",
                secure=request.url.scheme == "https",
            )
        return response

    def refusal(self, ws: WebSocket) -> str | None:
        """Why the socket ``ws`` is refused (its origin, its token), or None. A foreign
        origin is refused before the token is looked at: another site's page guesses nothing
        and spends no budget."""
        source, now = _host(ws), self.clock()
        origin = ws.headers.get("origin")
        if origin is not None and not origin_allowed(
            origin, ws.headers.get("host", ""), ws.url.scheme == "wss"
        ):
            return f"foreign origin {origin!r}"
        if self.guesses.blocked(source, now):
            return "too many wrong tokens"
        if not self.token_matches(ws.query_params.get("token")):
            self.refused(source, now)
            return "no valid token"
        return None


async def _serve_socket(
    ws: WebSocket, backend: CockpitBackend, wire_clock: Callable[[], float]
) -> None:
    """One browser's accepted socket: the hello, then state and frames out through its slot
    while its messages come in (a ping answered here), until it goes away."""
    log.info("cockpit socket opened by %s", _client(ws))
    slot = BrowserSlot()
    await ws.send_bytes(encode_json(backend.hello()))
    backend.attach(slot)

    async def sender() -> None:
        while not slot.closed:
            for payload in await slot.next():
                await ws.send_bytes(payload)

    task = asyncio.create_task(sender())
    try:
        while True:
            message = _parse_frame(await ws.receive())
            answer = _pong(message, wire_clock()) if isinstance(message, dict) else None
            if answer is not None:
                slot.offer_reply(answer)
                continue
            reason = (
                message if isinstance(message, str) else await backend.handle_browser(message, slot)
            )
            if reason is not None:  # through the slot: the sender task is the one writer
                slot.offer_reply(encode_error(reason))
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        slot.close()
        backend.detach(slot)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        log.info("cockpit socket closed (%s)", _client(ws))


def create_app(
    backend: CockpitBackend,
    token: str,
    *,
    throttle: GuessThrottle | None = None,
    clock: Callable[[], float] = time.monotonic,
    hosts: Collection[str] = (),
    wire_clock: Callable[[], float] = time.time,
) -> ASGIApp:
    """The ASGI app serving the cockpit for ``backend``; ``token`` guards ``/`` and ``/ws``;
    ``throttle`` counts wrong tokens per address (a default one when None); ``hosts``: names
    besides addresses, loopback and this machine's name that requests may carry in ``Host``
    (a DNS name the operators use); ``wire_clock``: the station's link stamps' clock, which
    each pong tells the page."""
    guesses = throttle if throttle is not None else GuessThrottle()
    if not token:
        raise ValueError("the cockpit needs an access token (see new_token())")
    access = _Access(token, guesses, clock)
    static_dir = resources.files("freelook.web") / "static"
    index_html = (static_dir / "index.html").read_text(encoding="utf-8")
    station_html = (static_dir / "station.html").read_text(encoding="utf-8")

    index_policy, station_policy = content_policy(index_html), content_policy(station_html)

    async def index(request: Request) -> Response:
        return access.page(request, index_html, index_policy)

    async def station(request: Request) -> Response:
        return access.page(request, station_html, station_policy)

    async def websocket(ws: WebSocket) -> None:
        why = access.refusal(ws)
        if why is not None:
            if why.startswith("foreign origin"):  # not a guess: said each time
                log.warning("cockpit socket refused to %s: %s", _client(ws), why)
            await ws.accept()  # accepted only to carry the close code the page can show
            await ws.close(code=REFUSED_CLOSE_CODE, reason="forbidden")
            return
        await ws.accept()
        await _serve_socket(ws, backend, wire_clock)

    with resources.as_file(static_dir) as static_path:
        static = StaticFiles(directory=str(static_path))
    app = Starlette(
        routes=[
            Route("/", index),
            Route("/station", station),  # the virtual operator station (WebXR, or a desktop room)
            WebSocketRoute("/ws", websocket),
            Mount("/static", app=static, name="static"),  # three.js too, in static/vendor/three
        ]
    )
    return _Guard(app, {*_machine_names(), *hosts})


def three_dir() -> Path:
    """The folder of the three.js the pages import, shipped inside the package (the npm
    package's build, copied at the version ``package-lock.json`` locks; its README says how to
    update it); served at ``/static/vendor/three/``."""
    return Path(__file__).resolve().parent / "static" / "vendor" / "three"


def _host(connection: HTTPConnection) -> str:
    """The address a request came from (its port changes with every connection)."""
    client = connection.client
    return client.host if client is not None else "unknown"


def _client(connection: HTTPConnection) -> str:
    client = connection.client
    return f"{client.host}:{client.port}" if client is not None else "unknown client"
