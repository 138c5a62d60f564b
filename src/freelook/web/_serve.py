"""The cockpit's HTTP server (uvicorn), bounded against clients that hold connections open.

uvicorn closes an idle keep-alive connection after a response, but not one that never sends a
request: 19,500 such connections held 19,500 descriptors. Here a connection has
:data:`HEAD_TIMEOUT` seconds to send its first request's head, then it is closed; WebSocket
messages are capped at the size a browser message may have before they are buffered (uvicorn's
default is 16 MiB); and at most :data:`MAX_CONNECTIONS` requests are served at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from freelook.web._app import MAX_INBOUND

__all__ = ["HEAD_TIMEOUT", "MAX_CONNECTIONS", "cockpit_server"]

#: s a new connection may take to send its first request's head (an idle or trickling client
#: is closed after that)
HEAD_TIMEOUT = 10.0
#: requests and sockets served at once; beyond, a request is answered 503
MAX_CONNECTIONS = 128


class _HeadDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline on the first request's head."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_deadline = self.loop.call_later(HEAD_TIMEOUT, self._head_overdue)

    def _head_overdue(self) -> None:
        if self.scope is None and not self.transport.is_closing():  # no request head yet
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_deadline.cancel()
        super().connection_lost(exc)


def cockpit_server(
    app: ASGIApp,
    host: str,
    port: int,
    *,
    certfile: Path | None = None,
    keyfile: Path | None = None,
) -> uvicorn.Server:
    """A uvicorn server for the cockpit ``app`` on ``host:port`` (TLS with both files)."""
    return uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            lifespan="off",
            http=_HeadDeadline,
            ws_per_message_deflate=False,
            ws_max_size=4 * MAX_INBOUND,  # UTF-8: a character of a browser message is ≤ 4 bytes
            limit_concurrency=MAX_CONNECTIONS,
            ssl_certfile=str(certfile) if certfile else None,
            ssl_keyfile=str(keyfile) if keyfile else None,
        )
    )
