"""Teleoperation from a Foxglove client (sans-I/O): who may drive, and what they asked for.

A Foxglove client is anyone who can reach the bridge's port, so driving needs the station's
token, the same per-launch token the cockpit asks for. A client presents it by publishing
``{"token": "…"}`` (JSON) or a ``std_msgs/String`` holding it (CDR) on :data:`AUTH_TOPIC`;
from then on its ``geometry_msgs/Twist`` on :data:`TELEOP_TOPIC` (JSON, as Foxglove's Teleop
panel sends it, or CDR) drive the robot through the station's authenticated link session and
the robot's control arbitration. Everything else is refused with a reason: no token, a wrong
token, an unknown topic or encoding, a malformed or oversized message, a non-finite number.
A command holds for ``hold`` seconds (Foxglove's Teleop panel repeats at 1 Hz by default),
then the station sends a stop; the robot's own watchdog stays the last word.
"""

from __future__ import annotations

import hmac
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcap_ros2._dynamic import generate_dynamic

from freelook.link import VelocityCommand
from freelook.record import ros_schema
from freelook.web import GuessThrottle

__all__ = [
    "AUTH_TOPIC",
    "TELEOP_TOPIC",
    "Authenticated",
    "Drive",
    "Refused",
    "TeleopEvent",
    "TeleopGate",
]

AUTH_TOPIC = "/freelook/auth"
TELEOP_TOPIC = "/cmd_vel"
MAX_MESSAGE = 4096  # bytes; a Twist is 52 in CDR, about 100 in JSON
_TYPES = {AUTH_TOPIC: "std_msgs/String", TELEOP_TOPIC: "geometry_msgs/Twist"}


@dataclass(frozen=True, slots=True)
class Authenticated:
    client: int


@dataclass(frozen=True, slots=True)
class Refused:
    client: int
    reason: str
    guess: bool = False  # a wrong or throttled token: logged in aggregate, not one by one


@dataclass(frozen=True, slots=True)
class Drive:
    client: int
    command: VelocityCommand
    first: bool  # this client's first accepted command: the station starts transmitting


TeleopEvent = Authenticated | Refused | Drive


def _cdr_decoder(typename: str) -> Callable[[bytes], Any]:
    schema = ros_schema(typename)
    return generate_dynamic(schema.name, schema.text)[schema.name]


def _number(vector: object, axis: str) -> float | None:
    """``vector[axis]`` as a finite float (absent: 0), else None."""
    if not isinstance(vector, dict):
        return None
    x = vector.get(axis, 0.0)
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        return None
    return float(x)


class TeleopGate:
    """The Foxglove clients' channels, their authentication and the newest drive command."""

    def __init__(
        self, token: str, max_speed: float, max_turn_rate: float, hold: float = 1.5
    ) -> None:
        self._token = token.encode()
        self.max_speed = max_speed
        self.max_turn_rate = max_turn_rate
        self.hold = hold
        self._channels: dict[tuple[int, int], tuple[str, str]] = {}  # → (topic, encoding)
        self.authenticated: set[int] = set()
        self.driving: set[int] = set()  # clients whose commands were accepted
        self._latest: tuple[float, VelocityCommand] | None = None
        self._decoders = {name: _cdr_decoder(name) for name in set(_TYPES.values())}
        self.refused = 0
        #: wrong tokens per client: one over its budget is refused unchecked for a while
        self.guesses = GuessThrottle()

    def advertise(self, client: int, channel: int, topic: str, encoding: str) -> Refused | None:
        """A client channel; only the auth and teleop topics, in JSON or CDR, are taken."""
        if topic not in _TYPES:
            return self._refuse(client, f"topic {topic!r} is not taken (only {sorted(_TYPES)})")
        if encoding not in ("json", "cdr"):
            return self._refuse(client, f"encoding {encoding!r} is not taken (json or cdr)")
        self._channels[(client, channel)] = (topic, encoding)
        return None

    def unadvertise(self, client: int, channel: int) -> bool:
        """A channel went away (a client that disconnects unadvertises all of its channels);
        True when that was the client's teleop channel and it had driven: the station lets go."""
        found = self._channels.pop((client, channel), None)
        if found is None or found[0] != TELEOP_TOPIC:
            return False
        if any(c == client and t == TELEOP_TOPIC for (c, _), (t, _) in self._channels.items()):
            return False
        self.authenticated.discard(client)
        if client in self.driving:
            self.driving.discard(client)
            return True
        return False

    def message(self, client: int, channel: int, data: bytes, now: float) -> TeleopEvent:
        """One client message."""
        found = self._channels.get((client, channel))
        if found is None:
            return self._refuse(client, f"channel {channel} was not advertised")
        if len(data) > MAX_MESSAGE:
            return self._refuse(client, f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
        topic, encoding = found
        try:
            fields = self._decode(_TYPES[topic], encoding, data)
        except Exception as err:  # hostile bytes: any decoding failure is a refusal
            return self._refuse(client, f"malformed {topic} message ({type(err).__name__})")
        if topic == AUTH_TOPIC:
            return self._authenticate(client, fields, now)
        return self._drive(client, fields, now)

    def command(self, now: float) -> VelocityCommand | None:
        """The newest command while it holds; None once it has lapsed (send a stop)."""
        if self._latest is None or now - self._latest[0] > self.hold:
            return None
        return self._latest[1]

    # -- inside --------------------------------------------------------------------------------

    def _refuse(self, client: int, reason: str) -> Refused:
        self.refused += 1
        return Refused(client, reason)

    def _decode(self, typename: str, encoding: str, data: bytes) -> dict[str, Any]:
        if encoding == "json":
            value = json.loads(data)
            if not isinstance(value, dict):
                raise TypeError("not an object")
            return value
        decoded = self._decoders[typename](data)
        if typename == "std_msgs/String":
            return {"token": decoded.data}
        return {
            "linear": {"x": decoded.linear.x, "y": decoded.linear.y},
            "angular": {"z": decoded.angular.z},
        }

    def _authenticate(self, client: int, fields: dict[str, Any], now: float) -> TeleopEvent:
        source = f"client {client}"
        if self.guesses.blocked(source, now):
            self.refused += 1
            return Refused(client, "too many wrong tokens: wait a few seconds", guess=True)
        token = fields.get("token", fields.get("data"))
        if not isinstance(token, str) or len(token) > 256:
            return self._refuse(client, 'no token: publish {"token": ...} on ' + AUTH_TOPIC)
        if not hmac.compare_digest(token.encode(), self._token):
            self.authenticated.discard(client)
            self.guesses.failed(source, now)
            self.refused += 1
            return Refused(client, "wrong token: teleop refused", guess=True)
        self.authenticated.add(client)
        return Authenticated(client)

    def _drive(self, client: int, fields: dict[str, Any], now: float) -> TeleopEvent:
        if client not in self.authenticated:
            return self._refuse(
                client, f"teleop refused: not authenticated (present the token on {AUTH_TOPIC})"
            )
        v, omega = _number(fields.get("linear"), "x"), _number(fields.get("angular"), "z")
        if v is None or omega is None:
            return self._refuse(client, "teleop refused: linear.x and angular.z must be numbers")
        command = VelocityCommand(
            max(-self.max_speed, min(self.max_speed, v)),
            max(-self.max_turn_rate, min(self.max_turn_rate, omega)),
        )
        self._latest = (now, command)
        first = client not in self.driving
        self.driving.add(client)
        return Drive(client, command, first)
