"""The browser cockpit: Starlette app, WebSocket framing, access token and Origin check,
per-browser latest-value slots."""

from freelook.web._app import (
    REFUSED_CLOSE_CODE,
    CockpitBackend,
    create_app,
    encode_error,
    encode_frame,
    encode_json,
    is_loopback,
    new_token,
    origin_allowed,
    three_dir,
)
from freelook.web._slots import BrowserSlot

__all__ = [
    "REFUSED_CLOSE_CODE",
    "BrowserSlot",
    "CockpitBackend",
    "create_app",
    "encode_error",
    "encode_frame",
    "encode_json",
    "is_loopback",
    "new_token",
    "origin_allowed",
    "three_dir",
]
