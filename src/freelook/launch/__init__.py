"""Launchers: the processes of a session wired up. ``freelook sim`` (a simulated robot, its
operator station and the cockpit in one process, or a simulated fleet on Zenoh with its
stations), ``freelook operator`` (the station and cockpit for a robot elsewhere), and the
cockpit's web access (token, TLS, listening sockets) they share.

This is the one package that puts a robot (:mod:`freelook.hardware`) and an operator station
(:mod:`freelook.operator`) in one process; the station itself knows the robot only through
the link."""

from freelook.launch._fleet import fleet_names, run_fleet_operator, run_fleet_session
from freelook.launch._session import (
    SessionOptions,
    WebAccess,
    default_run_path,
    listen_web,
    recorded_line,
    run_operator,
    run_session,
    web_access,
)

__all__ = [
    "SessionOptions",
    "WebAccess",
    "default_run_path",
    "fleet_names",
    "listen_web",
    "recorded_line",
    "run_fleet_operator",
    "run_fleet_session",
    "run_operator",
    "run_session",
    "web_access",
]
