"""The cockpit web server: static front-end plus one binary WebSocket per browser.

Server → browser frames start with a kind byte: ``0x01`` JSON (UTF-8), ``0x02`` video
(float64 stamp, uint32 frame id, JPEG). Browser → server messages are JSON text. The app binds
to loopback by default; when it listens elsewhere an access token is required.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import struct
from importlib import resources
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from freelook.web._slots import BrowserSlot

__all__ = ["CockpitBackend", "create_app", "encode_frame", "encode_json"]

log = logging.getLogger(__name__)
_FRAME_HEADER = struct.Struct("<BdI")
MAX_INBOUND = 64 * 1024


def encode_json(message: dict[str, Any]) -> bytes:
    """A JSON message as a binary WebSocket frame."""
    return b"\x01" + json.dumps(message, separators=(",", ":")).encode()


def encode_frame(stamp: float, frame_id: int, jpeg: bytes) -> bytes:
    """A JPEG frame as a binary WebSocket frame (no recompression)."""
    return _FRAME_HEADER.pack(2, stamp, frame_id & 0xFFFFFFFF) + jpeg


class CockpitBackend(Protocol):
    """What the web server needs from the operator station."""

    def hello(self) -> dict[str, Any]:
        """The first message a browser gets: robot description, map, settings."""
        ...

    async def handle_browser(self, message: dict[str, Any], slot: BrowserSlot) -> None:
        """One JSON message from a browser."""

    def attach(self, slot: BrowserSlot) -> None:
        """Start feeding ``slot`` with state and frames."""

    def detach(self, slot: BrowserSlot) -> None:
        """Stop feeding ``slot`` (the browser went away)."""


def create_app(backend: CockpitBackend, token: str | None = None) -> Starlette:
    """The Starlette app serving the cockpit for ``backend``; ``token`` guards every route."""
    static_dir = resources.files("freelook.web") / "static"
    index_html = (static_dir / "index.html").read_text(encoding="utf-8")

    def authorised(params: Any) -> bool:
        if token is None:
            return True
        given = params.get("token", "")
        return hmac.compare_digest(str(given), token)

    async def index(request: Request) -> Response:
        if not authorised(request.query_params):
            return PlainTextResponse("access token required (?token=...)", status_code=403)
        return HTMLResponse(index_html, headers={"Cache-Control": "no-store"})

    async def websocket(ws: WebSocket) -> None:
        if not authorised(ws.query_params):
            await ws.close(code=4403)
            return
        await ws.accept()
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
                text = await ws.receive_text()
                if len(text) > MAX_INBOUND:
                    continue
                try:
                    message = json.loads(text)
                except json.JSONDecodeError:
                    log.warning("browser sent malformed JSON; ignored")
                    continue
                if isinstance(message, dict):
                    await backend.handle_browser(message, slot)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            slot.close()
            backend.detach(slot)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    with resources.as_file(static_dir) as static_path:
        static = StaticFiles(directory=str(static_path))
    return Starlette(
        routes=[
            Route("/", index),
            WebSocketRoute("/ws", websocket),
            Mount("/static", app=static, name="static"),
        ]
    )
