"""The browser cockpit: Starlette app, WebSocket framing, access token and Origin check,
per-browser latest-value slots, and the throttle on guessed tokens."""

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
from freelook.web._throttle import GuessThrottle

__all__ = [
    "REFUSED_CLOSE_CODE",
    "BrowserSlot",
    "CockpitBackend",
    "GuessThrottle",
    "create_app",
    "encode_error",
    "encode_frame",
    "encode_json",
    "is_loopback",
    "new_token",
    "origin_allowed",
    "three_dir",
]
