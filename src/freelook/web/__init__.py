"""The browser cockpit: Starlette app, WebSocket framing, per-browser latest-value slots."""

from freelook.web._app import CockpitBackend, create_app, encode_frame, encode_json
from freelook.web._slots import BrowserSlot

__all__ = ["BrowserSlot", "CockpitBackend", "create_app", "encode_frame", "encode_json"]
