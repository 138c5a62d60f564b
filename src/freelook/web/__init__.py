"""The browser cockpit: Starlette app, WebSocket framing, access token, Origin and Host checks,
security headers, per-browser latest-value slots, the throttle on guessed tokens, and the
certificates a phone trusts the cockpit's HTTPS by (``freelook certs new``)."""

from freelook.web._app import (
    MAX_INBOUND,
    REFUSED_CLOSE_CODE,
    CockpitBackend,
    create_app,
    encode_error,
    encode_frame,
    encode_json,
    host_allowed,
    is_loopback,
    new_token,
    origin_allowed,
    three_dir,
)
from freelook.web._certs import CertificateSet, default_hosts, make_certificates
from freelook.web._serve import HEAD_TIMEOUT, MAX_CONNECTIONS, cockpit_server
from freelook.web._slots import BrowserSlot
from freelook.web._throttle import GuessThrottle
from freelook.web._video import VIDEO_KIND, encode_video_frame

__all__ = [
    "HEAD_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_INBOUND",
    "REFUSED_CLOSE_CODE",
    "VIDEO_KIND",
    "BrowserSlot",
    "CertificateSet",
    "CockpitBackend",
    "GuessThrottle",
    "cockpit_server",
    "create_app",
    "default_hosts",
    "encode_error",
    "encode_frame",
    "encode_json",
    "encode_video_frame",
    "host_allowed",
    "is_loopback",
    "make_certificates",
    "new_token",
    "origin_allowed",
    "three_dir",
]
